//! Special tokens in raw text: found with one Aho–Corasick automaton (leftmost-longest), so
//! 10⁵ special tokens or 10⁴ occurrences in one text stay linear.

use aho_corasick::{AhoCorasick, MatchKind};

/// A stretch of text: ordinary text for the pipeline, or one special token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment<'t> {
    Text(&'t str),
    Special { text: &'t str, id: u32 },
}

#[derive(Debug, Clone)]
pub struct SpecialTokens {
    tokens: Vec<(String, u32)>,
    /// For each token, whether a match takes in the whitespace before it (`lstrip`) and after it
    /// (`rstrip`), as Hugging Face's added tokens may (RoBERTa's `<mask>`).
    strips: Vec<(bool, bool)>,
    /// For each token, whether it is matched only as a word of its own (no word character, `\w`,
    /// right before or after it: Hugging Face's `single_word`).
    single_word: Vec<bool>,
    matcher: Option<AhoCorasick>,
    /// Where the tokens are matched in normalized text (the set `after_normalizing` gives): the
    /// name of each — the token's own text, which `allowed`/`disallowed` sets and files name —
    /// while `tokens` holds how the normalizer spells it.
    names: Option<Vec<String>>,
    /// The tokens matched in the normalized text instead of the raw one (Hugging Face's
    /// `normalized: true` added tokens): `for_each_segment` leaves them to the caller, which
    /// looks for them after normalizing each stretch of text.
    after_normalizing: Option<Box<SpecialTokens>>,
}

impl SpecialTokens {
    pub fn new(tokens: &[(String, u32)]) -> Self {
        let tokens: Vec<(String, u32)> = tokens.iter().filter(|(t, _)| !t.is_empty()).cloned().collect();
        let strips = vec![(false, false); tokens.len()];
        let single_word = vec![false; tokens.len()];
        Self::from_parts(tokens, strips, single_word, None)
    }

    fn from_parts(
        tokens: Vec<(String, u32)>,
        strips: Vec<(bool, bool)>,
        single_word: Vec<bool>,
        names: Option<Vec<String>>,
    ) -> Self {
        let matcher = if tokens.is_empty() {
            None
        } else {
            Some(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(tokens.iter().map(|(t, _)| t.as_str()))
                    .expect("special-token automaton builds"),
            )
        };
        SpecialTokens { tokens, strips, single_word, matcher, names, after_normalizing: None }
    }

    /// These tokens, those named in `names` matched in the normalized text instead of the raw
    /// one, as `normalize` spells them there — Hugging Face's `normalized: true` added tokens,
    /// whose content goes through the normalizer too (a lowercasing one then matches `FOO` to
    /// `foo`; one that prepends `▁` matches `foo` only after a space). A name that is not a
    /// special token is an error; one the normalizer spells as nothing never matches.
    pub fn with_normalized(
        mut self,
        names: &[String],
        normalize: impl Fn(&str) -> String,
    ) -> crate::error::Result<Self> {
        if names.is_empty() {
            return Ok(self);
        }
        let mut after = match self.after_normalizing.take() {
            Some(after) => *after,
            None => Self::from_parts(Vec::new(), Vec::new(), Vec::new(), Some(Vec::new())),
        };
        let (mut raw, mut raw_strips, mut raw_words) = (Vec::new(), Vec::new(), Vec::new());
        let (mut tokens, mut strips, mut words, mut spelled_names) =
            (after.tokens, after.strips, after.single_word, after.names.take().unwrap_or_default());
        for text in names {
            if !self.tokens.iter().any(|(t, _)| t == text) {
                return Err(crate::error::Error::config(format!("{text:?} is not a special token")));
            }
        }
        for (k, (text, id)) in self.tokens.into_iter().enumerate() {
            if names.contains(&text) {
                let spelled = normalize(&text);
                if !spelled.is_empty() {
                    tokens.push((spelled, id));
                    strips.push(self.strips[k]);
                    words.push(self.single_word[k]);
                    spelled_names.push(text);
                }
            } else {
                raw.push((text, id));
                raw_strips.push(self.strips[k]);
                raw_words.push(self.single_word[k]);
            }
        }
        let mut out = Self::from_parts(raw, raw_strips, raw_words, None);
        after = Self::from_parts(tokens, strips, words, Some(spelled_names));
        out.after_normalizing = Some(Box::new(after));
        Ok(out)
    }

    /// The tokens matched in normalized text, if any (see `with_normalized`).
    pub fn after_normalizing(&self) -> Option<&SpecialTokens> {
        self.after_normalizing.as_deref()
    }

    /// The names of the tokens matched in normalized text.
    pub fn normalized_names(&self) -> Vec<String> {
        self.after_normalizing.as_ref().map_or_else(Vec::new, |a| a.names.clone().unwrap_or_default())
    }

    /// The name of token `k`: its text, or for a token matched in normalized text its own.
    fn name(&self, k: usize) -> &str {
        self.names.as_ref().map_or(&self.tokens[k].0, |names| &names[k])
    }

    /// These tokens, the ones `strips` names (text, lstrip, rstrip) taking in the whitespace
    /// around them. A name that is not a special token is an error.
    pub fn with_strips(mut self, strips: &[(String, bool, bool)]) -> crate::error::Result<Self> {
        for (text, l, r) in strips {
            let mut found = false;
            for (k, (t, _)) in self.tokens.iter().enumerate() {
                if t == text {
                    self.strips[k] = (*l, *r);
                    found = true;
                }
            }
            if !found {
                return Err(crate::error::Error::config(format!("{text:?} is not a special token")));
            }
        }
        Ok(self)
    }

    /// These tokens, those named in `words` matched only as words of their own. A name that is
    /// not a special token is an error.
    pub fn with_single_words(mut self, words: &[String]) -> crate::error::Result<Self> {
        for text in words {
            let k = self.tokens.iter().position(|(t, _)| t == text);
            let k = k.ok_or_else(|| crate::error::Error::config(format!("{text:?} is not a special token")))?;
            for (j, (t, _)) in self.tokens.iter().enumerate().skip(k) {
                if t == text {
                    self.single_word[j] = true;
                }
            }
        }
        Ok(self)
    }

    /// The tokens matched only as words of their own.
    pub fn single_words(&self) -> Vec<String> {
        let mut out: Vec<String> =
            (0..self.tokens.len()).filter(|&k| self.single_word[k]).map(|k| self.name(k).to_string()).collect();
        out.extend(self.after_normalizing.iter().flat_map(|a| a.single_words()));
        out
    }

    /// The tokens that take in whitespace: (text, lstrip, rstrip).
    pub fn strips(&self) -> Vec<(String, bool, bool)> {
        let mut out: Vec<(String, bool, bool)> = (0..self.tokens.len())
            .filter(|&k| self.strips[k].0 || self.strips[k].1)
            .map(|k| (self.name(k).to_string(), self.strips[k].0, self.strips[k].1))
            .collect();
        out.extend(self.after_normalizing.iter().flat_map(|a| a.strips()));
        out
    }

    /// No token matched in raw text (there may be some matched in normalized text).
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    pub fn tokens(&self) -> &[(String, u32)] {
        &self.tokens
    }

    /// Calls `f` on the segments of `text` in order. A special token for which `recognise`
    /// returns false is left inside ordinary text.
    pub fn for_each_segment<'t, E>(
        &self,
        text: &'t str,
        mut recognise: impl FnMut(&str) -> std::result::Result<bool, E>,
        mut f: impl FnMut(Segment<'t>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let Some(matcher) = &self.matcher else {
            return if text.is_empty() { Ok(()) } else { f(Segment::Text(text)) };
        };
        let mut last = 0;
        for m in matcher.find_iter(text) {
            if m.start() < last {
                continue; // inside the whitespace an earlier token took in
            }
            let id = &self.tokens[m.pattern().as_usize()].1;
            let token = self.name(m.pattern().as_usize());
            if self.single_word[m.pattern().as_usize()] {
                // Judged against the whole text, as tokenizers does: a word character before
                // the match (even inside an earlier token) or after it, and it is not one.
                let before = text[..m.start()].chars().next_back();
                let after = text[m.end()..].chars().next();
                if before.is_some_and(regex_syntax::is_word_character)
                    || after.is_some_and(regex_syntax::is_word_character)
                {
                    continue;
                }
            }
            if !recognise(token)? {
                continue;
            }
            let (lstrip, rstrip) = self.strips[m.pattern().as_usize()];
            let mut start = m.start();
            if lstrip {
                let before = text[last..start].trim_end_matches(char::is_whitespace);
                start = last + before.len();
            }
            let mut end = m.end();
            if rstrip {
                end = text.len() - text[end..].trim_start_matches(char::is_whitespace).len();
            }
            if start > last {
                f(Segment::Text(&text[last..start]))?;
            }
            f(Segment::Special { text: &text[start..end], id: *id })?;
            last = end;
        }
        if last < text.len() {
            f(Segment::Text(&text[last..]))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segments<'t>(s: &SpecialTokens, text: &'t str) -> Vec<Segment<'t>> {
        let mut out = Vec::new();
        s.for_each_segment::<()>(
            text,
            |_| Ok(true),
            |seg| {
                out.push(seg);
                Ok(())
            },
        )
        .unwrap();
        out
    }

    #[test]
    fn single_word_tokens_match_only_between_non_word_characters() {
        let s = SpecialTokens::new(&[("ony".into(), 7)]).with_single_words(&["ony".into()]).unwrap();
        assert_eq!(segments(&s, "ony"), [Segment::Special { text: "ony", id: 7 }]);
        assert_eq!(segments(&s, "pony"), [Segment::Text("pony")]);
        assert_eq!(
            segments(&s, "a ony, b"),
            [Segment::Text("a "), Segment::Special { text: "ony", id: 7 }, Segment::Text(", b")]
        );
        assert_eq!(segments(&s, "ony_"), [Segment::Text("ony_")]);
        assert_eq!(s.single_words(), ["ony"]);
        assert!(SpecialTokens::new(&[]).with_single_words(&["x".into()]).is_err());
    }

    #[test]
    fn stripping_tokens_take_in_the_whitespace_around_them() {
        let s = SpecialTokens::new(&[("<mask>".into(), 5), ("<r>".into(), 6)])
            .with_strips(&[("<mask>".into(), true, false), ("<r>".into(), false, true)])
            .unwrap();
        assert_eq!(
            segments(&s, "a  <mask> b<r> \n c"),
            [
                Segment::Text("a"),
                Segment::Special { text: "  <mask>", id: 5 },
                Segment::Text(" b"),
                Segment::Special { text: "<r> \n ", id: 6 },
                Segment::Text("c"),
            ]
        );
        assert!(SpecialTokens::new(&[]).with_strips(&[("<x>".into(), true, true)]).is_err());
    }

    #[test]
    fn segments_split_around_specials() {
        let s = SpecialTokens::new(&[("<|a|>".into(), 7), ("<|ab|>".into(), 8)]);
        assert_eq!(
            segments(&s, "x<|a|>y<|ab|>"),
            [
                Segment::Text("x"),
                Segment::Special { text: "<|a|>", id: 7 },
                Segment::Text("y"),
                Segment::Special { text: "<|ab|>", id: 8 }
            ]
        );
    }
}
