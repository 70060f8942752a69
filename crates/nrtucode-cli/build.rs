//! Tells the golden tests whether the core embeds its built-in fixtures. With
//! `NRTUCODE_BLOB_DIR` set (the core then embeds that directory's blobs) the outputs the golden
//! files record cannot be reproduced, so those tests are `#[ignore]`d under
//! `cfg(nrtucode_blob_dir)` instead of passing without comparing anything.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(nrtucode_blob_dir)");
    println!("cargo::rerun-if-env-changed=NRTUCODE_BLOB_DIR");
    if std::env::var_os("NRTUCODE_BLOB_DIR").is_some_and(|dir| !dir.is_empty()) {
        println!("cargo::rustc-cfg=nrtucode_blob_dir");
    }
}
