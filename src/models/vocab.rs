//! The id space shared by every model: id → token bytes, bytes → id, and what kind each token
//! is (ordinary, special, control, unknown, byte, unused).

use crate::error::{Error, Result};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;

/// Ordinary tokens (what the subword model produces) and special tokens (matched in raw text,
/// never produced by the model) in one id space. Ids may have gaps (tiktoken's special ids do).
///
/// Memory follows the number of tokens, not the largest id: ids close to the rest live in a
/// dense vector, and an id far past them (a special token at 10⁹, say) in a hash map, so no
/// number read from a file or an argument sizes an allocation by itself.
#[derive(Debug, Clone, Default)]
pub struct Vocab {
    tokens: Vec<Option<Box<[u8]>>>,
    /// Tokens whose ids lie far beyond the dense range, ordered so that the ones the dense
    /// range reaches when it grows are found without visiting the rest.
    sparse: BTreeMap<u32, Box<[u8]>>,
    /// One past the largest id held.
    n_vocab: usize,
    /// Tokens longer than `MID` bytes, by spelling (shorter ones are found through `short_ids`
    /// and `mid_ids`: keeping every token here too cost a second copy of each, a tenth of
    /// loading a 262k-piece vocabulary).
    ids: FxHashMap<Box<[u8]>, u32>,
    /// How many ordinary tokens there are.
    ordinary_count: usize,
    /// Tokens of up to 7 bytes again, keyed by their bytes packed into a u64, and tokens of 8 to
    /// 15 bytes keyed by two: the encoder's look-ups hash integers and compare no memory.
    short_ids: KeyTable<u64>,
    mid_ids: KeyTable<(u64, u64)>,
    /// The short tokens with the smallest ids once more, in a table small enough to stay in
    /// the core's L2 cache. Ids follow merge order, so small ids are the frequent tokens, and
    /// most look-ups end here instead of missing the cache in `short_ids`.
    hot: KeyTable<u64>,
    /// One bit per hash of every short token: most look-ups of byte pairs during merging ask
    /// for strings that are not tokens, and this answers "no" from 128 KiB that stay cached.
    maybe_short: KeyFilter,
    /// The same for tokens of 8 to 15 bytes: the backtracker's boundary checks on CJK text ask
    /// for such strings a quarter of a million times in 12 MB, and 99% are not tokens.
    maybe_mid: KeyFilter,
    /// Special tokens in the order given. Two strings may share an id (tiktoken's
    /// `o200k_harmony` does): both are matched in text; the first is what the id decodes to.
    specials: Vec<(String, u32)>,
    special_ids: FxHashMap<String, u32>,
    special_id_set: FxHashSet<u32>,
    /// How many special ids are also control or unknown tokens (`push_special`), so that no id is
    /// counted twice.
    specials_on_kinds: usize,
    /// Tokens of the other kinds (control, unknown, byte, unused), by id and by spelling. They
    /// are not in `ids`: the model never produces them from text by their spelling, so a byte
    /// token spelled `<0x41>` and an ordinary `<0x41>` (or `A`) never collide.
    kinds: FxHashMap<u32, TokenKind>,
    kind_ids: FxHashMap<String, u32>,
    /// The byte tokens by byte value (`u32::MAX`: none), for byte fallback.
    byte_ids: Option<Box<[u32; 256]>>,
}

/// What a token is, beyond its spelling.
///
/// `Special` tokens are matched in raw text (`<|endoftext|>`, `[MASK]`, SentencePiece's
/// user-defined symbols); `Control` tokens (SentencePiece's `<s>`, `</s>`) are only ever
/// inserted by templates and decode to nothing; `Unknown` stands for text the model cannot
/// spell; a `Byte` token is one raw byte (byte fallback, spelled `<0xNN>`); `Unused` tokens
/// hold an id and are never produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenKind {
    Normal,
    Special,
    Control,
    Unknown,
    Byte(u8),
    Unused,
}

impl TokenKind {
    /// The kind's name in files and in Python: `normal`, `special`, `control`, `unknown`,
    /// `byte`, `unused`.
    pub fn name(self) -> &'static str {
        match self {
            TokenKind::Normal => "normal",
            TokenKind::Special => "special",
            TokenKind::Control => "control",
            TokenKind::Unknown => "unknown",
            TokenKind::Byte(_) => "byte",
            TokenKind::Unused => "unused",
        }
    }

    /// The kind named `name` for a token spelled `text` (a byte token's value comes from its
    /// spelling, `<0x41>`).
    pub fn parse(name: &str, text: &str) -> Result<Self> {
        Ok(match name {
            "normal" => TokenKind::Normal,
            "special" => TokenKind::Special,
            "control" => TokenKind::Control,
            "unknown" => TokenKind::Unknown,
            "unused" => TokenKind::Unused,
            "byte" => TokenKind::Byte(byte_spelling(text).ok_or_else(|| {
                Error::config(format!("byte token {text:?} is not spelled <0xNN> with two hex digits"))
            })?),
            other => {
                return Err(Error::config(format!(
                    "unknown token kind {other:?}; kinds are normal, special, control, unknown, byte, unused"
                )))
            }
        })
    }
}

/// The byte a token spelled `<0xNN>` stands for.
pub fn byte_spelling(text: &str) -> Option<u8> {
    let hex = text.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2 {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

/// An id at most this far past the dense range (or within twice its length) extends it; one
/// further away goes to the sparse map.
const DENSE_SLACK: usize = 1 << 16;

const SHORT: usize = 7;
const MID: usize = 15;
/// Short tokens with ids below this also live in the hot table (16 Ki slots of 16 bytes).
const HOT_IDS: u32 = 6144;

const FILTER_BITS: usize = 1 << 20;

/// A one-hash Bloom filter over short-token keys.
#[derive(Debug, Clone)]
struct KeyFilter {
    words: Vec<u64>,
}

impl Default for KeyFilter {
    fn default() -> Self {
        KeyFilter { words: vec![0; FILTER_BITS / 64] }
    }
}

impl KeyFilter {
    #[inline(always)]
    fn bit(key: u64) -> usize {
        (key.wrapping_mul(0xD6E8_FEB8_6659_FD93) >> (64 - FILTER_BITS.trailing_zeros())) as usize
    }

    fn insert(&mut self, key: u64) {
        let b = Self::bit(key);
        self.words[b / 64] |= 1 << (b % 64);
    }

    #[inline(always)]
    fn contains(&self, key: u64) -> bool {
        let b = Self::bit(key);
        self.words[b / 64] & (1 << (b % 64)) != 0
    }
}

/// Open addressing with linear probing over (key, id) slots, at most half full; key 0 marks an
/// empty slot (real keys carry their length in the top byte, so they are never 0). One probe
/// usually reads one slot, where a general hash map reads a control byte and then the slot.
#[derive(Debug, Clone)]
struct KeyTable<K> {
    slots: Vec<(K, u32)>,
    len: usize,
}

/// A key of a `KeyTable`: never equal to `EMPTY`, hashed by multiplying.
trait TableKey: Copy + Eq {
    const EMPTY: Self;
    fn hash(self) -> u64;
}

impl TableKey for u64 {
    const EMPTY: Self = 0;
    #[inline(always)]
    fn hash(self) -> u64 {
        self.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

impl TableKey for (u64, u64) {
    const EMPTY: Self = (0, 0);
    #[inline(always)]
    fn hash(self) -> u64 {
        (self.0 ^ self.1.rotate_left(31)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

impl<K: TableKey> Default for KeyTable<K> {
    fn default() -> Self {
        KeyTable { slots: vec![(K::EMPTY, 0); 16], len: 0 }
    }
}

impl<K: TableKey> KeyTable<K> {
    #[inline(always)]
    fn home(&self, key: K) -> usize {
        (key.hash() >> (64 - self.slots.len().trailing_zeros())) as usize
    }

    /// Grows the table (if need be) to hold `additional` more keys without growing again.
    fn reserve(&mut self, additional: usize) {
        let wanted = ((self.len + additional) * 2).next_power_of_two();
        if wanted > self.slots.len() {
            self.grow_to(wanted);
        }
    }

    fn grow_to(&mut self, slots: usize) {
        let old = std::mem::replace(&mut self.slots, vec![(K::EMPTY, 0); slots]);
        self.len = 0;
        for (k, v) in old.into_iter().filter(|&(k, _)| k != K::EMPTY) {
            self.insert(k, v);
        }
    }

    fn insert(&mut self, key: K, id: u32) {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow_to(self.slots.len() * 2);
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        while self.slots[i].0 != K::EMPTY && self.slots[i].0 != key {
            i = (i + 1) & mask;
        }
        if self.slots[i].0 == K::EMPTY {
            self.len += 1;
        }
        self.slots[i] = (key, id);
    }

    #[inline(always)]
    fn get(&self, key: K) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let (k, id) = self.slots[i];
            if k == key {
                return Some(id);
            }
            if k == K::EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }
}

/// The key `Vocab::joined_id` takes for a string of at most 7 bytes (its length in the top
/// byte, so never 0); None for longer strings.
pub(crate) fn short_token_key(bytes: &[u8]) -> Option<u64> {
    (bytes.len() <= SHORT).then(|| short_key(bytes))
}

/// `bytes` (8 to 15) as its first eight bytes and the short key of the rest.
#[inline(always)]
fn mid_key(bytes: &[u8]) -> (u64, u64) {
    // The top bit keeps the key from ever being `(0, 0)`, the empty slot (eight NUL bytes).
    (pack_le(&bytes[..8]), short_key(&bytes[8..]) | 1 << 63)
}

/// `bytes` (at most 7) packed little-endian with the length in the top byte.
#[inline(always)]
fn short_key(bytes: &[u8]) -> u64 {
    pack_le(bytes) | ((bytes.len() as u64) << 56)
}

/// Up to eight bytes as a little-endian word, zero-padded. Two overlapping reads instead of a
/// byte loop: the overlap holds the same bytes, so OR-ing them is exact.
#[inline(always)]
pub(crate) fn pack_le(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    debug_assert!(n <= 8);
    if n == 8 {
        u64::from_le_bytes(bytes.try_into().expect("8 bytes"))
    } else if n >= 4 {
        let lo = u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes")) as u64;
        let hi = u32::from_le_bytes(bytes[n - 4..].try_into().expect("4 bytes")) as u64;
        lo | (hi << (8 * (n - 4)))
    } else if n >= 2 {
        let lo = u16::from_le_bytes(bytes[..2].try_into().expect("2 bytes")) as u64;
        let hi = u16::from_le_bytes(bytes[n - 2..].try_into().expect("2 bytes")) as u64;
        lo | (hi << (8 * (n - 2)))
    } else if n == 1 {
        bytes[0] as u64
    } else {
        0
    }
}

impl Vocab {
    /// Adds an ordinary token; returns its id (the existing one if the bytes are already there).
    pub fn push(&mut self, bytes: &[u8]) -> u32 {
        if let Some(id) = self.id(bytes) {
            return id;
        }
        let id = self.next_free_id();
        self.insert(id, bytes).expect("fresh id is free");
        id
    }

    /// The first id past the dense range that no token holds.
    fn next_free_id(&self) -> u32 {
        let mut id = self.tokens.len() as u32;
        while self.sparse.contains_key(&id) {
            id += 1;
        }
        id
    }

    /// Stores `bytes` at `id`, in the dense vector when `id` is near it, else in the sparse map.
    /// `what` names the token in an error; it is only called then (formatting every token's name
    /// up front was a tenth of a training run's instructions and of loading a vocabulary).
    fn place(&mut self, id: u32, bytes: &[u8], what: impl Fn() -> String) -> Result<()> {
        if id == u32::MAX {
            let what = what();
            return Err(Error::config(format!("{what}: id {id} is too large (ids go up to {})", u32::MAX - 1)));
        }
        let index = id as usize;
        let dense = self.tokens.len();
        if index >= dense && index < (dense * 2).max(dense + DENSE_SLACK) {
            self.tokens.resize(index + 1, None);
            // Ids that were far away are near now: move them into the vector.
            while let Some(entry) = self.sparse.first_entry() {
                if *entry.key() > id {
                    break;
                }
                let (k, bytes) = entry.remove_entry();
                self.tokens[k as usize] = Some(bytes);
            }
        }
        let taken =
            if index < self.tokens.len() { self.tokens[index].is_some() } else { self.sparse.contains_key(&id) };
        if taken {
            let what = what();
            return Err(Error::config(format!("{what}: id {id} is already taken")));
        }
        if index < self.tokens.len() {
            self.tokens[index] = Some(bytes.into());
        } else {
            self.sparse.insert(id, bytes.into());
        }
        self.n_vocab = self.n_vocab.max(index + 1);
        Ok(())
    }

    /// Makes room for `additional` more ordinary tokens at once: a reader that knows its count
    /// (262k pieces) saves the tables growing step by step (a tenth of such a load).
    pub fn reserve(&mut self, additional: usize) {
        self.tokens.reserve(additional);
        self.ids.reserve(additional / 16);
        self.short_ids.reserve(additional);
    }

    /// Places an ordinary token at a given id.
    pub fn insert(&mut self, id: u32, bytes: &[u8]) -> Result<()> {
        if bytes.is_empty() {
            // Its packed key would be the tables' empty slot.
            return Err(Error::config(format!("token {id} is empty; a token spells at least one byte")));
        }
        if let Some(other) = self.id(bytes) {
            return Err(Error::config(format!(
                "token {:?} has two ids, {other} and {id}",
                String::from_utf8_lossy(bytes)
            )));
        }
        self.place(id, bytes, || format!("token {:?}", String::from_utf8_lossy(bytes)))?;
        self.ordinary_count += 1;
        if bytes.len() <= SHORT {
            self.short_ids.insert(short_key(bytes), id);
            if id < HOT_IDS {
                self.hot.insert(short_key(bytes), id);
            }
            self.maybe_short.insert(short_key(bytes));
        } else if bytes.len() <= MID {
            self.mid_ids.insert(mid_key(bytes), id);
            self.maybe_mid.insert(mid_key(bytes).hash());
        } else {
            self.ids.insert(bytes.into(), id);
        }
        Ok(())
    }

    /// Adds a special token at the next free id, or at `id` if given. A special token given again
    /// keeps its id; a second string may share the id of an earlier special token (an alias).
    /// At the id of a control or unknown token spelled the same, it makes that token special as
    /// well — matched in text, left out by decoding that skips special tokens — while the model
    /// still knows it by its kind (a `tokenizer.json` lists its unknown piece among its added
    /// tokens).
    pub fn push_special(&mut self, text: &str, id: Option<u32>) -> Result<u32> {
        if let Some(&existing) = self.special_ids.get(text) {
            return match id {
                Some(id) if id != existing => {
                    Err(Error::config(format!("special token {text:?} is given two ids, {existing} and {id}")))
                }
                _ => Ok(existing),
            };
        }
        let id = match id {
            Some(id) => id,
            None => self.next_free_id(),
        };
        let kind_spelled_so = matches!(self.kinds.get(&id), Some(TokenKind::Unknown | TokenKind::Control))
            && self.token_bytes(id).is_ok_and(|b| b == text.as_bytes());
        if kind_spelled_so {
            if self.special_id_set.insert(id) {
                self.specials_on_kinds += 1;
            }
        } else if !self.special_id_set.contains(&id) {
            self.place(id, text.as_bytes(), || format!("special token {text:?}"))?;
            self.special_id_set.insert(id);
        }
        self.specials.push((text.to_string(), id));
        self.special_ids.insert(text.to_string(), id);
        Ok(id)
    }

    /// Adds a control, unknown, byte or unused token spelled `text` at `id`. Its spelling is
    /// what `token_bytes` returns and what templates name it by; the model never produces it
    /// from that spelling.
    pub fn push_kind(&mut self, text: &str, id: u32, kind: TokenKind) -> Result<()> {
        let what = format!("{} token {text:?}", kind.name());
        match kind {
            TokenKind::Normal | TokenKind::Special => {
                return Err(Error::config(format!("{what}: use insert or push_special")));
            }
            TokenKind::Byte(b) => {
                let table = self.byte_ids.get_or_insert_with(|| Box::new([u32::MAX; 256]));
                if table[b as usize] != u32::MAX {
                    return Err(Error::config(format!(
                        "{what}: byte {b:#04x} already has token {}",
                        table[b as usize]
                    )));
                }
            }
            _ => {}
        }
        if let Some(&other) = self.kind_ids.get(text) {
            return Err(Error::config(format!("{what} has two ids, {other} and {id}")));
        }
        self.place(id, text.as_bytes(), || what.clone())?;
        if let TokenKind::Byte(b) = kind {
            self.byte_ids.as_mut().expect("made above")[b as usize] = id;
        }
        self.kinds.insert(id, kind);
        self.kind_ids.insert(text.to_string(), id);
        Ok(())
    }

    /// What the token at `id` is (`None` if no token holds the id).
    pub fn kind(&self, id: u32) -> Option<TokenKind> {
        if let Some(&kind) = self.kinds.get(&id) {
            return Some(kind);
        }
        if self.special_id_set.contains(&id) {
            return Some(TokenKind::Special);
        }
        self.token_bytes(id).ok().map(|_| TokenKind::Normal)
    }

    /// The id of the token of kind control, unknown, byte or unused spelled `text`.
    pub fn kind_id(&self, text: &str) -> Option<u32> {
        self.kind_ids.get(text).copied()
    }

    /// The byte token for byte `b` (byte fallback).
    #[inline]
    pub fn byte_id(&self, b: u8) -> Option<u32> {
        self.byte_ids.as_ref().map(|t| t[b as usize]).filter(|&id| id != u32::MAX)
    }

    /// Whether the vocabulary has a byte token for every byte value.
    pub fn has_all_bytes(&self) -> bool {
        self.byte_ids.as_ref().is_some_and(|t| t.iter().all(|&id| id != u32::MAX))
    }

    /// (id, spelling, kind) of every control, unknown, byte and unused token, in id order.
    pub fn kinded(&self) -> Vec<(u32, &str, TokenKind)> {
        let mut out: Vec<(u32, &str, TokenKind)> =
            self.kind_ids.iter().map(|(text, &id)| (id, text.as_str(), self.kinds[&id])).collect();
        out.sort_unstable_by_key(|&(id, _, _)| id);
        out
    }

    /// Number of ids (one past the largest id).
    pub fn n_vocab(&self) -> usize {
        self.n_vocab
    }

    /// The ids below this are kept in a vector (most vocabularies: all of them).
    pub fn dense_len(&self) -> usize {
        self.tokens.len()
    }

    /// Number of ids that hold a token.
    pub fn len(&self) -> usize {
        self.ordinary_count + self.special_id_set.len() - self.specials_on_kinds + self.kinds.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn token_bytes(&self, id: u32) -> Result<&[u8]> {
        let found = match self.tokens.get(id as usize) {
            Some(slot) => slot.as_deref(),
            None => self.sparse.get(&id).map(|b| &b[..]),
        };
        found.ok_or(if (id as usize) < self.n_vocab {
            Error::UnusedId { id, n_vocab: self.n_vocab }
        } else {
            Error::IdOutOfRange { id, n_vocab: self.n_vocab }
        })
    }

    /// The id of an ordinary token.
    #[inline]
    pub fn id(&self, bytes: &[u8]) -> Option<u32> {
        if bytes.len() <= SHORT {
            self.short_id(short_key(bytes))
        } else if bytes.len() <= MID {
            self.mid_id(mid_key(bytes))
        } else {
            self.ids.get(bytes).copied()
        }
    }

    /// The id of the ordinary token spelled by two short strings one after the other, given as
    /// their `short_token_key`s: what `id` answers for the joined bytes, without the bytes.
    #[inline]
    pub(crate) fn joined_id(&self, left: u64, right: u64) -> Option<u32> {
        let (left_len, right_len) = (left >> 56, right >> 56);
        let len = left_len + right_len;
        let low = |key: u64| key & ((1 << 56) - 1);
        let joined = low(left) as u128 | (low(right) as u128) << (8 * left_len);
        if len <= SHORT as u64 {
            self.short_id(joined as u64 | len << 56)
        } else {
            // As `mid_key`: the first eight bytes, then the rest's short key (length len - 8).
            self.mid_id((joined as u64, (joined >> 64) as u64 | (len - 8) << 56 | 1 << 63))
        }
    }

    /// The id of the token of at most 7 bytes with this `short_key`.
    #[inline(always)]
    fn short_id(&self, key: u64) -> Option<u32> {
        if !self.maybe_short.contains(key) {
            return None;
        }
        self.hot.get(key).or_else(|| self.short_ids.get(key))
    }

    /// The id of the token of 8 to 15 bytes with this `mid_key`.
    #[inline(always)]
    fn mid_id(&self, key: (u64, u64)) -> Option<u32> {
        if !self.maybe_mid.contains(key.hash()) {
            return None;
        }
        self.mid_ids.get(key)
    }

    /// The id of a token of any kind spelled `bytes`: ordinary first, then special, then the
    /// other kinds.
    pub fn any_id(&self, bytes: &[u8]) -> Option<u32> {
        self.id(bytes).or_else(|| {
            let text = std::str::from_utf8(bytes).ok()?;
            self.special_id(text).or_else(|| self.kind_id(text))
        })
    }

    /// The id of a special token.
    pub fn special_id(&self, text: &str) -> Option<u32> {
        self.special_ids.get(text).copied()
    }

    pub fn specials(&self) -> &[(String, u32)] {
        &self.specials
    }

    pub fn is_special(&self, id: u32) -> bool {
        self.special_id_set.contains(&id)
    }

    /// Every id that holds a token, in increasing order.
    pub fn ids_in_order(&self) -> impl Iterator<Item = u32> + '_ {
        let near = self.tokens.iter().enumerate().filter(|(_, t)| t.is_some()).map(|(id, _)| id as u32);
        near.chain(self.sparse.keys().copied())
    }

    /// (id, bytes) of every ordinary token in id order.
    pub fn ordinary(&self) -> impl Iterator<Item = (u32, &[u8])> + '_ {
        self.ids_in_order()
            .filter(move |&id| !self.is_special(id) && !self.kinds.contains_key(&id))
            .map(move |id| (id, self.token_bytes(id).expect("listed ids hold tokens")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn far_ids_are_stored_sparsely_and_move_in_when_reached() {
        let mut v = Vocab::default();
        v.insert(0, b"a").unwrap();
        v.push_special("<far>", Some(4_000_000_000)).unwrap();
        v.insert(3_000_000, b"b").unwrap();
        assert!(v.dense_len() < 1 << 20, "dense range grew to {}", v.dense_len());
        assert_eq!(v.n_vocab(), 4_000_000_001);
        assert_eq!(v.token_bytes(3_000_000).unwrap(), b"b");
        assert_eq!(v.any_id(b"<far>"), Some(4_000_000_000));
        assert!(v.insert(3_000_000, b"c").is_err());
        assert!(v.push_special("<max>", Some(u32::MAX)).is_err());
        // Filling the ids up to a far one moves it into the vector.
        for i in 1..70_000u32 {
            v.push(format!("t{i}").as_bytes());
        }
        v.insert(200_000, b"z").unwrap();
        let ids: Vec<u32> = v.ids_in_order().collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(ids.last(), Some(&4_000_000_000));
        assert_eq!(v.ordinary().count(), v.len() - 1);
    }

    /// An id already taken, or too large, is refused with the token named (the name is only
    /// formatted when there is an error to report).
    #[test]
    fn a_refused_id_names_its_token() {
        let mut v = Vocab::default();
        v.insert(7, "日本".as_bytes()).unwrap();
        let message = |e: Error| e.to_string();
        let taken = message(v.insert(7, "語".as_bytes()).unwrap_err());
        assert!(taken.contains("token \"語\"") && taken.contains("id 7 is already taken"), "{taken}");
        let special = message(v.push_special("<s>", Some(7)).unwrap_err());
        assert!(special.contains("special token \"<s>\"") && special.contains("already taken"), "{special}");
        let max = message(v.insert(u32::MAX, b"x").unwrap_err());
        assert!(max.contains("token \"x\"") && max.contains("too large"), "{max}");
        let kind = message(v.push_kind("<unk>", 7, TokenKind::Unknown).unwrap_err());
        assert!(kind.contains("<unk>") && kind.contains("already taken"), "{kind}");
    }

    #[test]
    fn kinds_keep_their_spellings_apart_from_ordinary_tokens() {
        let mut v = Vocab::default();
        v.insert(0, b"A").unwrap();
        v.insert(1, b"<0x41>").unwrap();
        v.push_kind("<0x41>", 2, TokenKind::parse("byte", "<0x41>").unwrap()).unwrap();
        v.push_kind("<s>", 3, TokenKind::Control).unwrap();
        v.push_kind("<unk>", 4, TokenKind::Unknown).unwrap();
        assert_eq!(v.id(b"<0x41>"), Some(1), "the ordinary spelling stays ordinary");
        assert_eq!(v.byte_id(b'A'), Some(2));
        assert_eq!(v.byte_id(b'B'), None);
        assert_eq!(v.kind(2), Some(TokenKind::Byte(0x41)));
        assert_eq!(v.kind(3), Some(TokenKind::Control));
        assert_eq!(v.kind(0), Some(TokenKind::Normal));
        assert_eq!(v.kind(9), None);
        assert_eq!(v.any_id(b"<s>"), Some(3));
        assert_eq!(v.id(b"<s>"), None, "a control token is never an ordinary match");
        assert_eq!(v.token_bytes(4).unwrap(), b"<unk>");
        assert_eq!(v.len(), 5);
        assert_eq!(v.ordinary().count(), 2);
        assert!(v.push_kind("<0x41>", 5, TokenKind::Byte(0x41)).is_err(), "byte given twice");
        assert!(v.push_kind("<s>", 6, TokenKind::Control).is_err(), "spelling given twice");
        assert!(TokenKind::parse("byte", "<0x4>").is_err());
        assert!(TokenKind::parse("glyph", "x").is_err());
        assert_eq!(v.kinded().iter().map(|k| k.0).collect::<Vec<_>>(), vec![2, 3, 4]);
    }

    #[test]
    fn aliases_share_an_id_and_decode_to_the_first() {
        let mut v = Vocab::default();
        v.push(b"x");
        assert_eq!(v.push_special("<|endofprompt|>", Some(7)).unwrap(), 7);
        assert_eq!(v.push_special("<|reserved_7|>", Some(7)).unwrap(), 7);
        assert_eq!(v.push_special("<|endofprompt|>", None).unwrap(), 7);
        assert!(v.push_special("<|endofprompt|>", Some(8)).is_err());
        assert!(v.push_special("<|y|>", Some(0)).is_err(), "an ordinary token's id is not free");
        assert_eq!(v.token_bytes(7).unwrap(), b"<|endofprompt|>");
        assert_eq!(v.specials().len(), 2);
        assert_eq!(v.len(), 2);
        assert!(v.is_special(7) && !v.is_special(0));
    }

    #[test]
    fn every_length_and_nul_bytes_find_their_id() {
        let mut v = Vocab::default();
        let mut tokens: Vec<Vec<u8>> = Vec::new();
        for len in 1..=20 {
            tokens.push(vec![0; len]);
            tokens.push((0..len as u8).map(|b| b.wrapping_mul(31) ^ 0xA5).collect());
        }
        // Enough tokens to make every table grow several times.
        tokens.extend((0..5000u32).map(|k| format!("t{k}").into_bytes()));
        tokens.extend((0..5000u32).map(|k| format!("long token {k:06}").into_bytes()));
        for t in &tokens {
            v.push(t);
        }
        for (id, t) in tokens.iter().enumerate() {
            assert_eq!(v.id(t), Some(id as u32), "{:?}", String::from_utf8_lossy(t));
        }
        assert_eq!(v.id(&[0; 21]), None);
        assert_eq!(v.id(b"t5000"), None);
    }

    #[test]
    fn joined_keys_find_what_joined_bytes_find() {
        // Strings of 1 to 7 bytes (NUL and high bytes included) and, as tokens, some of them and
        // some of their concatenations (short and mid lengths): a joined look-up must answer
        // as the look-up of the joined bytes does, found or not.
        let parts: Vec<Vec<u8>> = (1..=7)
            .flat_map(|len| {
                [
                    vec![0u8; len],
                    (0..len as u8).map(|b| b.wrapping_mul(37) ^ 0xC3).collect(),
                    vec![b'a' + len as u8; len],
                ]
            })
            .collect();
        let mut v = Vocab::default();
        for (i, a) in parts.iter().enumerate() {
            v.push(a);
            for (j, b) in parts.iter().enumerate() {
                if (i + j) % 3 == 0 {
                    let joined = [a.as_slice(), b].concat();
                    if v.id(&joined).is_none() {
                        v.push(&joined);
                    }
                }
            }
        }
        let mut found = 0;
        for a in &parts {
            for b in &parts {
                let key = |s: &[u8]| short_token_key(s).expect("short");
                let expected = v.id(&[a.as_slice(), b].concat());
                assert_eq!(v.joined_id(key(a), key(b)), expected, "{a:?} + {b:?}");
                found += expected.is_some() as usize;
            }
        }
        assert!(found > parts.len() * parts.len() / 4, "{found} joined tokens");
        assert_eq!(short_token_key(b"12345678"), None);
    }

    #[test]
    fn short_keys_are_distinct_for_all_short_lengths() {
        let samples: [&[u8]; 12] = [
            b"",
            b"a",
            b"ab",
            b"abc",
            b"abcd",
            b"abcde",
            b"abcdef",
            b"abcdefg",
            b"\0",
            b"aaaaaaaa",
            b"aaaaaaaaa",
            b"abcdefghijklmnopq",
        ];
        let short: Vec<&[u8]> = samples.iter().copied().filter(|s| s.len() <= SHORT).collect();
        let keys: rustc_hash::FxHashSet<u64> = short.iter().map(|s| short_key(s)).collect();
        assert_eq!(keys.len(), short.len());
        assert_ne!(short_key(b"ab\0"), short_key(b"ab"));
        let mut v = Vocab::default();
        for s in &samples[1..] {
            v.push(s);
        }
        for s in &samples[1..] {
            assert_eq!(v.token_bytes(v.id(s).unwrap()).unwrap(), *s);
        }
    }
}
