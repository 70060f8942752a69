//! The UF2 family IDs `--uf2-family` knows by name: a subset of Microsoft's registry
//! (`uf2families.json` of the UF2 repository), the IDs checked against the copy the
//! `adafruit-uf2` package ships by the CLI's test `flash_formats_third_party`.

/// (name, family ID): the registry's short name in lower case with `-` for `_`.
pub(crate) const KNOWN: &[(&str, u32)] = &[
    ("rp2040", 0xe48bff56),          // Raspberry Pi RP2040
    ("rp2xxx-absolute", 0xe48bff57), // Raspberry Pi Microcontrollers: Absolute (unpartitioned) download
    ("rp2xxx-data", 0xe48bff58),     // Raspberry Pi Microcontrollers: Data partition download
    ("rp2350-arm-s", 0xe48bff59),    // Raspberry Pi RP2350, Secure Arm image
    ("rp2350-riscv", 0xe48bff5a),    // Raspberry Pi RP2350, RISC-V image
    ("rp2350-arm-ns", 0xe48bff5b),   // Raspberry Pi RP2350, Non-secure Arm image
    ("nrf52", 0x1b57745f),           // Nordic NRF52
    ("nrf52820", 0x820d9a5f),        // Nordic NRF52820_xxAA
    ("nrf52833", 0x621e937a),        // Nordic NRF52833
    ("nrf52840", 0xada52840),        // Nordic NRF52840
    ("samd21", 0x68ed2b88),          // Microchip (Atmel) SAMD21
    ("samd51", 0x55114460),          // Microchip (Atmel) SAMD51
    ("saml21", 0x1851780a),          // Microchip (Atmel) SAML21
    ("stm32f0", 0x647824b6),         // ST STM32F0xx
    ("stm32f1", 0x5ee21072),         // ST STM32F103
    ("stm32f2", 0x5d1a0a2e),         // ST STM32F2xx
    ("stm32f3", 0x6b846188),         // ST STM32F3xx
    ("stm32f4", 0x57755a57),         // ST STM32F4xx
    ("stm32f7", 0x53b80f00),         // ST STM32F7xx
    ("stm32g0", 0x300f5633),         // ST STM32G0xx
    ("stm32g4", 0x4c71240a),         // ST STM32G4xx
    ("stm32h5", 0x4e8f1c5d),         // ST STM32H5xx
    ("stm32h7", 0x6db66082),         // ST STM32H7xx
    ("stm32l0", 0x202e3a91),         // ST STM32L0xx
    ("stm32l1", 0x1e1f432d),         // ST STM32L1xx
    ("stm32l4", 0x00ff6919),         // ST STM32L4xx
    ("stm32l5", 0x04240bdf),         // ST STM32L5xx
    ("stm32wb", 0x70d16653),         // ST STM32WBxx
    ("stm32wl", 0x21460ff0),         // ST STM32WLxx
    ("mimxrt10xx", 0x4fb2d5bd),      // NXP i.MX RT10XX
    ("lpc55", 0x2abc77ec),           // NXP LPC55xx
    ("esp32s2", 0xbfdd4eee),         // ESP32-S2
    ("esp32s3", 0xc47e5767),         // ESP32-S3
    ("esp32c3", 0xd42ba06c),         // ESP32-C3
    ("esp32c6", 0x540ddf62),         // ESP32-C6
    ("esp32h2", 0x332726f6),         // ESP32-H2
    ("esp32p4", 0x3d308e94),         // ESP32-P4
];

/// The family ID `text` names: a known name (any case, `_` or `-`) or a number (`0x` hex or
/// decimal).
pub(crate) fn parse(text: &str) -> Result<u32, String> {
    let wanted = text.trim().to_ascii_lowercase().replace('_', "-");
    if let Some(&(_, id)) = KNOWN.iter().find(|(name, _)| *name == wanted) {
        return Ok(id);
    }
    let number = match wanted.strip_prefix("0x") {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => wanted.parse().ok(),
    };
    number.ok_or_else(|| {
        let names: Vec<&str> = KNOWN.iter().map(|(name, _)| *name).collect();
        format!(
            "not a UF2 family name or a 32-bit number: {text} (known names: {})",
            names.join(", ")
        )
    })
}

/// The name of `id`, if it is a known family.
pub(crate) fn name(id: u32) -> Option<&'static str> {
    KNOWN
        .iter()
        .find(|&&(_, known)| known == id)
        .map(|(name, _)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_parse() {
        assert_eq!(parse("rp2040"), Ok(0xe48b_ff56));
        assert_eq!(parse("RP2350_ARM_S"), Ok(0xe48b_ff59));
        assert_eq!(parse("nrf52840"), Ok(0xada5_2840));
        assert_eq!(parse("0xADA52840"), Ok(0xada5_2840));
        assert_eq!(parse("3834380118"), Ok(0xe48b_ff56));
        assert!(parse("rp2041").unwrap_err().contains("known names: rp2040"));
        assert!(parse("0x1_0000_0000").is_err());
        assert_eq!(name(0xe48b_ff5a), Some("rp2350-riscv"));
        assert_eq!(name(1), None);
    }

    #[test]
    fn names_and_ids_are_unique() {
        for (i, (name, id)) in KNOWN.iter().enumerate() {
            assert!(
                KNOWN[i + 1..].iter().all(|(n, d)| n != name && d != id),
                "{name}"
            );
        }
    }
}
