//! The id space shared by every model: id → token bytes, bytes → id, and the special tokens.

use crate::error::{Error, Result};
use rustc_hash::FxHashMap;

/// Ordinary tokens (what the subword model produces) and special tokens (matched in raw text,
/// never produced by the model) in one id space. Ids may have gaps (tiktoken's special ids do).
#[derive(Debug, Clone, Default)]
pub struct Vocab {
    tokens: Vec<Option<Box<[u8]>>>,
    ids: FxHashMap<Box<[u8]>, u32>,
    /// Tokens of up to 7 bytes again, keyed by their bytes packed into a u64: the encoder's
    /// whole-piece and single-byte look-ups hash one integer and compare no memory.
    short_ids: FxHashMap<u64, u32>,
    specials: Vec<(String, u32)>,
}

const SHORT: usize = 7;

/// `bytes` (at most 7) packed little-endian with the length in the top byte.
#[inline(always)]
fn short_key(bytes: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    buf[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(buf) | ((bytes.len() as u64) << 56)
}

impl Vocab {
    /// Adds an ordinary token; returns its id (the existing one if the bytes are already there).
    pub fn push(&mut self, bytes: &[u8]) -> u32 {
        if let Some(&id) = self.ids.get(bytes) {
            return id;
        }
        let id = self.tokens.len() as u32;
        self.insert(id, bytes).expect("fresh id is free");
        id
    }

    /// Places an ordinary token at a given id.
    pub fn insert(&mut self, id: u32, bytes: &[u8]) -> Result<()> {
        let slot = id as usize;
        if slot >= self.tokens.len() {
            self.tokens.resize(slot + 1, None);
        }
        if self.tokens[slot].is_some() {
            return Err(Error::config(format!("token id {id} is assigned twice")));
        }
        if let Some(&other) = self.ids.get(bytes) {
            return Err(Error::config(format!("token {:?} has two ids, {other} and {id}", String::from_utf8_lossy(bytes))));
        }
        self.tokens[slot] = Some(bytes.into());
        self.ids.insert(bytes.into(), id);
        if bytes.len() <= SHORT {
            self.short_ids.insert(short_key(bytes), id);
        }
        Ok(())
    }

    /// Adds a special token at the next free id, or at `id` if given.
    pub fn push_special(&mut self, text: &str, id: Option<u32>) -> Result<u32> {
        if let Some(&(_, existing)) = self.specials.iter().find(|(t, _)| t == text) {
            return Ok(existing);
        }
        let id = id.unwrap_or(self.tokens.len() as u32);
        let slot = id as usize;
        if slot >= self.tokens.len() {
            self.tokens.resize(slot + 1, None);
        }
        if self.tokens[slot].is_some() {
            return Err(Error::config(format!("special token {text:?}: id {id} is already taken")));
        }
        self.tokens[slot] = Some(text.as_bytes().into());
        self.specials.push((text.to_string(), id));
        Ok(id)
    }

    /// Number of ids (one past the largest id).
    pub fn n_vocab(&self) -> usize {
        self.tokens.len()
    }

    /// Number of ids that hold a token.
    pub fn len(&self) -> usize {
        self.ids.len() + self.specials.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn token_bytes(&self, id: u32) -> Result<&[u8]> {
        match self.tokens.get(id as usize) {
            Some(Some(bytes)) => Ok(bytes),
            _ => Err(Error::IdOutOfRange { id, n_vocab: self.tokens.len() }),
        }
    }

    /// The id of an ordinary token.
    #[inline]
    pub fn id(&self, bytes: &[u8]) -> Option<u32> {
        if bytes.len() <= SHORT {
            self.short_ids.get(&short_key(bytes)).copied()
        } else {
            self.ids.get(bytes).copied()
        }
    }

    /// The id of an ordinary or special token.
    pub fn any_id(&self, bytes: &[u8]) -> Option<u32> {
        self.id(bytes).or_else(|| self.specials.iter().find(|(t, _)| t.as_bytes() == bytes).map(|&(_, id)| id))
    }

    pub fn specials(&self) -> &[(String, u32)] {
        &self.specials
    }

    pub fn is_special(&self, id: u32) -> bool {
        self.specials.iter().any(|&(_, s)| s == id)
    }

    /// (id, bytes) of every ordinary token in id order.
    pub fn ordinary(&self) -> impl Iterator<Item = (u32, &[u8])> + '_ {
        self.tokens.iter().enumerate().filter_map(move |(id, t)| {
            let id = id as u32;
            match t {
                Some(bytes) if !self.is_special(id) => Some((id, &bytes[..])),
                _ => None,
            }
        })
    }
}
