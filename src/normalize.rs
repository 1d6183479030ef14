//! Normalization: the first stage of the pipeline, applied to text before pre-tokenization.
//! A normalizer is a sequence of steps named in a spec string such as `"nfkc+lowercase"`.

use crate::error::{Error, Result};
use std::borrow::Cow;
use unicode_normalization::UnicodeNormalization;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Nfc,
    Nfd,
    Nfkc,
    Nfkd,
    Lowercase,
    /// Remove combining marks after decomposition (`é` → `e`); implies NFD first.
    StripAccents,
    /// Put a space in front of text that does not start with one (GPT-2's `add_prefix_space`).
    PrefixSpace,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Normalizer {
    steps: Vec<Step>,
}

impl Normalizer {
    /// Parses `"nfc"`, `"nfkc+lowercase"`, `"nfd+strip_accents"`, … ; `""` or `"none"` is no-op.
    ///
    /// ```
    /// use tokenmill::normalize::Normalizer;
    /// let n = Normalizer::from_spec("nfkc+lowercase").unwrap();
    /// assert_eq!(n.apply("Ｈｅｌｌｏ"), "hello");
    /// ```
    pub fn from_spec(spec: &str) -> Result<Self> {
        let mut steps = Vec::new();
        for name in spec.split('+').map(str::trim).filter(|s| !s.is_empty() && *s != "none") {
            steps.push(match name.to_ascii_lowercase().as_str() {
                "nfc" => Step::Nfc,
                "nfd" => Step::Nfd,
                "nfkc" => Step::Nfkc,
                "nfkd" => Step::Nfkd,
                "lowercase" | "lower" => Step::Lowercase,
                "strip_accents" => Step::StripAccents,
                "prefix_space" => Step::PrefixSpace,
                other => {
                    return Err(Error::config(format!(
                        "unknown normalizer step {other:?}; use nfc, nfd, nfkc, nfkd, lowercase, strip_accents, prefix_space"
                    )))
                }
            });
        }
        Ok(Normalizer { steps })
    }

    pub fn spec(&self) -> String {
        let names: Vec<&str> = self
            .steps
            .iter()
            .map(|s| match s {
                Step::Nfc => "nfc",
                Step::Nfd => "nfd",
                Step::Nfkc => "nfkc",
                Step::Nfkd => "nfkd",
                Step::Lowercase => "lowercase",
                Step::StripAccents => "strip_accents",
                Step::PrefixSpace => "prefix_space",
            })
            .collect();
        if names.is_empty() {
            "none".into()
        } else {
            names.join("+")
        }
    }

    pub fn is_identity(&self) -> bool {
        self.steps.is_empty()
    }

    pub fn apply<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut out = Cow::Borrowed(text);
        for step in &self.steps {
            out = Cow::Owned(match step {
                Step::Nfc => out.nfc().collect(),
                Step::Nfd => out.nfd().collect(),
                Step::Nfkc => out.nfkc().collect(),
                Step::Nfkd => out.nfkd().collect(),
                Step::Lowercase => out.to_lowercase(),
                Step::StripAccents => {
                    out.nfd().filter(|c| !unicode_normalization::char::is_combining_mark(*c)).collect()
                }
                Step::PrefixSpace => {
                    if out.is_empty() || out.starts_with(' ') {
                        continue;
                    }
                    format!(" {out}")
                }
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_apply_in_order() {
        assert_eq!(Normalizer::from_spec("nfd+strip_accents").unwrap().apply("Café"), "Cafe");
        assert_eq!(Normalizer::from_spec("lowercase").unwrap().apply("ÀB"), "àb");
        assert_eq!(Normalizer::from_spec("nfc").unwrap().apply("e\u{301}"), "é");
        assert!(Normalizer::from_spec("").unwrap().is_identity());
        assert!(Normalizer::from_spec("nfx").is_err());
    }
}
