//! `catalog::BLOB_ORIGIN` names what this build embeds: `fixtures`, or the GNU BuildID the
//! blob directory's manifest records (CI runs this with a carved `NRTUCODE_BLOB_DIR` too).

use nrtucode::catalog::{BLOB_ORIGIN, BLOB_SOURCE, BlobSource};

#[test]
fn the_origin_names_the_blob_source() {
    match option_env!("NRTUCODE_BLOB_DIR").filter(|d| !d.is_empty()) {
        None => {
            assert_eq!(BLOB_SOURCE, BlobSource::Fixtures);
            assert_eq!(BLOB_ORIGIN, "fixtures");
        }
        Some(dir) => {
            let manifest = std::fs::read_to_string(std::path::Path::new(dir).join("manifest.tsv"))
                .expect("the blob directory's manifest");
            let build_id = manifest
                .lines()
                .find_map(|l| l.strip_prefix("# build_id\t"))
                .expect("a build_id line");
            assert_eq!(BLOB_SOURCE, BlobSource::Directory);
            assert_eq!(BLOB_ORIGIN, build_id);
        }
    }
}
