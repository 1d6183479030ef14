//! Sets of characters by Unicode property (`\p{Mn}`, `\p{P}`, ...), built once from
//! `regex-syntax`'s tables — the ones the regex engines use — and looked up by binary search
//! over ranges, with ASCII answered from a bitmap.

use regex_syntax::hir::{Class, HirKind};

#[derive(Debug, Clone)]
pub struct CharSet {
    ascii: u128,
    ranges: Vec<(u32, u32)>,
}

impl CharSet {
    /// The characters a regex character class matches, e.g. `r"[\p{Cc}\p{Cf}]"`.
    pub fn from_class(class: &str) -> CharSet {
        let hir = regex_syntax::parse(class).expect("a valid character class");
        let HirKind::Class(Class::Unicode(set)) = hir.kind() else {
            panic!("{class} is not a Unicode character class");
        };
        let ranges: Vec<(u32, u32)> = set.ranges().iter().map(|r| (r.start() as u32, r.end() as u32)).collect();
        CharSet::from_ranges(&ranges)
    }

    /// The characters of sorted, disjoint, inclusive code-point ranges (a table of our own).
    pub fn from_ranges(ranges: &[(u32, u32)]) -> CharSet {
        let mut ascii = 0u128;
        for b in 0..128u32 {
            if ranges.iter().any(|&(lo, hi)| lo <= b && b <= hi) {
                ascii |= 1 << b;
            }
        }
        CharSet { ascii, ranges: ranges.to_vec() }
    }

    #[inline]
    pub fn contains(&self, c: char) -> bool {
        let c = c as u32;
        if c < 128 {
            return self.ascii & (1 << c) != 0;
        }
        self.ranges
            .binary_search_by(|&(lo, hi)| {
                if hi < c {
                    std::cmp::Ordering::Less
                } else if lo > c {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .is_ok()
    }
}

/// Defines a lazily built, shared `CharSet`.
macro_rules! charset {
    ($name:ident, $class:expr) => {
        pub fn $name() -> &'static CharSet {
            static SET: std::sync::OnceLock<CharSet> = std::sync::OnceLock::new();
            SET.get_or_init(|| CharSet::from_class($class))
        }
    };
}

// "Other" characters (control, format, private use), which BERT's text cleaning drops, as
// Hugging Face's tables have them: unassigned code points (U+FFFF included) are kept — they become
// `[UNK]` — and so are the format characters its older tables lack (checked against every code
// point by tests/test_wordpiece.py).
charset!(other, r"[[\p{Cc}\p{Cf}\p{Co}]--[\x{890}\x{891}\x{8E2}\x{110CD}\x{13430}-\x{1343F}]]");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_answer_like_the_tables() {
        assert!(other().contains('\u{200b}') && other().contains('\u{7}') && !other().contains('x'));
    }
}
