//! The pieces of the cl100k family (cl100k, Llama 3, Qwen 2), the o200k family (o200k,
//! Mistral's tekken) and GPT-2's pattern found 64 bytes at a time.
//!
//! Why: the character-at-a-time splitter (`presets.rs`) decides each piece with a chain of
//! branches the processor mispredicts about once a piece — a third of encoding time on English.
//! On ASCII text the pattern's alternatives reduce to facts about each byte and the one or two
//! before it, so a whole window's piece starts can be computed at once from seven class masks
//! (bit k = byte `pos + k`), and the pieces read off with `trailing_zeros`.
//!
//! A window starts at a byte known to start a piece (`pos`); the regex matches forward only, so
//! what comes before `pos` never matters. On the window's ASCII prefix (up to the first
//! non-ASCII byte, the text's end, or 64 bytes), with O = ASCII that is neither letter, digit nor
//! `\s` (the apostrophe included) and N = `\r`/`\n`:
//!
//! - a letter run starts a piece, unless the byte before is a space or tab-like `\s` (it is then
//!   the piece's first byte: `[^\r\n\p{L}\p{N}]?`), or an O byte that itself starts a piece;
//! - an O byte starts a piece unless it follows an O byte (same run: `[^\s\p{L}\p{N}]++`) or a
//!   space (` ?` takes the space in front);
//! - a digit run starts a piece, and so does every third digit in it (`\p{N}{1,3}`; Qwen 2:
//!   every digit);
//! - the N bytes right after an O run belong to its piece (`[\r\n]*`);
//! - of the other whitespace, each run starts a piece, so do the byte after its last N
//!   (`\s*[\r\n]`) and its last byte (`\s+(?!\S)` leaves it to the next alternative or piece);
//! - an apostrophe that starts a piece and is followed by `s d m t ll ve re` (any case) is a
//!   piece of its own (`'(?i:[sdmt]|ll|ve|re)`), so the byte after it starts one.
//!
//! The o200k family differs in three ways: an uppercase letter right after a lowercase one
//! starts a piece (`[A-Z]*[a-z]+|[A-Z]+[a-z]*`: words split where the case goes back up); the
//! `/` and N bytes right after an O run belong to its piece (`[\r\n/]*`); a contraction is the
//! end of the word before it (`(?i:'s|'t|'re|'ve|'m|'ll|'d)?`), so its apostrophe starts no
//! piece and the byte after it does (o200k; tekken has none).
//!
//! GPT-2's pattern is simpler: only a space goes in front of a letter, digit or O run
//! (` ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++`), digit runs are whole, N is whitespace like
//! any other, and its contractions are lowercase.
//!
//! Only a whitespace run that reaches the prefix's end depends on what follows (its last byte,
//! its last N, the end of the text: `\s++$`), so starts after such a run's first byte are not
//! trusted (in the o200k family, nor those from an apostrophe after a word on, when the bytes
//! that would make it a contraction are not all in the prefix); the last trusted start becomes the next window's `pos`, and the piece from it is
//! found again there. Where no piece ends inside a window (a long run, non-ASCII text), the
//! character-at-a-time splitter takes one piece. `mod.rs`'s tests check this against it and
//! against the reference regex on generated text, at every offset in a window.

/// Which bytes of a window are in each class the pattern asks about.
struct Masks {
    letter: u64,
    upper: u64,
    digit: u64,
    space: u64,
    /// `\t`, `\v`, `\f`: whitespace that is neither a space (which ` ?` takes) nor N.
    tab: u64,
    newline: u64,
    apostrophe: u64,
    slash: u64,
    /// Bytes at or above 0x80.
    high: u64,
}

/// Class masks of 64 bytes, sixteen at a time with SSE2 (every x86-64 has it).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify(window: &[u8; 64]) -> Masks {
    use std::arch::x86_64::*;
    let mut m = [0u64; 9];
    for q in 0..4 {
        // SAFETY: SSE2 is part of x86-64; the load reads 16 of the window's 64 bytes.
        unsafe {
            let v = _mm_loadu_si128(window.as_ptr().add(16 * q).cast());
            // A byte in [lo, lo + n): shifted so that lo lands on -128, a signed compare with
            // -128 + n (no unsigned byte compare in SSE2). Non-ASCII bytes may land in a range;
            // they are outside the ASCII prefix the masks are used on.
            let range = |v: __m128i, lo: u8, n: u8| {
                let shifted = _mm_add_epi8(v, _mm_set1_epi8((0x80u8.wrapping_sub(lo)) as i8));
                _mm_movemask_epi8(_mm_cmplt_epi8(shifted, _mm_set1_epi8((0x80u8 + n) as i8)))
            };
            let eq = |b: u8| _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8)));
            let lanes = [
                range(_mm_or_si128(v, _mm_set1_epi8(0x20)), b'a', 26),
                range(v, b'0', 10),
                eq(b' '),
                // \t..\r, the newlines removed below.
                range(v, 0x09, 5),
                eq(b'\n') | eq(b'\r'),
                eq(b'\''),
                _mm_movemask_epi8(v),
                range(v, b'A', 26),
                eq(b'/'),
            ];
            for (mask, lane) in m.iter_mut().zip(lanes) {
                *mask |= (lane as u16 as u64) << (16 * q);
            }
        }
    }
    Masks {
        letter: m[0],
        upper: m[7],
        digit: m[1],
        space: m[2],
        tab: m[3] & !m[4],
        newline: m[4],
        apostrophe: m[5],
        slash: m[8],
        high: m[6],
    }
}

/// The piece starts among the window's first `len` bytes (ASCII, `1 <= len <= 64`) and the
/// last of them that can be trusted. `GPT2`: GPT-2's pattern; `O200K`: the o200k family's rules; `DIGITS3`: `\p{N}{1,3}`
/// rather than one digit a piece (Qwen 2, tekken); `CONTRACTIONS`: `'s` and the like (all but
/// tekken). The presets' other differences are at the text's end, left to the
/// character-at-a-time splitter. `ws_after`: the byte after those `len` is whitespace, or
/// might be (non-ASCII, or the text's end). Bit 0 (the window's `pos`) is always a start.
#[inline(always)]
fn starts<const GPT2: bool, const O200K: bool, const DIGITS3: bool, const CONTRACTIONS: bool>(
    m: &Masks,
    window: &[u8; 64],
    len: u32,
    ws_after: bool,
) -> (u64, u32) {
    let valid = if len == 64 { !0 } else { (1u64 << len) - 1 };
    let (letter, digit, space, tab, newline) =
        (m.letter & valid, m.digit & valid, m.space & valid, m.tab & valid, m.newline & valid);
    let other = valid & !(letter | digit | space | tab | newline);

    // N bytes that follow an O run (with the N bytes after them, and in the o200k family the
    // `/` too) end the O run's piece.
    let seed = newline & (other << 1);
    let glued = if GPT2 {
        // GPT-2's pattern has no such alternative: N is whitespace like any other.
        0
    } else if O200K {
        // A `/` is an O byte too, so an N after a glued `/` also follows an O byte: the run is
        // filled upwards from every such N (by doubling steps), not by one carry from its first.
        let (mut glued, mut through) = (seed, newline | (m.slash & valid));
        for step in [1, 2, 4, 8, 16, 32] {
            glued |= (glued << step) & through;
            through &= through << step;
        }
        glued
    } else {
        // Only a run's first N can follow an O byte: one carry fills the run from it.
        newline & !newline.wrapping_add(seed)
    };
    let other = other & !glued;
    let ws = (space | tab | newline) & !glued;
    let run_first = ws & !(ws << 1);
    let ws_next = (ws >> 1) | (u64::from(ws_after) << (len - 1));
    // A run's last byte, unless it is N (`\s*[\r\n]` then ends the run's piece with it).
    let run_last = if GPT2 { ws & !ws_next } else { ws & !ws_next & !newline };
    let mut starts = 1 | run_first | run_last;

    // The byte after the last N of each run that has one (when the run goes on past it).
    let mut newlines = if GPT2 { 0 } else { newline & ws };
    while newlines != 0 {
        let first = newlines.trailing_zeros();
        let beyond = !ws & (!0u64 << first);
        let run_end = if beyond == 0 { 64 } else { beyond.trailing_zeros() };
        let in_run = if run_end == 64 { !0 } else { (1u64 << run_end) - 1 };
        let after_last = 64 - (newlines & in_run).leading_zeros();
        if after_last < run_end {
            starts |= 1 << after_last;
        }
        newlines &= !in_run;
    }

    // O bytes that start a piece: not after an O byte or a space.
    let taken_from_before = (other | space) << 1;
    let other_first = other & !taken_from_before;
    starts |= other_first;
    // Letter runs, unless the byte before is their first (a space, a tab-like or a starting O).
    let letter_first = letter & !(letter << 1);
    // (GPT-2: ` ?\p{L}++`, only a space.)
    let prefixed = if GPT2 { space << 1 } else { ((space | tab) << 1) | (other_first << 1) };
    starts |= letter_first & !prefixed;
    if O200K {
        let upper = m.upper & valid;
        starts |= upper & ((letter & !upper) << 1);
    }

    // Digits: each run's first, then every third (or every one; GPT-2: ` ?\p{N}++`, the run
    // whole, after a space if one comes before).
    if GPT2 {
        starts |= digit & !(digit << 1) & !(space << 1);
    } else if DIGITS3 {
        let run = digit & !(digit << 1);
        let three = digit & (digit << 1) & (digit << 2);
        let mut group = run;
        let mut all = run;
        while group != 0 {
            group = (group << 3) & three;
            all |= group;
        }
        starts |= all;
    } else {
        starts |= digit;
    }

    // Contractions (`| 0x20` folds exactly A-Z onto a-z among these letters; 0: not in the
    // prefix). The cl100k family's (and GPT-2's): an apostrophe that starts a piece, then s d m
    // t, or ll ve re, in any case (GPT-2: lowercase).
    // (GPT-2's contractions are lowercase only.)
    let fold = |k: usize| {
        if k >= len as usize {
            0
        } else if GPT2 {
            window[k]
        } else {
            window[k] | 0x20
        }
    };
    let mut untrusted_from = 64;
    if CONTRACTIONS && !O200K {
        let mut apostrophes = m.apostrophe & other_first;
        while apostrophes != 0 {
            let at = apostrophes.trailing_zeros() as usize;
            apostrophes &= apostrophes - 1;
            let end = match (fold(at + 1), fold(at + 2)) {
                (b's' | b'd' | b'm' | b't', _) => at + 2,
                (b'l', b'l') | (b'v', b'e') | (b'r', b'e') => at + 3,
                // GPT-2 starts a piece at the letter after the apostrophe unless it is a
                // contraction's: not known until both bytes are in the prefix.
                (0, _) | (b'l' | b'v' | b'r', 0) if GPT2 => {
                    untrusted_from = at;
                    break;
                }
                _ => continue,
            };
            // Its letters start nothing (GPT-2's letter rule would start one after `'`).
            starts &= !(((1u64 << (end - at - 1)) - 1) << (at + 1));
            if end < 64 {
                starts |= 1 << end;
            }
        }
    }
    // The o200k family's: an apostrophe right after a word's letters (not a contraction's)
    // ends the word when followed by s t m d, or re ve ll.
    if CONTRACTIONS && O200K {
        let mut apostrophes = m.apostrophe & valid & (letter << 1);
        let mut after_contraction = usize::MAX;
        while apostrophes != 0 {
            let at = apostrophes.trailing_zeros() as usize;
            apostrophes &= apostrophes - 1;
            if at == after_contraction {
                continue;
            }
            let end = match (fold(at + 1), fold(at + 2)) {
                (b's' | b't' | b'm' | b'd', _) => at + 2,
                (b'r', b'e') | (b'v', b'e') | (b'l', b'l') => at + 3,
                // Not known from the prefix (`ſ` folds to `s`; `'r`, `'v`, `'l` need one more).
                (0, _) | (b'r' | b'v' | b'l', 0) => {
                    untrusted_from = at;
                    break;
                }
                _ => continue,
            };
            let inside = ((1u64 << (end - at)) - 1) << at;
            starts &= !inside;
            if end < 64 {
                starts |= 1 << end;
            }
            after_contraction = end;
        }
    }

    // A whitespace run that reaches the end may go on: nothing after its first byte is known.
    let last = len - 1;
    let mut trusted = if ws & ws_next & (1 << last) != 0 { 63 - (run_first & valid).leading_zeros() } else { len - 1 };
    if untrusted_from < 64 {
        // A start before the apostrophe: the window's own `pos` at least.
        trusted = trusted.min(untrusted_from.saturating_sub(1) as u32);
    }
    (starts & valid, trusted)
}

/// Calls `f` on each piece of `text` under a pattern of the cl100k or o200k family (the flags
/// of `starts`): windows where the text is ASCII, `piece_end` (the preset's
/// character-at-a-time splitter) elsewhere.
///
/// Tried and dropped: passing each window's pieces ahead to prefetch their piece-cache sets
/// (the probes' stall fell from 9% to 3% of the time, but the extra pass over the pieces cost
/// more: English 148 → 120 MB/s).
#[inline(always)]
pub fn each_piece<'t, const GPT2: bool, const O200K: bool, const DIGITS3: bool, const CONTRACTIONS: bool>(
    text: &'t str,
    piece_end: impl Fn(&str, usize) -> usize,
    mut f: impl FnMut(&'t str) -> crate::error::Result<()>,
    bug: impl Fn(usize, usize) -> crate::error::Error,
) -> crate::error::Result<()> {
    let bytes = text.as_bytes();
    let mut pos = 0;
    // Windows are not tried again before this offset: the last one stopped at non-ASCII text
    // there, which the character-at-a-time splitter goes through first.
    let mut scalar_until = 0;
    let mut padded = [0u8; 64];
    while pos < bytes.len() {
        if pos >= scalar_until {
            let window: &[u8; 64] = match bytes.get(pos..pos + 64) {
                Some(w) => w.try_into().expect("64 bytes"),
                None => {
                    let rest = &bytes[pos..];
                    padded[..rest.len()].copy_from_slice(rest);
                    padded[rest.len()..].fill(0);
                    &padded
                }
            };
            let m = classify(window);
            let in_text = (bytes.len() - pos).min(64) as u32;
            let len = m.high.trailing_zeros().min(in_text);
            if len > 1 {
                let after = pos + len as usize;
                let ws_after = bytes
                    .get(after)
                    .is_none_or(|&b| b >= 0x80 || super::classes::ASCII[b as usize] & super::classes::SPACE != 0);
                let (starts, trusted) = starts::<GPT2, O200K, DIGITS3, CONTRACTIONS>(&m, window, len, ws_after);
                let mut rest = starts & !1 & (u64::MAX >> (63 - trusted));
                if len < in_text {
                    scalar_until = pos + len as usize + 1;
                }
                if rest != 0 {
                    let mut from = pos;
                    while rest != 0 {
                        let to = pos + rest.trailing_zeros() as usize;
                        rest &= rest - 1;
                        // ASCII throughout: every offset is a character boundary.
                        f(&text[from..to])?;
                        from = to;
                    }
                    pos = from;
                    continue;
                }
            } else if len < in_text {
                scalar_until = pos + len as usize + 1;
            }
        }
        let end = piece_end(text, pos);
        match text.get(pos..end) {
            Some(piece) if end > pos => f(piece)?,
            _ => return Err(bug(pos, end)),
        }
        pos = end;
    }
    Ok(())
}
