//! [`pack`]: the vendor's tables and the blobs, laid out and signed.

use nrtucode::partition::TableClass;
use nrtucode::partition::format::*;
use nrtucode_facts::facts::FRONT_FEATURES;
use nrtucode_facts::hex::lower_hex;
use nrtucode_facts::plan::{self, BlobProvider, Slice, SourcedBlob, Tables};
use nrtucode_facts::{Getter, getters, shape};
use sha2::{Digest, Sha256};

use nrtucode_deflate::{Codec, Summary};

use crate::blobs::{BlobSourceId, Blobs};
use crate::error::PackError;
use crate::keys::SigningKey;

/// How the blobs are kept (`nrtucode pack --compress`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Compression {
    /// Every blob stored as is (codec 0).
    #[default]
    Stored,
    /// Each blob as raw deflate (codec 1) where that saves a 16-byte unit, stored otherwise
    /// (`nrtucode_deflate::encode_blob`: the best level, checked with the device's decoder).
    /// A blob a cursor points into is always stored: the cursor's answer is an address in its
    /// bytes in place.
    Deflate,
}

/// How to pack.
#[derive(Clone, Copy, Debug, Default)]
pub struct PackOptions<'k> {
    /// The security counter in the header: a reader's policy refuses a lower one.
    pub security_counter: u32,
    /// The signing key; `None` writes an unsigned partition, which a reader accepts only
    /// through `insecure_trust_unsigned` (feature `insecure-unsigned`).
    pub key: Option<&'k SigningKey>,
}

/// The facts' getters served from [`Blobs`], checked against the facts' sizes.
struct FromBlobs<'b>(&'b Blobs);

impl BlobProvider for FromBlobs<'_> {
    fn blob_of(&mut self, getter: &Getter) -> Result<Option<SourcedBlob>, String> {
        let bytes = self
            .0
            .get(getter.symbol)
            .ok_or_else(|| format!("{}: no blob for this getter", getter.symbol))?;
        if bytes.len() != getter.size {
            return Err(format!(
                "{}: {} bytes, the facts say {}",
                getter.symbol,
                bytes.len(),
                getter.size
            ));
        }
        let sha256: [u8; 32] = Sha256::digest(bytes).into();
        Ok(Some(SourcedBlob {
            key: lower_hex(&sha256),
            path: getter.symbol.to_owned(),
            sha256: Some(sha256),
        }))
    }

    fn check_cursor(&self, getter: &Getter) -> Result<(), String> {
        match self.0.get(getter.symbol) {
            Some([]) => Ok(()),
            Some(_) => Err(format!("{}: a cursor with bytes", getter.symbol)),
            None => Err(format!("{}: no entry for this cursor", getter.symbol)),
        }
    }
}

/// The getter of a generated [`Slice`], as the format stores it.
fn getter(slice: Slice) -> Result<[u8; GETTER_LEN], PackError> {
    let (kind, n) = match slice {
        Slice::Null => (GETTER_NULL, 0),
        Slice::Whole(n) => (GETTER_BLOB, n),
        Slice::StartOf(n) => (GETTER_CURSOR_START, n),
        Slice::EndOf(n) => (GETTER_CURSOR_END, n),
    };
    let n = u16::try_from(n).map_err(|_| PackError::TooLarge("more than 65535 blobs"))?;
    let [lo, hi] = n.to_le_bytes();
    Ok([kind, 0, lo, hi])
}

fn u32_of(n: usize, what: &'static str) -> Result<u32, PackError> {
    u32::try_from(n).map_err(|_| PackError::TooLarge(what))
}

/// Packs `blobs` into a partition: the header, the vendor's `image_list` (slots, descriptors
/// with their flavor keys in table order, four getters each), the `hwdecode_table_list`, one
/// table-of-contents entry per distinct blob (SHA-256 of its bytes), the signature over all of
/// that, then the blobs, 16-byte aligned.
pub fn pack(blobs: &Blobs, options: &PackOptions<'_>) -> Result<Vec<u8>, PackError> {
    pack_with(blobs, options, Compression::Stored).map(|(bytes, _)| bytes)
}

/// [`pack`], keeping the blobs as `compression` says; also returns what compression did (every
/// distinct blob added up: how many were kept as deflate, bytes before and after). The table of
/// contents records, per blob, the stored and decoded lengths, the codec, the SHA-256 of the
/// decoded bytes and the SHA-256 of the stored bytes.
pub fn pack_with(
    blobs: &Blobs,
    options: &PackOptions<'_>,
    compression: Compression,
) -> Result<(Vec<u8>, Summary), PackError> {
    let facts = getters();
    let class = blobs.class;
    let enabled = |feature: &str| class == TableClass::Full || FRONT_FEATURES.contains(&feature);
    let tables: Tables = plan::plan(&facts, enabled, &mut FromBlobs(blobs), true)
        .map_err(|problems| PackError::Facts(problems.join("\n")))?;

    // image_list, descriptors and hwdecode_table_list, in the vendor's order: the shape the
    // core's const tables are generated from (`nrtucode_facts::shape`).
    let shape = shape::slots().map_err(PackError::Facts)?;
    let mut slots = Vec::with_capacity(SLOT_COUNT * SLOT_LEN);
    let mut descs = Vec::new();
    let mut desc_count = 0usize;
    let mut prof = Vec::with_capacity(SLOT_COUNT * PROF_LEN);
    for slot in &shape {
        let first = if slot.descriptors.is_empty() {
            0
        } else {
            desc_count
        };
        let (first16, count16) = (
            u16::try_from(first).map_err(|_| PackError::TooLarge("descriptors"))?,
            u16::try_from(slot.descriptors.len())
                .map_err(|_| PackError::TooLarge("descriptors"))?,
        );
        slots.extend(first16.to_le_bytes());
        slots.extend(count16.to_le_bytes());
        for desc in &slot.descriptors {
            let regions = tables.images.get(&desc.image).ok_or_else(|| {
                PackError::Facts(format!("{}: no getters in the facts", desc.image))
            })?;
            descs.extend(
                i32::try_from(desc.key)
                    .map_err(|_| PackError::TooLarge("flavor key"))?
                    .to_le_bytes(),
            );
            for slice in regions {
                descs.extend(getter(*slice)?);
            }
            desc_count += 1;
        }
        let pair = slot
            .profiler
            .as_ref()
            .and_then(|image| tables.profilers.get(image))
            .copied()
            .unwrap_or_default();
        for slice in pair {
            prof.extend(getter(slice)?);
        }
    }

    let toc_count = tables.blobs.len();
    if toc_count > MAX_TOC {
        return Err(PackError::TooLarge(
            "more table-of-contents entries than the format allows",
        ));
    }
    if desc_count > MAX_DESCRIPTORS {
        return Err(PackError::TooLarge(
            "more descriptors than the format allows",
        ));
    }
    let [prof_off, toc_off, _, blobs_off] =
        layout(desc_count, toc_count).ok_or(PackError::TooLarge("tables"))?;

    // Blob offsets, and the table of contents.
    let mut toc = Vec::with_capacity(toc_count * TOC_LEN);
    let mut at = blobs_off;
    let mut placed: Vec<(usize, std::borrow::Cow<'_, [u8]>)> = Vec::with_capacity(toc_count);
    let mut summary = Summary::default();
    let mut decoded_total = 0usize;
    // A cursor's answer is an address at a boundary of its blob's bytes in place, which only a
    // stored blob has (a reader refuses a cursor onto a compressed one): its blob stays stored.
    let cursor_targets: std::collections::BTreeSet<usize> = tables
        .images
        .values()
        .flatten()
        .filter_map(|slice| match *slice {
            Slice::StartOf(n) | Slice::EndOf(n) => Some(n),
            Slice::Null | Slice::Whole(_) => None,
        })
        .collect();
    for (n, blob) in tables.blobs.iter().enumerate() {
        let bytes = blobs
            .get(&blob.path)
            .ok_or_else(|| PackError::Facts(format!("{}: no bytes", blob.path)))?;
        let sha256 = blob
            .sha256
            .ok_or_else(|| PackError::Facts("no digest".into()))?;
        let (codec, stored): (u8, std::borrow::Cow<'_, [u8]>) = match compression {
            Compression::Stored => (CODEC_STORED, bytes.into()),
            Compression::Deflate if cursor_targets.contains(&n) => {
                summary.blobs += 1;
                summary.decoded_bytes += bytes.len();
                summary.stored_bytes += bytes.len();
                (CODEC_STORED, bytes.into())
            }
            Compression::Deflate => {
                let encoded = nrtucode_deflate::encode_blob(bytes)
                    .map_err(|e| PackError::Facts(format!("{}: {e}", blob.path)))?;
                summary.add(&encoded);
                match encoded.codec() {
                    Codec::Stored => (CODEC_STORED, bytes.into()),
                    Codec::Deflate => (CODEC_DEFLATE, encoded.stored(bytes).to_vec().into()),
                }
            }
        };
        if bytes.len() > MAX_BLOB_LEN {
            return Err(PackError::TooLarge("a blob over 1 MiB (MAX_BLOB_LEN)"));
        }
        decoded_total += bytes.len();
        if decoded_total > MAX_DECODED_TOTAL {
            return Err(PackError::TooLarge(
                "blobs adding up to more than 64 MiB (MAX_DECODED_TOTAL)",
            ));
        }
        let stored_sha256: [u8; 32] = match codec {
            CODEC_STORED => sha256,
            _ => Sha256::digest(&stored).into(),
        };
        toc.extend(u32_of(at, "a partition over 4 GiB")?.to_le_bytes());
        let decoded = u32_of(bytes.len(), "a blob over 4 GiB")?;
        toc.extend(u32_of(stored.len(), "a blob over 4 GiB")?.to_le_bytes());
        toc.extend(decoded.to_le_bytes());
        toc.extend([codec, 0, 0, 0]);
        toc.extend(sha256); // of the decoded bytes, whatever the codec
        toc.extend(stored_sha256); // of the bytes as stored: what a reader checks first
        let end = at + stored.len();
        placed.push((at, stored));
        at = align_up(end).ok_or(PackError::TooLarge("partition"))?;
    }
    let total = if toc_count == 0 { blobs_off } else { at };

    let mut out = vec![0u8; total];
    let mut put =
        |offset: usize, bytes: &[u8]| out[offset..offset + bytes.len()].copy_from_slice(bytes);
    put(H_MAGIC, &MAGIC);
    put(H_VERSION, &VERSION.to_le_bytes());
    put(H_HEADER_LEN, &(HEADER_LEN as u16).to_le_bytes());
    put(
        H_TOTAL_LEN,
        &u32_of(total, "a partition over 4 GiB")?.to_le_bytes(),
    );
    put(H_BLOBS_OFF, &u32_of(blobs_off, "tables")?.to_le_bytes());
    put(H_SECURITY_COUNTER, &options.security_counter.to_le_bytes());
    put(H_CLASS, &[class.raw()]);
    let (source, id): (u8, &[u8]) = match &blobs.source {
        BlobSourceId::BuildId(id) => (SOURCE_BUILD_ID, id),
        BlobSourceId::NoBuildId => (SOURCE_NO_BUILD_ID, &[]),
        BlobSourceId::Fixtures => (SOURCE_FIXTURES, FIXTURES_ID),
    };
    if id.len() > BUILD_ID_MAX {
        return Err(PackError::TooLarge("a build ID over 32 bytes"));
    }
    put(H_SOURCE, &[source]);
    put(H_BUILD_ID_LEN, &[id.len() as u8]);
    put(H_BUILD_ID, id);
    put(H_SLOT_COUNT, &(SLOT_COUNT as u16).to_le_bytes());
    put(H_DESC_COUNT, &(desc_count as u16).to_le_bytes());
    put(H_PROF_COUNT, &(SLOT_COUNT as u16).to_le_bytes());
    put(H_TOC_COUNT, &(toc_count as u16).to_le_bytes());
    put(SLOTS_OFF, &slots);
    put(DESCS_OFF, &descs);
    put(prof_off, &prof);
    put(toc_off, &toc);
    for (offset, bytes) in &placed {
        put(*offset, bytes);
    }
    if let Some(key) = options.key {
        sign_partition(&mut out, key)?;
    }
    Ok((out, summary))
}

/// Signs the partition `bytes` in place with `key`, as [`pack`] does: sets the signed flag and
/// the key's ID in the header, then writes the signature of every byte before the signature
/// block into it. Only the header's counts are read (for where the signature block is), so a
/// tool or a test that changed a packed partition's signed bytes, even into a partition the
/// reader refuses, can sign it again. [`PackError::NotAPartition`] when the bytes are shorter
/// than the header or than the layout its counts give.
pub fn sign_partition(bytes: &mut [u8], key: &SigningKey) -> Result<(), PackError> {
    let count = |bytes: &[u8], at: usize| {
        let field = bytes
            .get(at..at + 2)
            .ok_or(PackError::NotAPartition("a short header"))?;
        Ok::<_, PackError>(usize::from(u16::from_le_bytes([field[0], field[1]])))
    };
    let (descs, blobs) = (count(bytes, H_DESC_COUNT)?, count(bytes, H_TOC_COUNT)?);
    let [_, _, sig_off, _] =
        layout(descs, blobs).ok_or(PackError::NotAPartition("counts whose layout overflows"))?;
    // The layout starts after the header, so a partition this long holds the header too.
    if bytes.len() < sig_off + SIG_LEN {
        return Err(PackError::NotAPartition(
            "shorter than its signature block's end",
        ));
    }
    let f = &bytes[H_FLAGS..H_FLAGS + 4];
    let flags = u32::from_le_bytes([f[0], f[1], f[2], f[3]]);
    bytes[H_FLAGS..H_FLAGS + 4].copy_from_slice(&(flags | FLAG_SIGNED).to_le_bytes());
    bytes[H_KEY_ID..H_KEY_ID + 8].copy_from_slice(&key.public_key().key_id());
    let signature = key.sign(&bytes[..sig_off]);
    bytes[sig_off..sig_off + SIG_LEN].copy_from_slice(&signature);
    Ok(())
}

#[cfg(test)]
mod tests {
    use nrtucode::partition::{Codec, Getter, Partition};

    use super::*;

    /// Blobs that all compress (a distinct 24-byte head, then zeros): every blob a cursor
    /// points into stays stored, the others are kept as deflate, and the reader, which refuses a
    /// cursor onto a compressed blob, accepts the pack.
    #[test]
    fn a_blob_a_cursor_points_into_stays_stored() {
        for class in [TableClass::Full, TableClass::Front] {
            let blobs = Blobs::fixtures(class).map_contents(|content| {
                let mut zeros = vec![0; content.len()];
                let head = content.len().min(24);
                zeros[..head].copy_from_slice(&content[..head]);
                zeros
            });
            let options = PackOptions {
                security_counter: 1,
                key: None,
            };
            let (bytes, summary) = pack_with(&blobs, &options, Compression::Deflate).unwrap();
            let p = Partition::parse(&bytes).expect("the reader accepts the pack");
            let tables = p.untrusted_tables();
            let mut cursors = 0;
            for idx in 0..SLOT_COUNT as u32 {
                for (key, regions) in tables.descriptors(idx) {
                    for g in regions.into_iter().flatten() {
                        if let Getter::CursorStart(blob) | Getter::CursorEnd(blob) = g {
                            cursors += 1;
                            let entry = tables.toc_entry(blob).unwrap();
                            assert_eq!(entry.codec, Codec::Stored, "slot {idx} key {key}");
                        }
                    }
                }
            }
            assert!(cursors > 0, "{class:?}: the facts' cursors");
            assert!(
                summary.compressed > 0 && summary.compressed < summary.blobs,
                "{class:?}: {summary}"
            );
            assert_eq!(summary.blobs, p.blob_count());
        }
    }

    /// Signing an unsigned pack gives the signed pack's very bytes, and it verifies; bytes not
    /// laid out as a partition are refused, untouched.
    #[test]
    fn signing_in_place_is_what_pack_does() {
        use nrtucode::partition::{Policy, TrustError};
        let key = SigningKey::generate();
        let blobs = Blobs::fixtures(TableClass::Front);
        let pack_as = |key| {
            let options = PackOptions {
                security_counter: 2,
                key,
            };
            pack(&blobs, &options).unwrap()
        };
        let (signed, mut unsigned) = (pack_as(Some(&key)), pack_as(None));
        assert_ne!(signed, unsigned);
        sign_partition(&mut unsigned, &key).unwrap();
        assert_eq!(signed, unsigned);
        let policy = Policy {
            min_security_counter: 2,
            expected_class: TableClass::Front,
        };
        let parsed = Partition::parse(&unsigned).unwrap();
        assert!(parsed.verify(&key.public_key(), &policy).is_ok());
        // Signed again by another key: that key's ID, and only that key verifies it.
        let other = SigningKey::generate();
        sign_partition(&mut unsigned, &other).unwrap();
        let parsed = Partition::parse(&unsigned).unwrap();
        assert!(parsed.verify(&other.public_key(), &policy).is_ok());
        let refused = parsed.verify(&key.public_key(), &policy);
        assert!(matches!(refused, Err(TrustError::UnknownKey { .. })));

        for (bytes, why) in [
            (&signed[..H_TOC_COUNT + 1], "a short header"),
            (
                &signed[..HEADER_LEN + 8],
                "shorter than its signature block's end",
            ),
        ] {
            let mut bytes = bytes.to_vec();
            let before = bytes.clone();
            match sign_partition(&mut bytes, &key) {
                Err(PackError::NotAPartition(reason)) => assert_eq!(reason, why),
                other => panic!("{why}: {other:?}"),
            }
            assert_eq!(bytes, before, "{why}: nothing written");
        }
        // The largest counts: the signature block far past the bytes, refused as such.
        let mut beyond = signed.clone();
        beyond[H_TOC_COUNT..H_TOC_COUNT + 2].copy_from_slice(&u16::MAX.to_le_bytes());
        assert!(matches!(
            sign_partition(&mut beyond, &key),
            Err(PackError::NotAPartition(
                "shorter than its signature block's end"
            ))
        ));
    }
}
