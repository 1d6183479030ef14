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
    matcher: Option<AhoCorasick>,
}

impl SpecialTokens {
    pub fn new(tokens: &[(String, u32)]) -> Self {
        let tokens: Vec<(String, u32)> = tokens.iter().filter(|(t, _)| !t.is_empty()).cloned().collect();
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
        SpecialTokens { tokens, matcher }
    }

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
            let (token, id) = &self.tokens[m.pattern().as_usize()];
            if !recognise(token)? {
                continue;
            }
            if m.start() > last {
                f(Segment::Text(&text[last..m.start()]))?;
            }
            f(Segment::Special { text: &text[m.start()..m.end()], id: *id })?;
            last = m.end();
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

    #[test]
    fn segments_split_around_specials() {
        let s = SpecialTokens::new(&[("<|a|>".into(), 7), ("<|ab|>".into(), 8)]);
        let mut out = Vec::new();
        s.for_each_segment::<()>(
            "x<|a|>y<|ab|>",
            |_| Ok(true),
            |seg| {
                out.push(seg);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(
            out,
            [
                Segment::Text("x"),
                Segment::Special { text: "<|a|>", id: 7 },
                Segment::Text("y"),
                Segment::Special { text: "<|ab|>", id: 8 }
            ]
        );
    }
}
