//! `Encoding`: what a model is fed for one input — ids and everything aligned with them — and
//! the three operations the post-processing stage performs on it: cutting it into windows,
//! joining two of them, and padding.
//!
//! The window, join and padding rules are Hugging Face `tokenizers`' (so that a loaded
//! `tokenizer.json` gives the same arrays), including how overflowing windows combine when two
//! sequences are joined: every window of the first with the whole second and with each of its
//! windows, then the whole first with each window of the second.

use std::ops::Range;

/// One input after the model and the post-processor. All vectors have one entry per token.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Encoding {
    pub ids: Vec<u32>,
    pub type_ids: Vec<u32>,
    /// Character offsets `(start, end)` into the original text; `(0, 0)` for inserted tokens.
    pub offsets: Vec<(u32, u32)>,
    /// The pre-tokenized piece (word) each token came from; `None` for inserted tokens.
    pub word_ids: Vec<Option<u32>>,
    /// 1 for tokens inserted by the template or padding.
    pub special_tokens_mask: Vec<u8>,
    /// 0 for padding.
    pub attention_mask: Vec<u8>,
    /// Which input (0 or 1) each stretch of tokens came from.
    pub sequence_ranges: Vec<(u8, Range<usize>)>,
    /// The windows cut off by truncation, each post-processed like this one.
    pub overflowing: Vec<Encoding>,
    /// Tokens shown as the text they matched rather than as the vocabulary spells them, by
    /// position, in order (Hugging Face's `Encoding.tokens` for an added token found in text —
    /// with the whitespace it took in, normalized if it is matched so — and for Unigram's
    /// unknown token). Few or none, so kept apart from the per-token arrays.
    pub surfaces: Vec<(u32, Box<str>)>,
}

/// Which end truncation cuts from, or padding adds to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Left,
    #[default]
    Right,
}

impl Encoding {
    /// The tokens of a text as the model produced them (before any template).
    pub fn from_model(ids: Vec<u32>, offsets: Vec<(u32, u32)>, word_ids: Vec<Option<u32>>) -> Self {
        let n = ids.len();
        Encoding {
            type_ids: vec![0; n],
            special_tokens_mask: vec![0; n],
            attention_mask: vec![1; n],
            ids,
            offsets,
            word_ids,
            sequence_ranges: Vec::new(),
            overflowing: Vec::new(),
            surfaces: Vec::new(),
        }
    }

    /// Inserted tokens (a template's special tokens): no offsets, no words.
    pub fn inserted(ids: &[u32], type_id: u32) -> Self {
        let n = ids.len();
        Encoding {
            ids: ids.to_vec(),
            type_ids: vec![type_id; n],
            offsets: vec![(0, 0); n],
            word_ids: vec![None; n],
            special_tokens_mask: vec![1; n],
            attention_mask: vec![1; n],
            sequence_ranges: Vec::new(),
            overflowing: Vec::new(),
            surfaces: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// How many inputs the encoding holds (1 when no ranges are recorded).
    pub fn n_sequences(&self) -> usize {
        self.sequence_ranges.len().max(1)
    }

    /// Marks every token as coming from input `sequence`.
    pub fn set_sequence_id(&mut self, sequence: u8) {
        self.sequence_ranges.retain(|(s, _)| *s != sequence);
        self.sequence_ranges.push((sequence, 0..self.len()));
    }

    /// The input each token came from: for each input number below `n_sequences`, its recorded
    /// range, or the whole encoding when none is recorded (Hugging Face's reading of the ranges,
    /// kept so that the arrays agree). Tokens outside every range are `None`.
    pub fn sequence_ids(&self) -> Vec<Option<u8>> {
        let mut out = vec![None; self.len()];
        for sequence in 0..self.n_sequences() as u8 {
            let range = self
                .sequence_ranges
                .iter()
                .rev()
                .find(|(s, _)| *s == sequence)
                .map_or(0..self.len(), |(_, r)| r.clone());
            for slot in &mut out[range] {
                *slot = Some(sequence);
            }
        }
        out
    }

    fn slice(&self, range: Range<usize>) -> Encoding {
        Encoding {
            ids: self.ids[range.clone()].to_vec(),
            type_ids: self.type_ids[range.clone()].to_vec(),
            offsets: self.offsets[range.clone()].to_vec(),
            word_ids: self.word_ids[range.clone()].to_vec(),
            special_tokens_mask: self.special_tokens_mask[range.clone()].to_vec(),
            attention_mask: self.attention_mask[range.clone()].to_vec(),
            sequence_ranges: Vec::new(),
            overflowing: Vec::new(),
            surfaces: self
                .surfaces
                .iter()
                .filter(|(at, _)| range.contains(&(*at as usize)))
                .map(|(at, text)| (at - range.start as u32, text.clone()))
                .collect(),
        }
    }

    /// Keeps `max_len` tokens; what is cut off becomes overflowing windows of `max_len` tokens
    /// that overlap their neighbour by `stride` tokens. Callers check `stride < max_len`.
    pub fn truncate(&mut self, max_len: usize, stride: usize, side: Side) {
        let len = self.len();
        if max_len >= len {
            return;
        }
        if max_len == 0 {
            let all = std::mem::take(self);
            self.overflowing.push(all);
            return;
        }
        debug_assert!(stride < max_len);
        let step = max_len - stride;
        let mut windows: Vec<Range<usize>> = Vec::new();
        match side {
            Side::Right => {
                let mut start = 0;
                loop {
                    let stop = (start + max_len).min(len);
                    windows.push(start..stop);
                    if stop == len {
                        break;
                    }
                    start += step;
                }
            }
            Side::Left => {
                let mut stop = len;
                loop {
                    let start = stop.saturating_sub(max_len);
                    windows.push(start..stop);
                    if start == 0 || stop <= step {
                        break;
                    }
                    stop -= step;
                }
            }
        }
        let mut first = self.slice(windows[0].clone());
        first.overflowing = windows[1..].iter().map(|w| self.slice(w.clone())).collect();
        *self = first;
    }

    /// Appends `other`, combining overflowing windows as described at the top of this file.
    /// (Joined windows keep the windows their own joins produce, as Hugging Face's do.)
    pub fn merge_with(&mut self, other: Encoding) {
        let mut windows = Vec::new();
        for mine in &self.overflowing {
            let mut joined = mine.clone();
            joined.merge_with(other.clone());
            windows.push(joined);
            for theirs in &other.overflowing {
                let mut joined = mine.clone();
                joined.merge_with(theirs.clone());
                windows.push(joined);
            }
        }
        for theirs in &other.overflowing {
            let mut joined = self.clone();
            joined.merge_with(theirs.clone());
            windows.push(joined);
        }
        let base = self.len();
        // A map from input to range, as Hugging Face keeps it: the joined encoding's range for an
        // input replaces one this encoding had for the same input.
        for (s, r) in other.sequence_ranges {
            self.sequence_ranges.retain(|(mine, _)| *mine != s);
            self.sequence_ranges.push((s, r.start + base..r.end + base));
        }
        self.ids.extend(other.ids);
        self.type_ids.extend(other.type_ids);
        self.offsets.extend(other.offsets);
        self.word_ids.extend(other.word_ids);
        self.special_tokens_mask.extend(other.special_tokens_mask);
        self.attention_mask.extend(other.attention_mask);
        self.surfaces.extend(other.surfaces.into_iter().map(|(at, text)| (at + base as u32, text)));
        self.overflowing = windows;
    }

    /// Pads to `target` tokens (and every overflowing window too) with `pad_id`, whose token
    /// string is `pad_token` (as Hugging Face reports it, whatever the vocabulary calls that id).
    pub fn pad(&mut self, target: usize, pad_id: u32, pad_type_id: u32, pad_token: &str, side: Side) {
        for window in &mut self.overflowing {
            window.pad(target, pad_id, pad_type_id, pad_token, side);
        }
        let Some(n) = target.checked_sub(self.len()).filter(|&n| n > 0) else {
            return;
        };
        fn grow<T: Clone>(v: &mut Vec<T>, n: usize, value: T, side: Side) {
            match side {
                Side::Right => v.extend(std::iter::repeat_n(value, n)),
                Side::Left => {
                    v.splice(0..0, std::iter::repeat_n(value, n));
                }
            }
        }
        grow(&mut self.ids, n, pad_id, side);
        grow(&mut self.type_ids, n, pad_type_id, side);
        grow(&mut self.offsets, n, (0, 0), side);
        grow(&mut self.word_ids, n, None, side);
        grow(&mut self.special_tokens_mask, n, 1, side);
        grow(&mut self.attention_mask, n, 0, side);
        let start = match side {
            Side::Right => self.len() - n,
            Side::Left => 0,
        };
        if side == Side::Left {
            for (_, range) in &mut self.sequence_ranges {
                *range = range.start + n..range.end + n;
            }
            for (at, _) in &mut self.surfaces {
                *at += n as u32;
            }
        }
        let pads = (start..start + n).map(|at| (at as u32, Box::<str>::from(pad_token)));
        match side {
            Side::Right => self.surfaces.extend(pads),
            Side::Left => {
                self.surfaces.splice(0..0, pads);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(n: u32) -> Encoding {
        let ids: Vec<u32> = (0..n).collect();
        let offsets = ids.iter().map(|&i| (i, i + 1)).collect();
        let words = ids.iter().map(|&i| Some(i)).collect();
        Encoding::from_model(ids, offsets, words)
    }

    #[test]
    fn windows_overlap_by_stride_from_either_side() {
        let mut e = tokens(10);
        e.truncate(4, 1, Side::Right);
        let windows: Vec<Vec<u32>> =
            std::iter::once(e.ids.clone()).chain(e.overflowing.iter().map(|o| o.ids.clone())).collect();
        assert_eq!(windows, [vec![0, 1, 2, 3], vec![3, 4, 5, 6], vec![6, 7, 8, 9]]);
        let mut e = tokens(10);
        e.truncate(4, 2, Side::Left);
        let windows: Vec<Vec<u32>> =
            std::iter::once(e.ids.clone()).chain(e.overflowing.iter().map(|o| o.ids.clone())).collect();
        assert_eq!(windows, [vec![6, 7, 8, 9], vec![4, 5, 6, 7], vec![2, 3, 4, 5], vec![0, 1, 2, 3]]);
    }

    #[test]
    fn joining_combines_windows_and_padding_reaches_them() {
        let mut a = tokens(3);
        a.truncate(2, 0, Side::Right);
        let mut b = tokens(3);
        b.truncate(2, 0, Side::Right);
        a.merge_with(b);
        assert_eq!(a.ids, [0, 1, 0, 1]);
        let windows: Vec<Vec<u32>> = a.overflowing.iter().map(|o| o.ids.clone()).collect();
        assert_eq!(windows, [vec![2, 0, 1], vec![2, 2], vec![0, 1, 2]]);
        a.pad(5, 9, 0, "[PAD]", Side::Left);
        assert_eq!(a.ids, [9, 0, 1, 0, 1]);
        assert_eq!(a.attention_mask, [0, 1, 1, 1, 1]);
        assert!(a.overflowing.iter().all(|o| o.len() == 5));
    }
}
