//! The starting vocabulary of Unigram training: every character, then the substrings of the
//! corpus's words that occur at least twice with different continuations (the internal nodes
//! of the words' suffix tree), scored frequency × length; the best `seed_size` of them.
//!
//! The words (each once, weighted by its count) are laid end to end with a separator and sorted
//! by suffix (`divsufsort`, on bytes: UTF-8 byte order is code point order, and the common
//! prefix of two suffixes rounded down to a character boundary is their common prefix in
//! characters). A substring's frequency is the summed weight of the suffixes that start with it,
//! a contiguous run of the suffix array; the runs are the intervals of the common-prefix array.

use rustc_hash::FxHashMap;
use unicode_script::{Script, UnicodeScript};

/// Separates words in the suffix-sorted text, and stands in for characters outside the
/// alphabet: no seed crosses it.
const SEPARATOR: u8 = 0;

/// What a piece may be (SentencePiece's rules, with its defaults for splitting).
#[derive(Debug, Clone, Copy)]
pub struct PieceRules {
    pub max_chars: usize,
    /// `▁` at the end of a piece rather than at its start.
    pub whitespace_as_suffix: bool,
    /// A digit is a piece by itself.
    pub split_digits: bool,
}

impl PieceRules {
    /// Whether `piece` may be a vocabulary piece: 1 to `max_chars` characters; `▁` only first
    /// (or last); no tab, space or NUL; one script (Hiragana, Katakana and `ー` count as Han,
    /// combining marks take the script before them).
    pub fn allows(&self, piece: &str) -> bool {
        let chars = piece.chars().count();
        if chars == 0 || chars > self.max_chars {
            return false;
        }
        let mut previous: Option<Script> = None;
        for (i, c) in piece.chars().enumerate() {
            match c {
                '\0' | '\t' | ' ' => return false,
                '\u{2581}' => {
                    let allowed = if self.whitespace_as_suffix { i + 1 == chars } else { i == 0 };
                    if !allowed {
                        return false;
                    }
                    continue;
                }
                _ => {}
            }
            if self.split_digits && chars > 1 && (c.is_ascii_digit() || ('\u{FF10}'..='\u{FF19}').contains(&c)) {
                return false;
            }
            let script = match c.script() {
                _ if c == '\u{30FC}' => Script::Han,
                Script::Hiragana | Script::Katakana => Script::Han,
                Script::Inherited => match previous {
                    Some(s) => s,
                    None => Script::Inherited,
                },
                s => s,
            };
            if let Some(p) = previous {
                if p != script {
                    return false;
                }
            }
            previous = Some(script);
        }
        true
    }
}

/// The seed pieces of `words` (text, count) with their frequencies: characters first (every
/// character `known` accepts, by frequency), then the best `seed_size` substrings of two or more
/// characters by frequency × length (ties: by bytes). Characters `known` refuses break words.
pub fn seed_pieces(
    words: &[(&str, u64)],
    known: &dyn Fn(char) -> bool,
    rules: &PieceRules,
    seed_size: usize,
) -> Vec<(String, f64)> {
    let mut char_freq: FxHashMap<char, u64> = FxHashMap::default();
    // The text to sort: each word, unknown characters as separators, then a separator.
    let mut text: Vec<u8> = Vec::with_capacity(words.iter().map(|(w, _)| w.len() + 1).sum());
    let mut word_starts: Vec<u32> = Vec::with_capacity(words.len());
    for (word, count) in words {
        if text.len() + word.len() + 1 > i32::MAX as usize {
            break; // divsufsort indexes with i32; the words are in order of count, so the rarest go.
        }
        word_starts.push(text.len() as u32);
        for c in word.chars() {
            if known(c) {
                *char_freq.entry(c).or_default() += count;
                let mut buf = [0; 4];
                text.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            } else {
                text.push(SEPARATOR);
            }
        }
        text.push(SEPARATOR);
    }
    let mut chars: Vec<(char, u64)> = char_freq.into_iter().collect();
    chars.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut seeds: Vec<(String, f64)> = chars.iter().map(|&(c, f)| (c.to_string(), f as f64)).collect();

    let weight = |p: u32| {
        let word = word_starts.partition_point(|&s| s <= p) - 1;
        words[word].1
    };
    let candidates = branching_substrings(&text, weight, rules.max_chars + 1);
    let mut scored: Vec<(&str, u64)> = candidates
        .into_iter()
        .filter_map(|(start, len, freq)| {
            let piece = std::str::from_utf8(&text[start as usize..(start + len) as usize]).ok()?;
            let n = piece.chars().count();
            (n >= 2 && rules.allows(piece)).then_some((piece, freq * n as u64))
        })
        .collect();
    scored.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    scored.truncate(seed_size);
    seeds.extend(scored.into_iter().map(|(p, s)| (p.to_string(), s as f64)));
    seeds
}

/// The internal nodes of the suffix tree of `text` (words end to end, each followed by
/// `SEPARATOR`) as (start, byte length, summed `weight` of the suffixes starting with it), no
/// deeper than `cap` characters.
fn branching_substrings(text: &[u8], weight: impl Fn(u32) -> u64, cap: usize) -> Vec<(u32, u32, u64)> {
    let mut sa = vec![0i32; text.len()];
    divsufsort::sort_in_place(text, &mut sa);
    // Suffixes that start a character (not a separator, not inside a character).
    let starts: Vec<u32> = sa.into_iter().map(|p| p as u32).filter(|&p| is_char_start(text[p as usize])).collect();
    // Prefix sums of the weights in suffix order.
    let mut cumulative = Vec::with_capacity(starts.len() + 1);
    cumulative.push(0u64);
    for &p in &starts {
        cumulative.push(cumulative.last().unwrap() + weight(p));
    }
    // Common prefix of each suffix with the one before, in bytes, at character boundaries,
    // and no longer than `cap` characters (deeper nodes are never seeds).
    let lcp: Vec<u32> = (0..starts.len())
        .map(|k| if k == 0 { 0 } else { common_prefix(text, starts[k - 1], starts[k], cap) })
        .collect();

    // Bottom-up walk over the intervals of the common-prefix array: each popped (depth, left)
    // with the current position closes the interval [left, k) of suffixes sharing `depth` bytes.
    let mut candidates: Vec<(u32, u32, u64)> = Vec::new();
    let mut stack: Vec<(u32, usize)> = vec![(0, 0)];
    for k in 1..=starts.len() {
        let depth_here = if k < starts.len() { lcp[k] } else { 0 };
        let mut left = k - 1;
        while depth_here < stack.last().expect("the root stays").0 {
            let (depth, l) = stack.pop().expect("checked");
            let freq = cumulative[k] - cumulative[l];
            candidates.push((starts[l], depth, freq));
            left = l;
        }
        if depth_here > stack.last().expect("the root stays").0 {
            stack.push((depth_here, left));
        }
    }
    candidates
}

/// The seed pieces of Hugging Face tokenizers' Unigram trainer for `words` (distinct, with
/// their counts), with their log-probabilities. Every character by count (ties: the higher
/// code point first), then the branching substrings of 2 to `max_chars` characters scored by
/// their occurrences among the distinct words × length (not weighted by count; ties: the
/// greater text first), until `seed_size` pieces — characters included — are reached (at
/// least one substring is taken).
pub fn huggingface_seed_pieces(words: &[(&str, u64)], max_chars: usize, seed_size: usize) -> Vec<(String, f64)> {
    let mut char_freq: FxHashMap<char, u64> = FxHashMap::default();
    let mut text: Vec<u8> = Vec::with_capacity(words.iter().map(|(w, _)| w.len() + 1).sum());
    for (word, count) in words {
        if text.len() + word.len() + 1 > i32::MAX as usize {
            break; // divsufsort indexes with i32
        }
        for c in word.chars().filter(|&c| c != '\0') {
            *char_freq.entry(c).or_default() += count;
        }
        text.extend_from_slice(word.as_bytes());
        text.push(SEPARATOR);
    }
    let mut chars: Vec<(char, u64)> = char_freq.into_iter().collect();
    chars.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
    let mut seeds: Vec<(String, f64)> = chars.iter().map(|&(c, f)| (c.to_string(), f as f64)).collect();
    let candidates = branching_substrings(&text, |_| 1, max_chars + 1);
    let mut scored: Vec<(&str, u64)> = candidates
        .into_iter()
        .filter_map(|(start, len, freq)| {
            let bytes = &text[start as usize..(start + len) as usize];
            // Occurrences that all end their words share the separator too: not a branch.
            if bytes.contains(&SEPARATOR) {
                return None;
            }
            let piece = std::str::from_utf8(bytes).ok()?;
            let n = piece.chars().count();
            (2..=max_chars).contains(&n).then_some((piece, freq * n as u64))
        })
        .collect();
    scored.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(a.0)));
    for (piece, score) in scored {
        seeds.push((piece.to_string(), score as f64));
        if seeds.len() >= seed_size {
            break;
        }
    }
    let total: f64 = seeds.iter().map(|s| s.1).sum();
    let log_total = total.ln();
    seeds.into_iter().map(|(p, s)| (p, s.ln() - log_total)).collect()
}

#[inline]
fn is_char_start(b: u8) -> bool {
    b != SEPARATOR && (b & 0xC0) != 0x80
}

/// The common prefix of the suffixes at `a` and `b`, in bytes, ending at a character boundary,
/// and after at most `cap` characters. Both ending their word there counts as one more shared
/// character (so a substring that ends two words the same way is not a branch), and the
/// comparison stops there.
fn common_prefix(text: &[u8], a: u32, b: u32, cap: usize) -> u32 {
    let (x, y) = (&text[a as usize..], &text[b as usize..]);
    let mut len = 0;
    let mut chars = 0;
    while chars < cap {
        let Some(&lead) = x.get(len) else { break };
        if lead == SEPARATOR {
            if y.get(len) == Some(&SEPARATOR) {
                len += 1;
            }
            break;
        }
        let n = super::utf8_len(lead);
        if x.len() < len + n || y.len() < len + n || x[len..len + n] != y[len..len + n] {
            break;
        }
        len += n;
        chars += 1;
    }
    len as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every substring of the words with its weighted count and its set of continuations,
    /// counted directly.
    fn brute_force(words: &[(&str, u64)], rules: &PieceRules) -> Vec<(String, u64)> {
        let mut occurrences: FxHashMap<String, (u64, std::collections::BTreeSet<Option<char>>)> = FxHashMap::default();
        for (w, count) in words {
            let chars: Vec<char> = w.chars().collect();
            for i in 0..chars.len() {
                for j in i + 2..=chars.len().min(i + rules.max_chars) {
                    let s: String = chars[i..j].iter().collect();
                    let e = occurrences.entry(s).or_default();
                    e.0 += count;
                    e.1.insert(chars.get(j).copied());
                }
            }
        }
        let mut out: Vec<(String, u64)> = occurrences
            .into_iter()
            .filter(|(s, (_, next))| next.len() >= 2 && rules.allows(s))
            .map(|(s, (f, _))| {
                let n = s.chars().count() as u64;
                (s, f * n)
            })
            .collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }

    #[test]
    fn seeds_are_the_branching_substrings_by_frequency_times_length() {
        let words: Vec<(&str, u64)> = vec![
            ("▁the", 50),
            ("▁then", 7),
            ("▁there", 9),
            ("▁other", 4),
            ("▁東京都", 3),
            ("▁京都", 5),
            ("▁東京", 2),
            ("▁théâtre", 2),
        ];
        let rules = PieceRules { max_chars: 16, whitespace_as_suffix: false, split_digits: false };
        let seeds = seed_pieces(&words, &|_| true, &rules, 1000);
        let n_chars = seeds.iter().take_while(|(s, _)| s.chars().count() == 1).count();
        let got: Vec<(String, u64)> = seeds[n_chars..].iter().map(|(s, f)| (s.clone(), *f as u64)).collect();
        // A substring that occurs in one word only (weighted) is not a node of the suffix tree
        // of distinct words, though counting occurrences would say it repeats: leave those out.
        let want: Vec<(String, u64)> = brute_force(&words, &rules)
            .into_iter()
            .filter(|(s, _)| words.iter().filter(|(w, _)| w.contains(s.as_str())).count() >= 2)
            .collect();
        assert_eq!(got, want);
        assert_eq!(&seeds[0].0, "▁", "the most frequent character comes first");
    }

    #[test]
    fn piece_rules() {
        let r = PieceRules { max_chars: 4, whitespace_as_suffix: false, split_digits: false };
        assert!(r.allows("▁abc"));
        assert!(!r.allows("a▁b"));
        assert!(!r.allows("▁abcd"), "five characters");
        assert!(!r.allows("ab1"), "Latin then digits");
        assert!(r.allows("東京です"), "kana count as Han");
        assert!(!r.allows("東a"));
        assert!(r.allows("e\u{301}"), "a combining mark takes the script before it");
        let digits = PieceRules { split_digits: true, ..r };
        assert!(!digits.allows("12") && digits.allows("1"));
    }
}
