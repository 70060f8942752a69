//! Writes the partition conformance set (`docs/partition.md`, "The conformance set") into a
//! directory: the partitions, `cases.tsv` (each file's expected verdict, step and reason),
//! `requests.tsv` (requests to the valid ones and their answers) and `public-key.hex` (the
//! test key they are signed with). Usage:
//! `cargo run -p nrtucode-conformance --bin partition-conformance-set -- DIR`.

use std::path::Path;
use std::process::ExitCode;

use nrtucode_conformance::partition_set::{
    cases, cases_tsv, public_key_hex, requests, requests_tsv,
};

fn write(dir: &Path) -> std::io::Result<(usize, usize)> {
    std::fs::create_dir_all(dir)?;
    let cases = cases();
    for case in &cases {
        std::fs::write(dir.join(case.name), &case.bytes)?;
    }
    std::fs::write(dir.join("cases.tsv"), cases_tsv(&cases))?;
    let requests = requests();
    std::fs::write(dir.join("requests.tsv"), requests_tsv(&requests))?;
    std::fs::write(dir.join("public-key.hex"), public_key_hex() + "\n")?;
    Ok((cases.len(), requests.len()))
}

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(dir), None) = (args.next(), args.next()) else {
        eprintln!("usage: partition-conformance-set DIR");
        return ExitCode::from(64);
    };
    let dir = Path::new(&dir);
    match write(dir) {
        Ok((cases, requests)) => {
            println!(
                "{}: {cases} partitions (cases.tsv), {requests} requests (requests.tsv), public-key.hex",
                dir.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("partition-conformance-set: {}: {e}", dir.display());
            ExitCode::FAILURE
        }
    }
}
