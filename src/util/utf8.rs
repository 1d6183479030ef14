//! UTF-8 facts the lattice, the seed finder and the byte-run decoder share.

/// The length of the UTF-8 character that starts with `lead` (4 for any byte that starts no
/// shorter one, continuation bytes included: callers check the bytes themselves).
#[inline]
pub fn utf8_len(lead: u8) -> usize {
    match lead {
        0..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}
