//! Criterion: wall time of one pass over each path's input mix (`nrtucode_bench::paths`).
//! Per-call time is the pass time divided by the mix length; `scripts/bench.sh` prints it with
//! the ratios to the C look-alike and to the dense-array ideal.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use nrtucode_bench::paths;

fn lookup(c: &mut Criterion) {
    let mut group = c.benchmark_group("lookup");
    for path in paths::ALL {
        group.throughput(Throughput::Elements(path.calls as u64));
        group.bench_function(path.name, |b| b.iter(path.run));
    }
    group.finish();
}

criterion_group!(benches, lookup);
criterion_main!(benches);
