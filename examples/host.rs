//! A host runtime resolving images with the live process environment (`StdEnv`).
//!
//! ```text
//! cargo run --example host --features std
//! NEURON_UCODE_FLAVOR=debug cargo run --example host --features std
//! NRTUCODE_MPLUS_ON_MARIANA=1 cargo run --example host --features std   # code 8
//! ```

use nrtucode::{Flavor, ImageIndex, ProfKind, Region, StdEnv, resolve_hwdecode, resolve_image};

fn main() -> std::process::ExitCode {
    let flavor_var = std::env::var_os("NEURON_UCODE_FLAVOR");
    println!(
        "NEURON_UCODE_FLAVOR={:?}: auto flavor resolves per call, byte for byte",
        flavor_var
    );
    let regions: String = Region::ALL.iter().map(|r| format!(" {r:>9}")).collect();
    println!("{:>3}  {:<24}{regions}  profiler", "idx", "slot");
    let mut worst = 0;
    for idx in ImageIndex::ALL {
        let name = match idx.slot() {
            Some(id) => id.to_string(),
            None => "(empty)".to_owned(),
        };
        let cells: Vec<String> = Region::ALL
            .into_iter()
            .map(
                |region| match resolve_image(idx, region, Flavor::Auto, &StdEnv) {
                    Ok(bytes) => bytes.len().to_string(),
                    Err(e) => {
                        worst = worst.max(e.code());
                        format!("code {}", e.code())
                    }
                },
            )
            .collect();
        let profiler = match (
            resolve_hwdecode(idx, ProfKind::Cam),
            resolve_hwdecode(idx, ProfKind::Table),
        ) {
            (Ok(cam), Ok(table)) => format!("CAM {} + TABLE {}", cam.len(), table.len()),
            (Err(e), _) | (_, Err(e)) => format!("code {}", e.code()),
        };
        println!(
            "{:>3}  {name:<24} {:>9} {:>9} {:>9} {:>9}  {profiler}",
            idx.raw(),
            cells[0],
            cells[1],
            cells[2],
            cells[3]
        );
    }
    if worst == 8 {
        eprintln!("host: the removed flag is set; unset NRTUCODE_MPLUS_ON_MARIANA");
        return std::process::ExitCode::from(8);
    }
    std::process::ExitCode::SUCCESS
}
