//! Criterion: wall time of one pass over each path's input mix (`nrtucode_bench::paths`).
//! Per-call time is the pass time divided by the mix length; the report binary (`src/bin/report`) prints it with
//! the ratios to the C look-alike and to the dense-array ideal.

#![allow(unsafe_code)] // the paths' `# Safety`: nothing here modifies the environment

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use nrtucode_bench::paths;

fn lookup(c: &mut Criterion) {
    let mut group = c.benchmark_group("lookup");
    for path in paths::ALL {
        group.throughput(Throughput::Elements(path.calls as u64));
        // SAFETY: this benchmark never modifies the process environment, and criterion runs
        // the closure on this one thread.
        group.bench_function(path.name, |b| b.iter(|| unsafe { (path.run)() }));
    }
    group.finish();
}

criterion_group!(benches, lookup);
criterion_main!(benches);
