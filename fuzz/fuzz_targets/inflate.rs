//! Fuzzes the device-side deflate decoder (`nrtucode::deflate::decode_checked`) two ways:
//!
//! - the input as a stored blob, with a decoded length, a buffer length and a digest taken
//!   from its first bytes: whatever the bytes, a typed error or the claimed bytes, never a
//!   panic (miniz_oxide's inflater keeps bounds checks the no-panic link check cannot prove
//!   dead: this is where they would fire), nothing written past the decoded length, and on an
//!   error nothing left behind;
//! - the input as a blob, compressed by the packer (`nrtucode_deflate::encode_blob`, which
//!   decodes it back itself) and decoded again: the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nrtucode::deflate::{Inflater, decode_checked};
use sha2::{Digest, Sha256};

const GUARD: u8 = 0xa5;

fuzz_target!(|data: &[u8]| {
    let mut inflater = Box::new(Inflater::new());
    // As a stored blob: [decoded_len: u16][spare: u8][digest selector: u8] then the stream.
    if let [a, b, spare, selector, stream @ ..] = data {
        let decoded_len = usize::from(u16::from_le_bytes([*a, *b]));
        let room =
            decoded_len.saturating_sub(usize::from(*spare & 0x80)) + usize::from(*spare & 0x7f);
        let mut out = vec![GUARD; room];
        // Odd selector: the digest of what a plain inflate gives (so that Ok is reachable).
        let reference = miniz_oxide::inflate::decompress_to_vec(stream).ok();
        let digest: [u8; 32] = match (&reference, selector & 1) {
            (Some(bytes), 1) => Sha256::digest(bytes).into(),
            _ => [*selector; 32],
        };
        match decode_checked(stream, decoded_len, &digest, &mut out, &mut inflater) {
            Ok(bytes) => {
                assert_eq!(bytes.len(), decoded_len);
                assert_eq!(Some(bytes), reference.as_deref());
            }
            Err(nrtucode::deflate::DecodeError::BufferTooSmall { needed, available }) => {
                assert_eq!((needed, available), (decoded_len, room));
                assert!(out.iter().all(|&b| b == GUARD));
            }
            Err(_) => assert!(out.iter().all(|&b| b == 0 || b == GUARD)),
        }
        if let Some(past) = out.get(decoded_len..) {
            assert!(
                past.iter().all(|&b| b == GUARD),
                "written past the decoded length"
            );
        }
    }
    // As a blob: what the packer keeps decodes back.
    let encoded = nrtucode_deflate::encode_blob(data).expect("the packer's stream decodes back");
    if encoded.codec() == nrtucode_deflate::Codec::Deflate {
        let mut out = vec![0u8; data.len()];
        let bytes = decode_checked(
            encoded.stored(data),
            data.len(),
            encoded.sha256(),
            &mut out,
            &mut inflater,
        )
        .expect("decodes");
        assert_eq!(bytes, data);
    } else {
        assert_eq!(encoded.stored(data), data);
    }
});
