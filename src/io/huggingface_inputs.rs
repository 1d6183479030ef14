//! The model-input sections of a `tokenizer.json` — `post_processor`, `truncation`, `padding` —
//! in Hugging Face's shape, read into tokenmill's `ModelInputs` and written back from them, so a
//! loaded file keeps feeding a model what it fed before and a saved one feeds it the same.
//!
//! ```text
//! {"type": "BertProcessing", "sep": ["[SEP]", 102], "cls": ["[CLS]", 101]}  ⇄  PostProcessor::Bert { cls: 101, sep: 102 }
//! {"strategy": {"Fixed": 128}, "direction": "Right", "pad_id": 0, ...}     ⇄  Padding { length: Some(128), .. }
//! ```

use crate::error::{Error, Result};
use crate::pipeline::postprocess::{
    ModelInputs, Padding, Piece, PostProcessor, Side, Template, TemplateToken, Truncation, TruncationStrategy,
};
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{json, Value};
use std::fmt;

#[derive(Deserialize)]
#[serde(tag = "type")]
enum HfPostProcessor {
    TemplateProcessing {
        single: Vec<HfPiece>,
        pair: Vec<HfPiece>,
        #[serde(default, deserialize_with = "in_file_order")]
        special_tokens: Vec<(String, HfSpecial)>,
    },
    BertProcessing {
        sep: (String, u32),
        cls: (String, u32),
    },
    RobertaProcessing {
        sep: (String, u32),
        cls: (String, u32),
        #[serde(default = "yes")]
        trim_offsets: bool,
        #[serde(default = "yes")]
        add_prefix_space: bool,
    },
    ByteLevel {
        #[serde(default = "yes")]
        trim_offsets: bool,
        #[serde(default = "yes")]
        add_prefix_space: bool,
    },
    Sequence {
        processors: Vec<HfPostProcessor>,
    },
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
enum HfPiece {
    Sequence { id: HfSequence, type_id: u32 },
    SpecialToken { id: String, type_id: u32 },
}

#[derive(Deserialize, PartialEq)]
enum HfSequence {
    A,
    B,
}

#[derive(Deserialize)]
struct HfSpecial {
    ids: Vec<u32>,
}

/// A template's `special_tokens` map, kept in the file's order (the order they are written back in).
fn in_file_order<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<(String, HfSpecial)>, D::Error> {
    struct Entries;
    impl<'de> Visitor<'de> for Entries {
        type Value = Vec<(String, HfSpecial)>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a map of special-token name to {id, ids, tokens}")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(entry) = map.next_entry()? {
                out.push(entry);
            }
            Ok(out)
        }
    }
    d.deserialize_map(Entries)
}

#[derive(Serialize, Deserialize, Default)]
enum HfDirection {
    Left,
    #[default]
    Right,
}

#[derive(Serialize, Deserialize, Default)]
enum HfStrategy {
    #[default]
    LongestFirst,
    OnlyFirst,
    OnlySecond,
}

#[derive(Deserialize)]
struct HfTruncation {
    max_length: usize,
    #[serde(default)]
    stride: usize,
    #[serde(default)]
    strategy: HfStrategy,
    #[serde(default)]
    direction: HfDirection,
}

#[derive(Serialize, Deserialize, Default)]
enum HfPadLength {
    #[default]
    BatchLongest,
    Fixed(usize),
}

#[derive(Deserialize)]
struct HfPadding {
    #[serde(default)]
    strategy: HfPadLength,
    #[serde(default)]
    direction: HfDirection,
    #[serde(default)]
    pad_to_multiple_of: Option<usize>,
    #[serde(default)]
    pad_id: u32,
    #[serde(default)]
    pad_type_id: u32,
    #[serde(default = "pad")]
    pad_token: String,
}

fn pad() -> String {
    "[PAD]".into()
}

fn side(d: HfDirection) -> Side {
    match d {
        HfDirection::Left => Side::Left,
        HfDirection::Right => Side::Right,
    }
}

fn direction(s: Side) -> HfDirection {
    match s {
        Side::Left => HfDirection::Left,
        Side::Right => HfDirection::Right,
    }
}

fn post_processor(hf: HfPostProcessor) -> PostProcessor {
    let pieces = |items: Vec<HfPiece>| -> Vec<Piece> {
        items
            .into_iter()
            .map(|p| match p {
                HfPiece::Sequence { id, type_id } => Piece::Sequence { second: id == HfSequence::B, type_id },
                HfPiece::SpecialToken { id, type_id } => Piece::Special { name: id, type_id },
            })
            .collect()
    };
    match hf {
        HfPostProcessor::TemplateProcessing { single, pair, special_tokens } => PostProcessor::Template(Template {
            single: pieces(single),
            pair: pieces(pair),
            tokens: special_tokens.into_iter().map(|(name, t)| TemplateToken { name, ids: t.ids }).collect(),
        }),
        HfPostProcessor::BertProcessing { sep, cls } => PostProcessor::Bert { cls: cls.1, sep: sep.1 },
        HfPostProcessor::RobertaProcessing { sep, cls, trim_offsets, add_prefix_space } => {
            PostProcessor::Roberta { cls: cls.1, sep: sep.1, trim_offsets, add_prefix_space }
        }
        HfPostProcessor::ByteLevel { trim_offsets, add_prefix_space } => {
            PostProcessor::ByteLevel { trim_offsets, add_prefix_space }
        }
        HfPostProcessor::Sequence { processors } => {
            PostProcessor::Sequence { processors: processors.into_iter().map(post_processor).collect() }
        }
    }
}

/// Reads the three sections (each may be absent or null); `bad` names the file in errors.
pub fn read(
    post: Option<&Value>,
    truncation: Option<&Value>,
    padding: Option<&Value>,
    bad: &dyn Fn(String) -> Error,
) -> Result<ModelInputs> {
    fn section<T: for<'de> Deserialize<'de>>(
        name: &str,
        value: Option<&Value>,
        bad: &dyn Fn(String) -> Error,
    ) -> Result<Option<T>> {
        match value {
            None | Some(Value::Null) => Ok(None),
            Some(v) => T::deserialize(v).map(Some).map_err(|e| bad(format!("{name}: {e}"))),
        }
    }
    let post: Option<HfPostProcessor> = section("post_processor", post, bad)?;
    let truncation: Option<HfTruncation> = section("truncation", truncation, bad)?;
    let padding: Option<HfPadding> = section("padding", padding, bad)?;
    Ok(ModelInputs {
        post_processor: post.map(post_processor),
        truncation: truncation.map(|t| Truncation {
            max_length: t.max_length,
            stride: t.stride,
            strategy: match t.strategy {
                HfStrategy::LongestFirst => TruncationStrategy::LongestFirst,
                HfStrategy::OnlyFirst => TruncationStrategy::OnlyFirst,
                HfStrategy::OnlySecond => TruncationStrategy::OnlySecond,
            },
            side: side(t.direction),
            whole_below_template: true,
        }),
        padding: padding.map(|p| Padding {
            length: match p.strategy {
                HfPadLength::BatchLongest => None,
                HfPadLength::Fixed(n) => Some(n),
            },
            multiple_of: p.pad_to_multiple_of,
            pad_id: p.pad_id,
            pad_type_id: p.pad_type_id,
            pad_token: p.pad_token,
            side: side(p.direction),
        }),
    })
}

fn write_post_processor(p: &PostProcessor, token_of: &dyn Fn(u32) -> String) -> Value {
    let pieces = |items: &[Piece]| -> Vec<Value> {
        items
            .iter()
            .map(|p| match p {
                Piece::Sequence { second, type_id } => {
                    json!({"Sequence": {"id": if *second { "B" } else { "A" }, "type_id": type_id}})
                }
                Piece::Special { name, type_id } => json!({"SpecialToken": {"id": name, "type_id": type_id}}),
            })
            .collect()
    };
    match p {
        PostProcessor::Template(t) => {
            let mut specials = serde_json::Map::new();
            for token in &t.tokens {
                let texts: Vec<String> = token.ids.iter().map(|&i| token_of(i)).collect();
                specials.insert(token.name.clone(), json!({"id": token.name, "ids": token.ids, "tokens": texts}));
            }
            json!({"type": "TemplateProcessing", "single": pieces(&t.single), "pair": pieces(&t.pair),
                   "special_tokens": specials})
        }
        PostProcessor::Bert { cls, sep } => {
            json!({"type": "BertProcessing", "sep": [token_of(*sep), sep], "cls": [token_of(*cls), cls]})
        }
        PostProcessor::Roberta { cls, sep, trim_offsets, add_prefix_space } => json!({
            "type": "RobertaProcessing", "sep": [token_of(*sep), sep], "cls": [token_of(*cls), cls],
            "trim_offsets": trim_offsets, "add_prefix_space": add_prefix_space}),
        PostProcessor::ByteLevel { trim_offsets, add_prefix_space } => json!({
            "type": "ByteLevel", "add_prefix_space": add_prefix_space, "trim_offsets": trim_offsets,
            "use_regex": true}),
        PostProcessor::Sequence { processors } => json!({"type": "Sequence",
            "processors": processors.iter().map(|p| write_post_processor(p, token_of)).collect::<Vec<_>>()}),
    }
}

/// The three sections as `tokenizer.json` writes them (null where unset); `token_of` spells a
/// token id as the file's vocabulary does.
pub fn write(inputs: &ModelInputs, token_of: &dyn Fn(u32) -> String) -> Value {
    let truncation = inputs.truncation.as_ref().map(|t| {
        let strategy = match t.strategy {
            TruncationStrategy::LongestFirst => HfStrategy::LongestFirst,
            TruncationStrategy::OnlyFirst => HfStrategy::OnlyFirst,
            TruncationStrategy::OnlySecond => HfStrategy::OnlySecond,
        };
        json!({"direction": direction(t.side), "max_length": t.max_length, "strategy": strategy,
               "stride": t.stride})
    });
    let padding = inputs.padding.as_ref().map(|p| {
        let length = match p.length {
            None => HfPadLength::BatchLongest,
            Some(n) => HfPadLength::Fixed(n),
        };
        json!({"strategy": length, "direction": direction(p.side), "pad_to_multiple_of": p.multiple_of,
               "pad_id": p.pad_id, "pad_type_id": p.pad_type_id, "pad_token": p.pad_token})
    });
    json!({
        "post_processor": inputs.post_processor.as_ref().map(|p| write_post_processor(p, token_of)),
        "truncation": truncation,
        "padding": padding,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(reason: String) -> Error {
        Error::config(reason)
    }

    #[test]
    fn sections_read_and_write_back_the_same() {
        let post = json!({"type": "Sequence", "processors": [
            {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
            {"type": "TemplateProcessing",
             "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
             "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
             "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}}]});
        let truncation = json!({"direction": "Left", "max_length": 20, "strategy": "OnlyFirst", "stride": 4});
        let padding = json!({"strategy": {"Fixed": 24}, "direction": "Right", "pad_to_multiple_of": null,
                             "pad_id": 3, "pad_type_id": 0, "pad_token": "<pad>"});
        let inputs = read(Some(&post), Some(&truncation), Some(&padding), &bad).unwrap();
        assert_eq!(inputs.truncation.as_ref().unwrap().side, Side::Left);
        assert_eq!(inputs.padding.as_ref().unwrap().length, Some(24));
        let token_of = |id: u32| if id == 1 { "<s>".to_string() } else { format!("t{id}") };
        let written = write(&inputs, &token_of);
        assert_eq!(written["post_processor"], post);
        assert_eq!(written["truncation"], truncation);
        assert_eq!(written["padding"], padding);
    }

    #[test]
    fn a_bad_section_is_named() {
        let err = read(Some(&json!({"type": "Nonsense"})), None, None, &bad).unwrap_err().to_string();
        assert!(err.contains("post_processor"), "{err}");
        let err = read(None, Some(&json!({"max_length": -1})), None, &bad).unwrap_err().to_string();
        assert!(err.contains("truncation"), "{err}");
        assert!(read(Some(&Value::Null), None, None, &bad).unwrap().is_empty());
    }
}
