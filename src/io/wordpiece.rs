//! WordPiece vocabularies: BERT's `vocab.txt` (one token per line, the line number its id) and
//! the one builder that turns a WordPiece vocabulary — from `vocab.txt` or a `tokenizer.json` —
//! into a tokenizer with BERT's pre-tokenizer.

use crate::error::{Error, Result};
use crate::models::vocab::Vocab;
use crate::models::wordpiece::WordPiece;
use crate::pipeline::normalize::Normalizer;
use crate::pipeline::postprocess::ModelInputs;
use crate::pipeline::pretokenize::PreTokenizer;
use crate::tokenizer::Tokenizer;
use rustc_hash::{FxHashMap, FxHashSet};
use std::path::Path;

/// The tokens of a `vocab.txt`, by id. A blank line or a repeated token is an error naming the
/// line (a repeated token would give one spelling two ids).
pub fn read_vocab_txt(path: &Path) -> Result<Vec<(String, u32)>> {
    let raw = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let text = std::str::from_utf8(&raw)
        .map_err(|e| Error::InvalidUtf8 { path: path.to_path_buf(), offset: e.valid_up_to() as u64 })?;
    let bad = |line: usize, reason: String| Error::Format {
        path: format!("{}:{line}", path.display()).into(),
        format: "vocab.txt",
        reason,
    };
    let lines: Vec<&str> = text.split('\n').collect();
    let mut tokens = Vec::with_capacity(lines.len());
    let mut line_of: FxHashMap<&str, usize> = FxHashMap::default();
    for (index, line) in lines.iter().enumerate() {
        let lineno = index + 1;
        let token = line.strip_suffix('\r').unwrap_or(line);
        if token.is_empty() {
            if lineno == lines.len() {
                continue; // the newline that ends the file
            }
            return Err(bad(lineno, "blank line".into()));
        }
        if let Some(first) = line_of.insert(token, lineno) {
            return Err(bad(lineno, format!("{token:?} repeats line {first}")));
        }
        tokens.push((token.to_string(), tokens.len() as u32));
    }
    if tokens.is_empty() {
        return Err(Error::Format { path: path.to_path_buf(), format: "vocab.txt", reason: "no tokens".into() });
    }
    Ok(tokens)
}

/// What a WordPiece tokenizer is made of besides its vocabulary.
pub struct WordPieceSettings<'a> {
    pub unk_token: &'a str,
    pub prefix: &'a str,
    pub max_input_chars_per_word: usize,
    /// The decoder removes the spaces before punctuation and in contractions.
    pub cleanup: bool,
    /// A normalizer spec (BERT's steps: `clean_text`, `cjk_spaces`, `strip_marks`, ...).
    pub normalizer: &'a str,
    /// A pre-tokenizer spec: `bert` for BERT's, `hf:…` for other Hugging Face splitting steps.
    pub pretokenizer: &'a str,
    pub inputs: ModelInputs,
}

/// A WordPiece tokenizer (BERT's pre-tokenizer unless the settings name another): `tokens` (text, id) are the vocabulary, the
/// ones named in `specials` (when present) are special tokens, matched whole in text.
pub fn build(tokens: &[(String, u32)], specials: &[String], settings: WordPieceSettings) -> Result<Tokenizer> {
    if !tokens.iter().any(|(t, _)| t == settings.unk_token) {
        return Err(Error::config(format!("the unknown token {:?} is not in the vocabulary", settings.unk_token)));
    }
    let specials: FxHashSet<&str> = specials.iter().map(String::as_str).collect();
    let mut vocab = Vocab::default();
    vocab.reserve(tokens.len());
    let mut special_ids = Vec::new();
    for (text, id) in tokens {
        if specials.contains(text.as_str()) {
            special_ids.push((*id, text));
        } else {
            vocab.insert(*id, text.as_bytes())?;
        }
    }
    special_ids.sort_unstable();
    for (id, text) in special_ids {
        vocab.push_special(text, Some(id))?;
    }
    let model = WordPiece::new(
        vocab,
        settings.unk_token,
        settings.prefix,
        settings.max_input_chars_per_word,
        settings.cleanup,
    )?;
    let normalizer = Normalizer::from_spec(settings.normalizer)?;
    let mut tok = Tokenizer::new(normalizer, PreTokenizer::from_spec(settings.pretokenizer)?, model);
    settings.inputs.check(tok.vocab())?;
    tok.inputs = settings.inputs;
    Ok(tok)
}

/// BERT's template, `[CLS] $A [SEP]` and `[CLS] $A [SEP] $B:1 [SEP]:1`, when the vocabulary holds
/// both tokens.
pub fn bert_template(tokens: &[(String, u32)]) -> Option<crate::pipeline::postprocess::PostProcessor> {
    let id = |name: &str| tokens.iter().find(|(t, _)| t == name).map(|&(_, id)| id);
    let (cls, sep) = (id("[CLS]")?, id("[SEP]")?);
    let special = |name: &str, type_id: u32| serde_json::json!({"type": "special", "name": name, "type_id": type_id});
    let a = serde_json::json!({"type": "sequence", "second": false, "type_id": 0});
    let b = serde_json::json!({"type": "sequence", "second": true, "type_id": 1});
    let template = serde_json::json!({
        "type": "template",
        "single": [special("[CLS]", 0), a, special("[SEP]", 0)],
        "pair": [special("[CLS]", 0), a, special("[SEP]", 0), b, special("[SEP]", 1)],
        "tokens": [{"name": "[CLS]", "ids": [cls]}, {"name": "[SEP]", "ids": [sep]}],
    });
    Some(serde_json::from_value(template).expect("BERT's template is a valid post-processor"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file holding `text`, removed when dropped.
    struct Written(std::path::PathBuf);

    impl Drop for Written {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn written(text: &str) -> Written {
        let path = std::env::temp_dir().join(format!("tokenmill-vocab-{}-{}.txt", std::process::id(), text.len()));
        std::fs::write(&path, text).unwrap();
        Written(path)
    }

    #[test]
    fn lines_are_ids_and_errors_name_the_line() {
        let path = written("[UNK]\r\nhello\n##lo\n");
        let tokens = read_vocab_txt(&path.0).unwrap();
        assert_eq!(tokens, vec![("[UNK]".into(), 0), ("hello".into(), 1), ("##lo".into(), 2)]);
        for (text, expected) in [("a\n\nb\n", ":2: not a valid vocab.txt file: blank line"), ("a\nb\na\n", ":3:")] {
            let err = read_vocab_txt(&written(text).0).err().unwrap().to_string();
            assert!(err.contains(expected), "{err}");
        }
    }

    #[test]
    fn specials_are_matched_whole_and_the_template_is_berts() {
        let tokens: Vec<(String, u32)> = ["[UNK]", "[CLS]", "[SEP]", "hel", "##lo"]
            .iter()
            .enumerate()
            .map(|(i, t)| (t.to_string(), i as u32))
            .collect();
        let specials = ["[UNK]".to_string(), "[CLS]".to_string(), "[SEP]".to_string()];
        let inputs = ModelInputs { post_processor: bert_template(&tokens), ..ModelInputs::default() };
        let settings = WordPieceSettings {
            unk_token: "[UNK]",
            prefix: "##",
            max_input_chars_per_word: 100,
            pretokenizer: "bert",
            cleanup: true,
            normalizer: "none",
            inputs,
        };
        let tok = build(&tokens, &specials, settings).unwrap();
        assert_eq!(tok.encode_for_model("hello", None, true).unwrap().ids, vec![1, 3, 4, 2]);
    }
}
