//! SentencePiece's precompiled character map, used as it is: the normalization rules of
//! `nmt_nfkc` and friends as a Darts-clone double-array trie followed by the replacements,
//! NUL-terminated. Expanding it into a rule table took 0.7–1.1 s on every `nmt_nfkc` model (the
//! trie is a DAWG: 225,000 keys in 19,000 nodes), and a hostile 100 KB map whose trie shares
//! nodes 41 levels deep spells 2^41 keys; walking the units directly costs nothing at load
//! and the same per byte as a rule trie.
//!
//! ```text
//! <u32 trie size in bytes><trie units, u32 each><replacement\0replacement\0...>
//! unit bits 0-7: the byte leading here (bit 31 belongs to the label too, so a value unit
//!                never matches a byte); bit 8: a key ends here, its value in the unit at
//!                `base ^ 0`; bit 9: shift the offset left by 8; bits 10-31: offset, the
//!                children's base is `position ^ offset`.
//! ```
//!
//! `new` checks the whole blob once, in time linear in its size (a counting sort of units by
//! parent, then one depth-first pass over the nodes reachable from the root): sizes fit, every
//! value a walk can reach is an offset to a replacement inside the blob, the trie has no cycle
//! and no key longer than `MAX_KEY_BYTES`. A walk then follows units by `get` and can neither
//! leave the array nor loop, and each step goes one byte deeper into the text, so a match costs
//! at most `MAX_KEY_BYTES` steps whatever the map.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use std::sync::Arc;

const LEAF: u32 = 1 << 8;
const VALUE: u32 = 1 << 31;
/// sentencepiece keeps the first 32 keys that prefix the text at a position (`commonPrefixSearch`
/// into a fixed array, `kMaxTrieResultsSize`) and picks the longest of those.
const MAX_MATCHES: usize = 32;
/// The longest key a map may hold. Real maps' keys are a few characters (`nmt_nfkc`'s and
/// `nfkc_cf`'s longest are 12 bytes); the bound keeps a hostile chain of 25,000 nodes from
/// costing 25,000 steps at every position of the text.
pub const MAX_KEY_BYTES: u32 = 1024;

/// A validated precompiled character map. Clones share the blob.
#[derive(Clone)]
pub struct PrecompiledCharsmap {
    blob: Arc<[u8]>,
    units: Arc<[u32]>,
    /// The replacements, NUL-terminated, one after another.
    strings: Arc<str>,
    root_base: u32,
}

impl std::fmt::Debug for PrecompiledCharsmap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PrecompiledCharsmap({} bytes, {} units)", self.blob.len(), self.units.len())
    }
}

impl PartialEq for PrecompiledCharsmap {
    fn eq(&self, other: &Self) -> bool {
        self.blob == other.blob
    }
}

#[inline]
fn offset(unit: u32) -> u32 {
    (unit >> 10) << ((unit & (1 << 9)) >> 6)
}

/// A unit's label as Darts-clone compares it with a byte: a value unit's has bit 31 set.
#[inline]
fn label(unit: u32) -> u32 {
    unit & (VALUE | 0xFF)
}

impl PrecompiledCharsmap {
    /// Checks `blob` and makes it usable; the error says what is wrong with it (the caller
    /// names the file and field).
    pub fn new(blob: &[u8]) -> Result<Self, String> {
        if blob.len() <= 4 {
            return Err(format!("{} bytes is too short", blob.len()));
        }
        let trie_size = u32::from_le_bytes(blob[..4].try_into().expect("4 bytes")) as usize;
        if trie_size % 4 != 0 || trie_size == 0 || 4 + trie_size >= blob.len() {
            return Err(format!("trie size {trie_size} does not fit a blob of {} bytes", blob.len()));
        }
        let units: Arc<[u32]> = blob[4..4 + trie_size]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        // sentencepiece's builder writes each replacement with its NUL, so the area is UTF-8
        // and ends in a NUL; anything else is not a map it wrote.
        let strings = std::str::from_utf8(&blob[4 + trie_size..])
            .map_err(|e| format!("the replacements are not UTF-8 (byte {} of them)", e.valid_up_to()))?;
        if !strings.ends_with('\0') {
            return Err("the last replacement is not NUL-terminated".into());
        }
        let map = PrecompiledCharsmap { blob: blob.into(), units, strings: strings.into(), root_base: 0 };
        let root_base = offset(map.units[0]);
        map.check_reachable(root_base)?;
        Ok(PrecompiledCharsmap { root_base, ..map })
    }

    /// The depth-first pass of `new`: every node reachable from the root, each once.
    fn check_reachable(&self, root_base: u32) -> Result<(), String> {
        let units = &self.units;
        // The units by the base of the node they leave (a child labelled `c` at position `p`
        // leaves the node whose base is `p ^ c`), so each node lists its children at once
        // instead of probing its 256-unit block. Bases lie below `span`; a base past it has no
        // children (the block it would probe is past the array).
        let span = units.len().div_ceil(256) * 256;
        let mut first = vec![0u32; span + 1];
        for (p, &unit) in units.iter().enumerate() {
            if unit & VALUE == 0 {
                first[(p ^ (unit & 0xFF) as usize) + 1] += 1;
            }
        }
        for i in 1..first.len() {
            first[i] += first[i - 1];
        }
        let mut children = vec![0u32; first[span] as usize];
        let mut next = first.clone();
        for (p, &unit) in units.iter().enumerate() {
            if unit & VALUE == 0 {
                let parent = p ^ (unit & 0xFF) as usize;
                children[next[parent] as usize] = p as u32;
                next[parent] += 1;
            }
        }

        const NEW: u8 = 0;
        const OPEN: u8 = 1;
        const DONE: u8 = 2;
        let mut state = vec![NEW; span];
        // The longest walk below each base, in bytes.
        let mut depth = vec![0u32; span];
        let below = |base: u32| (base as usize) < span;
        if !below(root_base) {
            return Ok(()); // no key at all: the map changes nothing
        }
        // (base, index of its next child to look at)
        let mut stack = vec![(root_base, first[root_base as usize])];
        state[root_base as usize] = OPEN;
        while let Some(&mut (base, ref mut at)) = stack.last_mut() {
            let b = base as usize;
            if *at == first[b + 1] {
                state[b] = DONE;
                stack.pop();
                if depth[b] > MAX_KEY_BYTES {
                    return Err(format!("a key is longer than {MAX_KEY_BYTES} bytes"));
                }
                if let Some(&(parent, _)) = stack.last() {
                    depth[parent as usize] = depth[parent as usize].max(depth[b] + 1);
                }
                continue;
            }
            let p = children[*at as usize];
            *at += 1;
            let unit = units[p as usize];
            let child = p ^ offset(unit);
            if unit & LEAF != 0 {
                self.replacement_checked(p, child)?;
            }
            if !below(child) {
                depth[b] = depth[b].max(1);
                continue;
            }
            match state[child as usize] {
                NEW => {
                    state[child as usize] = OPEN;
                    stack.push((child, first[child as usize]));
                }
                OPEN => return Err(format!("the trie loops back through unit {p}")),
                _ => depth[b] = depth[b].max(depth[child as usize] + 1),
            }
        }
        Ok(())
    }

    /// That the key ending at unit `p` (whose children's base is `child`) has a replacement.
    fn replacement_checked(&self, p: u32, child: u32) -> Result<(), String> {
        let at = self.units.get(child as usize).ok_or_else(|| format!("unit {p} has its value outside the trie"))?;
        let at = (at & !VALUE) as usize;
        if at >= self.strings.len() || !self.strings.is_char_boundary(at) {
            return Err(format!("unit {p}: no replacement starts at offset {at}"));
        }
        Ok(())
    }

    /// The blob as read, to write back.
    pub fn blob(&self) -> &[u8] {
        &self.blob
    }

    /// The replacement starting at `at` (checked by `new` for every value a walk reaches).
    fn replacement(&self, at: u32) -> &str {
        let rest = &self.strings[(at & !VALUE) as usize..];
        &rest[..rest.bytes().position(|b| b == 0).unwrap_or(rest.len())]
    }

    /// The longest key that starts `text` and its replacement, as sentencepiece's normalizer
    /// picks it: the longest of the first 32 keys met. A key that would end inside a character
    /// (no map sentencepiece builds has one) is passed over.
    #[inline]
    pub fn longest_match<'a>(&'a self, text: &str) -> Option<(usize, &'a str)> {
        let mut node = self.root_base;
        let mut found = None;
        let mut met = 0;
        for (i, &b) in text.as_bytes().iter().enumerate() {
            node ^= b as u32;
            let Some(&unit) = self.units.get(node as usize) else { break };
            if label(unit) != b as u32 {
                break;
            }
            node ^= offset(unit);
            if unit & LEAF != 0 {
                if met < MAX_MATCHES && text.is_char_boundary(i + 1) {
                    found = Some((i + 1, node));
                }
                met += 1;
            }
        }
        found.map(|(len, node)| (len, self.replacement(self.units[node as usize])))
    }

    /// The shortest key that starts `text` and its replacement: what Hugging Face's
    /// `Precompiled` normalizer replaces a grapheme cluster (or a character) by.
    pub fn shortest_match<'a>(&'a self, text: &str) -> Option<&'a str> {
        let mut node = self.root_base;
        for &b in text.as_bytes() {
            node ^= b as u32;
            let &unit = self.units.get(node as usize)?;
            if label(unit) != b as u32 {
                return None;
            }
            node ^= offset(unit);
            if unit & LEAF != 0 {
                return Some(self.replacement(self.units[node as usize]));
            }
        }
        None
    }

    /// The node reached by `key`'s bytes from the root (its base, and whether a key ends
    /// there), if every byte has a transition.
    fn walk(&self, key: &[u8]) -> Option<(u32, bool)> {
        let mut node = self.root_base;
        let mut leaf = false;
        for &b in key {
            node ^= b as u32;
            let unit = *self.units.get(node as usize)?;
            if label(unit) != b as u32 {
                return None;
            }
            node ^= offset(unit);
            leaf = unit & LEAF != 0;
        }
        Some((node, leaf))
    }

    /// Whether a key starts with `c`: `Some(false)` if none does, `Some(true)` if some do, the
    /// characters they have right after `c` pushed to `after`; `None` when `c` alone is a key
    /// or a key ends inside the character after it (callers then look `c` up as any text).
    pub fn keys_after(&self, c: char, after: &mut Vec<char>) -> Option<bool> {
        let Some((base, leaf)) = self.walk(c.encode_utf8(&mut [0; 4]).as_bytes()) else {
            return Some(false);
        };
        if leaf {
            return None;
        }
        self.spell_chars(base, &mut [0; 4], 0, after)?;
        Some(true)
    }

    /// Every character spelled by a path of whole UTF-8 sequences from the node at `base`
    /// (`spelled[..at]` the bytes so far), each pushed to `out`; `None` if a key ends or a path
    /// stops part-way through a character.
    fn spell_chars(&self, base: u32, spelled: &mut [u8; 4], at: usize, out: &mut Vec<char>) -> Option<()> {
        let bytes = if at == 0 { 0..256 } else { 0x80..0xC0 };
        for b in bytes {
            let unit = match self.units.get((base ^ b) as usize) {
                Some(&u) if label(u) == b => u,
                _ => continue,
            };
            spelled[at] = b as u8;
            let len = match spelled[0] {
                0x00..=0x7F => 1,
                0xC2..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF4 => 4,
                _ => return None,
            };
            if unit & LEAF != 0 && at + 1 < len {
                return None;
            }
            if at + 1 < len {
                self.spell_chars((base ^ b) ^ offset(unit), spelled, at + 1, out)?;
            } else if let Some(c) = std::str::from_utf8(&spelled[..len]).ok().and_then(|s| s.chars().next()) {
                out.push(c);
            }
        }
        Some(())
    }

    /// Whether the node at `base` has a child by one of `bytes`.
    fn has_child(&self, base: u32, bytes: std::ops::Range<u32>) -> bool {
        bytes.into_iter().any(|c| self.units.get((base ^ c) as usize).is_some_and(|&u| label(u) == c))
    }

    /// Whether some key starts with `prefix` (the empty prefix: whether there is any key).
    pub fn starts_key(&self, prefix: &str) -> bool {
        match self.walk(prefix.as_bytes()) {
            Some((base, leaf)) => (leaf && !prefix.is_empty()) || self.has_child(base, 0..256),
            None => false,
        }
    }

    /// For each ASCII byte, whether a key starts with it followed by ASCII or by nothing: the
    /// bytes that cannot be copied as they are when ASCII follows them.
    pub fn ascii_key_starts(&self) -> [bool; 128] {
        let mut starts = [false; 128];
        for (b, start) in starts.iter_mut().enumerate() {
            if let Some((base, leaf)) = self.walk(&[b as u8]) {
                *start = leaf || self.has_child(base, 0..128);
            }
        }
        starts
    }
}

/// A `precompiled_charsmap` field as files keep it: base64, checked when read.
pub mod base64_field {
    use super::*;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(map: &Option<PrecompiledCharsmap>, s: S) -> Result<S::Ok, S::Error> {
        match map {
            Some(map) => s.serialize_str(&BASE64.encode(map.blob())),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<PrecompiledCharsmap>, D::Error> {
        use serde::de::Error;
        let Some(text) = Option::<String>::deserialize(d)? else { return Ok(None) };
        let blob =
            BASE64.decode(text).map_err(|e| D::Error::custom(format!("precompiled_charsmap: bad base64: {e}")))?;
        PrecompiledCharsmap::new(&blob).map(Some).map_err(|e| D::Error::custom(format!("precompiled_charsmap: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A map of one key: the root (base 256) has the child "a" at unit 256 ^ 0x61, whose
    /// children's base is 512; the value unit there points at "b".
    fn one_rule() -> Vec<u32> {
        let mut units = vec![VALUE; 768];
        units[0] = 256 << 10;
        let a = 256 ^ 0x61;
        units[a] = 0x61 | LEAF | ((a as u32 ^ 512) << 10);
        units[512] = VALUE;
        units
    }

    fn blob(units: &[u32], strings: &[u8]) -> Vec<u8> {
        let mut out = ((units.len() * 4) as u32).to_le_bytes().to_vec();
        for u in units {
            out.extend_from_slice(&u.to_le_bytes());
        }
        out.extend_from_slice(strings);
        out
    }

    #[test]
    fn walks_the_longest_key() {
        let map = PrecompiledCharsmap::new(&blob(&one_rule(), b"b\0")).unwrap();
        assert_eq!(map.longest_match("ax"), Some((1, "b")));
        assert_eq!(map.longest_match("xa"), None);
        assert!(map.starts_key("a") && map.starts_key("") && !map.starts_key("b"));
        assert!(map.ascii_key_starts()[b'a' as usize]);
    }

    #[test]
    fn broken_blobs_are_refused() {
        let units = one_rule();
        assert!(PrecompiledCharsmap::new(&blob(&units, b"b")).unwrap_err().contains("NUL"));
        assert!(PrecompiledCharsmap::new(&blob(&units, b"\xff\0")).unwrap_err().contains("UTF-8"));
        assert!(PrecompiledCharsmap::new(&blob(&units, b"")).unwrap_err().contains("does not fit"));
        assert!(PrecompiledCharsmap::new(b"\x01\0\0\0abcd").unwrap_err().contains("does not fit"));
        let mut far = units.clone();
        far[512] = VALUE | 7; // past the one replacement
        assert!(PrecompiledCharsmap::new(&blob(&far, b"b\0")).unwrap_err().contains("offset 7"));
        let mut outside = units.clone();
        let a = 256 ^ 0x61;
        outside[a] = 0x61 | LEAF | ((a as u32 ^ 5000) << 10); // value unit past the array
        assert!(PrecompiledCharsmap::new(&blob(&outside, b"b\0")).unwrap_err().contains("outside"));
        let mut looped = units;
        looped[a] = 0x61 | ((a as u32 ^ 256) << 10); // "a" leads back to the root
        assert!(PrecompiledCharsmap::new(&blob(&looped, b"b\0")).unwrap_err().contains("loops"));
    }

    #[test]
    fn a_key_past_the_bound_is_refused() {
        // A chain of "a"s, one block per node, MAX_KEY_BYTES + 1 deep.
        let depth = MAX_KEY_BYTES as usize + 1;
        let mut units = vec![VALUE; 256 * (depth + 1)];
        units[0] = 256 << 10;
        for level in 0..depth {
            let p = (256 * (level + 1)) ^ 0x61;
            // The last node's base lies past the array: it has no children.
            let child = if level + 1 < depth { 256 * (level + 2) } else { 256 * (depth + 5) };
            units[p] = 0x61 | ((p ^ child) as u32) << 10;
        }
        assert!(PrecompiledCharsmap::new(&blob(&units, b"b\0")).unwrap_err().contains("longer"));
    }
}
