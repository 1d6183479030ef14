//! One long text encoded on several threads: cut where a piece must start anyway, so the parts
//! encode, apart, to the ids the whole encodes to (a 1 MB document on two cores then takes about
//! half the time, as it would as two documents of a batch).

use crate::error::Result;
use crate::tokenizer::Tokenizer;

/// Texts (between special tokens) at least this long are encoded in parts where they can be.
pub const PARALLEL_TEXT: usize = 256 << 10;

/// About how many bytes each part holds: large enough that handing it to a thread costs
/// nothing measurable, small enough that parts end together.
const PART_BYTES: usize = 128 << 10;

impl Tokenizer {
    /// Whether this tokenizer's ids of a text cut at `safe_cut` places equal the
    /// ids of the whole: pieces that start there (`PreTokenizer::piece_starts`), nothing before
    /// the pieces that reads across them (no normalizer, no added tokens matched in normalized
    /// text), and a model whose cut of a piece depends on the piece alone (BPE).
    pub(crate) fn encodes_in_parts(&self) -> bool {
        self.splitter.normalizer.is_identity()
            && self.splitter.specials.after_normalizing().is_none()
            && self.splitter.pretokenizer.piece_starts().is_some()
            && self.model().as_bpe().is_some()
    }

    /// Appends the ids of `text` (ordinary text, no special tokens in it) encoded in parts on
    /// `threads` threads of the pool, a round of `threads` parts at a time; `check` runs between
    /// rounds (a Ctrl-C stops the work there).
    pub(crate) fn encode_in_parts(
        &self,
        text: &str,
        threads: usize,
        out: &mut Vec<u32>,
        check: &mut dyn FnMut() -> Result<()>,
    ) -> Result<()> {
        let line_feeds = self.splitter.pretokenizer.piece_starts() == Some(true);
        let parts = cut(text, PART_BYTES, line_feeds);
        let pool = crate::util::threads::pool();
        for round in parts.chunks(threads) {
            let mut ids: Vec<Result<Vec<u32>>> = round.iter().map(|_| Ok(Vec::new())).collect();
            pool.in_place_scope(|scope| {
                for (ids, &part) in ids.iter_mut().zip(round) {
                    scope.spawn(move |_| {
                        let mut own = Vec::with_capacity(part.len() / 3);
                        *ids = self.encode_text(part, false, None, &mut own, &mut || Ok(())).map(|()| own);
                    });
                }
            });
            for part in ids {
                out.extend(part?);
            }
            check()?;
        }
        Ok(())
    }
}

/// `text` in parts of about `size` bytes, each after the first starting at a `safe_cut` (a part
/// runs on to the next one).
fn cut(text: &str, size: usize, line_feeds: bool) -> Vec<&str> {
    let mut parts = Vec::with_capacity(text.len() / size + 1);
    let mut start = 0;
    while let Some(at) = safe_cut(text, start + size, line_feeds) {
        parts.push(&text[start..at]);
        start = at;
    }
    parts.push(&text[start..]);
    parts
}

/// The first place at or after `from` where a tiktoken-style preset starts a piece: at a space
/// between an ASCII letter or digit and an ASCII letter (the space begins the next word's piece;
/// the one before ends with its letters or digits), or, with `line_feeds`, right after a line
/// feed that a character other than whitespace follows. See `PreTokenizer::piece_starts`.
fn safe_cut(text: &str, from: usize, line_feeds: bool) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = from.max(1);
    while at < bytes.len() {
        let (before, here) = (bytes[at - 1], bytes[at]);
        if before == b'\n' && line_feeds {
            if let Some(c) = text.get(at..).and_then(|rest| rest.chars().next()) {
                if !c.is_whitespace() {
                    return Some(at);
                }
            }
        } else if here == b' '
            && before.is_ascii_alphanumeric()
            && bytes.get(at + 1).is_some_and(|b| b.is_ascii_alphabetic())
        {
            return Some(at);
        }
        at += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_only_where_a_piece_must_start() {
        let text = "ab\n\ncd\n ef\ngh\n";
        assert_eq!(safe_cut(text, 0, true), Some(4));
        assert_eq!(safe_cut(text, 5, true), Some(11));
        assert_eq!(safe_cut(text, 12, true), None);
        assert_eq!(cut(text, 3, true), vec!["ab\n\n", "cd\n ef\n", "gh\n"]);
        assert_eq!(cut(text, 3, false), vec![text]);
        assert_eq!(cut("nofeedatall", 2, true), vec!["nofeedatall"]);
        // A character after the feed may be several bytes; a cut never splits one.
        assert_eq!(cut("x\né\n\u{3000}y\nz", 1, true), vec!["x\n", "é\n\u{3000}y\n", "z"]);
        // Spaces: only between an ASCII letter or digit and an ASCII letter.
        assert_eq!(cut("a b 1 2 c, d  e 3x", 1, false), vec!["a", " b 1 2", " c, d  e 3x"]);
    }
}
