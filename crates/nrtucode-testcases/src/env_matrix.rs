//! The environment matrix every conformance test covers: values of `NEURON_UCODE_FLAVOR` and of
//! `NRTUCODE_MPLUS_ON_MARIANA` (`None` = unset), chosen at the edges of the vendor's byte
//! comparisons.

/// Values of `NEURON_UCODE_FLAVOR`: unset, empty, the four accepted spellings and near misses
/// (case, trailing space, digits), non-UTF-8 bytes, and a 4 KiB string.
pub fn flavor_values() -> Vec<Option<Vec<u8>>> {
    let fixed: [&[u8]; 12] = [
        b"",
        b"debug",
        b"DEBUG",
        b"Debug",
        b"test",
        b"TEST",
        b"Test",
        b"perf",
        b"2",
        b"debug ",
        b"\xffdebug",
        b"\xff\xfedebug\x80",
    ];
    let mut long = b"test".to_vec();
    long.resize(4096, b'x');
    std::iter::once(None)
        .chain(fixed.iter().map(|v| Some(v.to_vec())))
        .chain(std::iter::once(Some(long)))
        .collect()
}

/// Values of `NRTUCODE_MPLUS_ON_MARIANA`: only `1` trips the removed flag.
pub const REMOVED_FLAG_VALUES: [Option<&[u8]>; 7] = [
    None,
    Some(b""),
    Some(b"1"),
    Some(b"0"),
    Some(b"11"),
    Some(b"10"),
    Some(b"1 "),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_covers_unset_long_non_utf8_values_and_the_one_tripping_flag() {
        let flavors = flavor_values();
        assert_eq!(flavors.len(), 14);
        assert!(flavors.contains(&None));
        assert!(flavors.iter().flatten().any(|v| v.len() == 4096));
        assert!(
            flavors
                .iter()
                .flatten()
                .any(|v| std::str::from_utf8(v).is_err())
        );
        assert_eq!(
            REMOVED_FLAG_VALUES
                .iter()
                .filter(|v| **v == Some(b"1"))
                .count(),
            1
        );
    }
}
