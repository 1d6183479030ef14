//! Per-character class bits for the hand-written preset splitters.
//!
//! The preset patterns only ever ask five questions of a character: is it `\p{L}`, `\p{N}`, `\s`,
//! in `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]` ("upper-ish", o200k) or in `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`
//! ("lower-ish", o200k). The answers come from `regex-syntax`'s Unicode tables — the same tables
//! the `regex`/`fancy-regex` engines use — so the splitters agree with a regex engine by
//! construction. They are packed once into a two-level table (256-code-point blocks, shared when
//! identical), which keeps a lookup to two loads and the whole table at a few tens of kilobytes.

use regex_syntax::hir::{Class, HirKind};
use std::sync::OnceLock;

pub const LETTER: u8 = 1;
pub const NUMBER: u8 = 2;
pub const SPACE: u8 = 4;
pub const UPPERISH: u8 = 8;
pub const LOWERISH: u8 = 16;

const QUERIES: [(&str, u8); 5] = [
    (r"\p{L}", LETTER),
    (r"\p{N}", NUMBER),
    (r"\s", SPACE),
    (r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", UPPERISH),
    (r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]", LOWERISH),
];

const BLOCK: usize = 256;

/// Classes of the ASCII characters, known at compile time: the hot path never touches the
/// two-level table for ASCII text.
pub const ASCII: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        t[b] = if c.is_ascii_uppercase() {
            LETTER | UPPERISH
        } else if c.is_ascii_lowercase() {
            LETTER | LOWERISH
        } else if c.is_ascii_digit() {
            NUMBER
        } else if matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
            SPACE
        } else {
            0
        };
        b += 1;
    }
    t
};

pub struct ClassTable {
    block_of: Vec<u16>,
    blocks: Vec<u8>,
}

impl ClassTable {
    fn build() -> Self {
        let mut flat = vec![0u8; 0x110000];
        for (pattern, bit) in QUERIES {
            let hir = regex_syntax::parse(pattern).expect("built-in class pattern parses");
            let HirKind::Class(Class::Unicode(class)) = hir.kind() else {
                unreachable!("built-in class pattern is a Unicode class")
            };
            for range in class.ranges() {
                for slot in &mut flat[range.start() as usize..=range.end() as usize] {
                    *slot |= bit;
                }
            }
        }
        let mut block_of = Vec::with_capacity(flat.len() / BLOCK);
        let mut blocks: Vec<u8> = Vec::new();
        let mut seen: rustc_hash::FxHashMap<&[u8], u16> = Default::default();
        for chunk in flat.chunks(BLOCK) {
            let next = seen.len() as u16;
            let id = *seen.entry(chunk).or_insert_with(|| {
                blocks.extend_from_slice(chunk);
                next
            });
            block_of.push(id);
        }
        ClassTable { block_of, blocks }
    }

    #[inline]
    pub fn get(&self, c: char) -> u8 {
        let cp = c as usize;
        let block = self.block_of[cp / BLOCK] as usize;
        self.blocks[block * BLOCK + cp % BLOCK]
    }
}

pub fn table() -> &'static ClassTable {
    static TABLE: OnceLock<ClassTable> = OnceLock::new();
    TABLE.get_or_init(ClassTable::build)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_of_sample_characters() {
        let t = table();
        assert_eq!(t.get('a'), LETTER | LOWERISH);
        assert_eq!(t.get('A'), LETTER | UPPERISH);
        assert_eq!(t.get('7'), NUMBER);
        assert_eq!(t.get(' '), SPACE);
        assert_eq!(t.get('\u{3000}'), SPACE);
        assert_eq!(t.get('\u{1c}'), 0, "\\x1c is not \\s in regex engines");
        assert_eq!(t.get('中'), LETTER | UPPERISH | LOWERISH);
        assert_eq!(t.get('\u{301}'), UPPERISH | LOWERISH, "combining acute is a mark, not a letter");
        assert_eq!(t.get('Ⅻ'), NUMBER);
        assert_eq!(t.get('!'), 0);
        for b in 0..128u8 {
            assert_eq!(ASCII[b as usize], t.get(b as char), "ASCII table disagrees at {b:#x}");
        }
    }
}
