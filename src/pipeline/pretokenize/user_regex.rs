//! User regexes: run by a DFA-based engine when the pattern allows, by a backtracking one
//! otherwise — with the same matches either way.
//!
//! Split patterns nearly all end in GPT-2's `\s+(?!\S)` ("a run of whitespace, less the last
//! character when a word follows"), and that one look-ahead is what sends tiktoken and
//! `fancy-regex` to a backtracking engine for the whole pattern, at a few MB/s. Here the
//! look-ahead alternative is replaced by two that a DFA can run, at the same priority:
//! `\s+\z` (the run reaches the end of the text: taken whole) and `\s+\s` (the run has at least
//! two characters: the match is the whole run, and its last character is given back). Both
//! match exactly where the original does, so leftmost-first search finds the same pieces.
//! The pattern is split at its top-level `|` and compiled as three patterns of one
//! `regex_automata` searcher (the alternatives before the look-ahead, the look-ahead's stand-in,
//! the alternatives after), whose pattern order is alternation priority.
//!
//! Anything else the DFA engine cannot run (other look-arounds, possessive quantifiers,
//! back-references) or a pattern that can match the empty string goes to `fancy-regex`.

use crate::error::{Error, Result};
use regex_automata::hybrid::dfa::{self, DFA};
use regex_automata::meta::{Cache, Regex};
use regex_automata::{Anchored, Input, MatchKind, PatternID};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// GPT-2's look-ahead alternative, replaced here.
const LOOKAHEAD: &str = r"\s+(?!\S)";

#[derive(Debug)]
pub enum Engine {
    /// `forward` is the lazy forward DFA alone, for anchored searches (a match's start is
    /// where the search starts, so no reverse pass is needed); `regex` does the rest. `id`
    /// names this engine's search caches in each thread's `CACHES`.
    Dfa {
        regex: Box<Regex>,
        forward: Option<Box<DFA>>,
        lookahead: Option<PatternID>,
        id: u64,
    },
    Backtracking(Box<fancy_regex::Regex>),
}

impl Engine {
    /// Compiles `pattern`, preferring the DFA engine; a pattern neither engine accepts is an
    /// error (the backtracking engine's message).
    pub fn new(pattern: &str) -> std::result::Result<Self, String> {
        if let Some(engine) = Self::dfa(pattern) {
            return Ok(engine);
        }
        fancy_regex::Regex::new(pattern).map(|r| Engine::Backtracking(Box::new(r))).map_err(|e| e.to_string())
    }

    fn dfa(pattern: &str) -> Option<Self> {
        let alternatives = top_level_alternatives(pattern)?;
        let at = alternatives.iter().position(|a| *a == LOOKAHEAD);
        let (patterns, lookahead) = match at {
            None => (vec![pattern.to_string()], None),
            Some(k) => {
                let before = alternatives[..k].iter().copied().chain([r"\s+\z"]).collect::<Vec<_>>().join("|");
                let after = alternatives[k + 1..].join("|");
                let mut patterns = vec![before, r"\s+\s".to_string()];
                if !after.is_empty() {
                    patterns.push(after);
                }
                (patterns, Some(PatternID::must(1)))
            }
        };
        // A pattern that can match nothing would make the two engines step past empty matches
        // by their own rules; leave those to the backtracking engine, as before.
        for p in &patterns {
            let hir = regex_syntax::ParserBuilder::new().build().parse(p).ok()?;
            if hir.properties().minimum_len().is_none_or(|n| n == 0) {
                return None;
            }
        }
        let regex = Regex::new_many(&patterns).ok()?;
        let forward =
            DFA::builder().configure(DFA::config().match_kind(MatchKind::LeftmostFirst)).build_many(&patterns);
        static NEXT_ID: AtomicU64 = AtomicU64::new(0);
        Some(Engine::Dfa {
            regex: Box::new(regex),
            forward: forward.ok().map(Box::new),
            lookahead,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// Calls `f(start, end)` for each match, in order (empty ones only from the backtracking
    /// engine). `pattern` names the pattern in errors (the backtracking engine's step limit).
    pub fn for_each_match(
        &self,
        pattern: &str,
        text: &str,
        mut f: impl FnMut(usize, usize) -> Result<()>,
    ) -> Result<()> {
        match self {
            Engine::Dfa { regex, forward, lookahead, id } => with_caches(*id, regex, forward.as_deref(), |caches| {
                let mut at = 0;
                while at < text.len() {
                    // Split patterns match at nearly every position: an anchored search needs
                    // only the forward DFA; the unanchored one finds the next match otherwise.
                    let input = Input::new(text).span(at..text.len());
                    let anchored = input.clone().anchored(Anchored::Yes);
                    let half = match (forward, caches.forward.as_mut()) {
                        (Some(dfa), Some(cache)) => anchored_match(dfa, cache, text.as_bytes(), &anchored),
                        _ => None,
                    };
                    // No match here: the next one is found unanchored. No forward DFA, or it gave
                    // up: the full searcher tries here first.
                    let here = match half {
                        Some(found) => found.map(|(end, pattern)| (at, end, pattern)),
                        None => {
                            regex.search_with(&mut caches.regex, &anchored).map(|m| (m.start(), m.end(), m.pattern()))
                        }
                    };
                    let next =
                        || regex.search_with(&mut caches.regex, &input).map(|m| (m.start(), m.end(), m.pattern()));
                    let Some((start, end, pattern)) = here.or_else(next) else { break };
                    let mut end = end;
                    if Some(pattern) == *lookahead {
                        // Give back the run's last character (the `\s` after `\s+`).
                        end -= text[..end].chars().next_back().map_or(0, char::len_utf8);
                    }
                    f(start, end)?;
                    at = end;
                }
                Ok(())
            }),
            Engine::Backtracking(regex) => {
                for m in regex.find_iter(text) {
                    let m = m.map_err(|e| Error::Pattern { pattern: pattern.to_string(), reason: e.to_string() })?;
                    f(m.start(), m.end())?;
                }
                Ok(())
            }
        }
    }

    /// Whether the pattern matches a single space (then pieces keep the text's whitespace).
    pub fn matches_a_space(&self) -> bool {
        match self {
            Engine::Dfa { regex, .. } => regex.is_match(" "),
            Engine::Backtracking(regex) => regex.is_match(" ").unwrap_or(false),
        }
    }

    pub fn is_dfa(&self) -> bool {
        matches!(self, Engine::Dfa { .. })
    }
}

/// The leftmost-first match of the forward DFA anchored at the start of `input` (whose span
/// ends at the end of `haystack`): its end and pattern, or None when the DFA gives up (the caller
/// then asks the full searcher). What `try_search_fwd` answers, walked here byte by byte so that
/// passing through match states — every byte of a word, for split patterns — records only where
/// the match would end; the library asks each match state for its pattern (a load from the
/// state's own memory: a quarter of its search time here). The last match state's pattern is
/// asked once at the end, unless the DFA's cache was cleared meanwhile, which would have made
/// that state's id stale: then the library searches again.
fn anchored_match(
    dfa: &DFA,
    cache: &mut dfa::Cache,
    haystack: &[u8],
    input: &Input<'_>,
) -> Option<Option<(usize, PatternID)>> {
    let clears = cache.clear_count();
    let mut sid = dfa.start_state_forward(cache, input).ok()?;
    let mut last = None;
    let mut at = input.start();
    cache.search_start(at);
    let dead = loop {
        if at == haystack.len() {
            break false;
        }
        // Matches are reported one byte late: a match state entered on the byte at `at` means
        // a match ending at `at`.
        sid = dfa.next_state(cache, sid, haystack[at]).ok()?;
        if sid.is_tagged() {
            if sid.is_match() {
                last = Some((at, sid));
            } else if sid.is_dead() {
                break true;
            } else if sid.is_quit() {
                return None;
            }
            cache.search_update(at);
        }
        at += 1;
    };
    if !dead {
        sid = dfa.next_eoi_state(cache, sid).ok()?;
        if sid.is_match() {
            last = Some((haystack.len(), sid));
        }
    }
    cache.search_finish(at);
    if cache.clear_count() != clears {
        return dfa.try_search_fwd(cache, input).ok().map(|m| m.map(|m| (m.offset(), m.pattern())));
    }
    Some(last.map(|(end, sid)| (end, dfa.match_pattern(cache, sid, 0))))
}

/// The search caches of one engine: the full searcher's and the forward DFA's.
struct Caches {
    regex: Cache,
    forward: Option<dfa::Cache>,
}

/// Searches keep their lazily built DFA states in caches. Caches per call would rebuild the
/// states for every text (a third of the time on 4 KB documents); the regex's own pool costs
/// a lock on every search from a second thread. So each thread keeps the caches of the engines
/// it ran last, by engine id.
fn with_caches<R>(id: u64, regex: &Regex, forward: Option<&DFA>, f: impl FnOnce(&mut Caches) -> R) -> R {
    const KEPT: usize = 4;
    thread_local! {
        static CACHES: RefCell<Vec<(u64, Caches)>> = const { RefCell::new(Vec::new()) };
    }
    // The caches are taken out while `f` runs, so that a search inside `f` (on this thread)
    // finds the slot empty and builds its own instead of failing to borrow.
    let taken = CACHES.with(|caches| {
        let mut caches = caches.borrow_mut();
        caches.iter().position(|(owner, _)| *owner == id).map(|at| caches.remove(at).1)
    });
    let mut caches =
        taken.unwrap_or_else(|| Caches { regex: regex.create_cache(), forward: forward.map(dfa::Cache::new) });
    let result = f(&mut caches);
    CACHES.with(|kept| {
        let mut kept = kept.borrow_mut();
        if kept.len() == KEPT {
            kept.remove(0);
        }
        kept.push((id, caches));
    });
    result
}

/// The pattern's top-level alternatives (split at each `|` outside groups and classes), or
/// None for syntax this scan does not follow (`\Q...\E` quoting, unbalanced brackets) or that
/// the engines read differently (possessive quantifiers, flag switches).
fn top_level_alternatives(pattern: &str) -> Option<Vec<&str>> {
    if pattern.contains(r"\Q") || has_flag_switch(pattern) {
        return None;
    }
    let bytes = pattern.as_bytes();
    let (mut depth, mut class_depth, mut start, mut i) = (0i32, 0i32, 0, 0);
    let mut out = Vec::new();
    // The last byte outside a class that could end a quantifier (`+ * ? }`), unescaped.
    let mut after_quantifier = false;
    while i < bytes.len() {
        let quantifier_end = class_depth == 0 && matches!(bytes[i], b'+' | b'*' | b'?' | b'}');
        // `x++`, `x?+`, `x{1,3}+` are possessive for a backtracking engine, but read by the DFA
        // engine's parser as a repetition of a repetition — another meaning.
        if quantifier_end && bytes[i] == b'+' && after_quantifier {
            return None;
        }
        after_quantifier = quantifier_end;
        match bytes[i] {
            // An escape is one atom: `\p{L}`, `\x{263A}` run to their `}`.
            b'\\' => {
                i += 1;
                if bytes.get(i + 1) == Some(&b'{') {
                    i += bytes[i..].iter().position(|&b| b == b'}')?;
                }
            }
            // `[` opens a class, or a nested one inside a class (`[a-z&&[^x]]`); a `]` right
            // after the opening `[` or `[^` is a literal.
            b'[' => {
                class_depth += 1;
                if bytes.get(i + 1) == Some(&b'^') {
                    i += 1;
                }
                if bytes.get(i + 1) == Some(&b']') {
                    i += 1;
                }
            }
            b']' if class_depth > 0 => class_depth -= 1,
            b'(' if class_depth == 0 => depth += 1,
            b')' if class_depth == 0 => depth -= 1,
            b'|' if class_depth == 0 && depth == 0 => {
                out.push(&pattern[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return None;
        }
        i += 1;
    }
    if depth != 0 || class_depth != 0 {
        return None;
    }
    out.push(&pattern[start..]);
    Some(out)
}

/// Whether the pattern switches flags for the rest of its group (`(?i)`, `(?x)`): cut into
/// alternatives, the later ones would lose the flag. (Scoped groups, `(?i:...)`, are fine.)
fn has_flag_switch(pattern: &str) -> bool {
    pattern.match_indices("(?").any(|(i, _)| {
        let rest = &pattern[i + 2..];
        let flags = rest.bytes().take_while(|b| b.is_ascii_alphabetic() || *b == b'-').count();
        flags > 0 && rest.as_bytes().get(flags) == Some(&b')')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(engine: &Engine, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        engine
            .for_each_match("test", text, |s, e| {
                if s < e {
                    out.push(text[s..e].to_string());
                }
                Ok(())
            })
            .unwrap();
        out
    }

    #[test]
    fn alternatives_split_at_top_level_only() {
        assert_eq!(top_level_alternatives(r"a|(b|c)|[|]|\||[]|x]").unwrap(), ["a", "(b|c)", "[|]", r"\|", "[]|x]"]);
        assert!(top_level_alternatives(r"(a|b").is_none());
    }

    /// The DFA engine finds the backtracking engine's matches for patterns with GPT-2's
    /// look-ahead in several places, on strings that stress whitespace runs.
    #[test]
    fn dfa_equals_backtracking() {
        let patterns = [
            r"'s|'t| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
            r"\p{N}{1,3}|[一-龥぀-ゟ゠-ヿ]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
            r"\s+(?!\S)|[a-z]+",
            r"[a-z]+|\s+(?!\S)",
            r"(?i:ab|c)+|\d",
        ];
        let alphabet: Vec<char> = " \t\n\r\u{3000}aBc'sé1٣!中の🙂".chars().collect();
        let mut seed: u64 = 0x2545F4914F6CDD1D;
        for pattern in patterns {
            let dfa = Engine::new(pattern).unwrap();
            assert!(dfa.is_dfa(), "{pattern} runs on the DFA engine");
            let slow = Engine::Backtracking(Box::new(fancy_regex::Regex::new(pattern).unwrap()));
            for _ in 0..20_000 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let len = (seed % 14) as usize;
                let text: String = (0..len).map(|k| alphabet[((seed >> (k * 4)) as usize) % alphabet.len()]).collect();
                assert_eq!(pieces(&dfa, &text), pieces(&slow, &text), "{pattern} on {text:?}");
            }
        }
    }

    /// The hand-walked anchored search answers as the library's, also when the DFA's cache is
    /// so small that it is cleared during searches (the recorded match state then goes stale,
    /// and the library is asked instead).
    #[test]
    fn anchored_walk_equals_the_library_search() {
        let patterns = [r"\p{N}{1,3}|[^\r\n\p{L}\p{N}]?\p{L}+|\s+\z", r"\s+\s", r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s+"];
        let text = "Hello wörld, 東京タワー  123456 naïve\t\r\n  x!! дом  \u{3000}end   ".repeat(40);
        for capacity in [10 << 20, 0] {
            let config = DFA::config()
                .match_kind(MatchKind::LeftmostFirst)
                .cache_capacity(capacity)
                .skip_cache_capacity_check(true);
            let dfa = DFA::builder().configure(config).build_many(&patterns).unwrap();
            let (mut walked, mut library) = (dfa::Cache::new(&dfa), dfa::Cache::new(&dfa));
            let mut compared = 0;
            for at in (0..text.len()).filter(|&at| text.is_char_boundary(at)) {
                let input = Input::new(&text).span(at..text.len()).anchored(Anchored::Yes);
                let expected =
                    dfa.try_search_fwd(&mut library, &input).ok().map(|m| m.map(|m| (m.offset(), m.pattern())));
                let found = anchored_match(&dfa, &mut walked, text.as_bytes(), &input);
                if let (Some(found), Some(expected)) = (found, expected) {
                    assert_eq!(found, expected, "capacity {capacity}, at {at}");
                    compared += 1;
                }
            }
            assert!(compared > text.chars().count() / 2, "capacity {capacity}: {compared} compared");
            assert!(capacity > 0 || walked.clear_count() > 0, "the small cache was cleared");
        }
    }

    #[test]
    fn what_the_dfa_cannot_run_goes_to_backtracking() {
        for pattern in [r"\p{L}++", r"a(?=b)", r"(a)\1", r"a*", r"\s+(?!\S)|x?", r"(?i)ab|\s+(?!\S)|cd"] {
            assert!(!Engine::new(pattern).unwrap().is_dfa(), "{pattern}");
        }
        assert!(Engine::new(r"(unclosed").is_err());
    }
}
