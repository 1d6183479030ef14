//! JSON Lines: one object per line, one of whose string fields is a document. Read in Rust for
//! counting and encoding files, with only the wanted field decoded (the others are skipped, not
//! built into values).

use crate::error::{Error, Result};
use crate::io::read::Block;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

/// The documents of a block of JSON Lines: each non-blank line's field `field`, a JSON null as
/// an empty document (as in Arrow columns). Errors name the file and the line.
pub fn block_texts(block: &Block, field: &str) -> Result<Vec<String>> {
    let (bytes, path) = (&block.bytes[..], &block.path);
    let mut texts = Vec::new();
    for (n, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let bad = |reason: String| Error::Format {
            path: path.to_path_buf(),
            format: "JSON Lines",
            reason: format!("line {}: {reason}", block.line + n as u64),
        };
        // A byte-order mark may open a file written on Windows.
        let line = if block.offset == 0 && n == 0 { line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line) } else { line };
        let found = match field_of(line, field) {
            Ok(found) => found,
            // Valid JSON may escape a lone surrogate (Python's json.dumps writes them); it
            // becomes U+FFFD, as a lone surrogate in a Python string does when encoded.
            Err(e) => field_of(&replace_lone_surrogates(line), field).map_err(|_| bad(e.to_string()))?,
        };
        match found {
            Found::Text(text) => texts.push(text),
            Found::Null => texts.push(String::new()),
            Found::Missing => return Err(bad(format!("no string field {field:?}"))),
        }
    }
    Ok(texts)
}

/// What a line's object holds under the wanted key.
enum Found {
    Text(String),
    Null,
    /// Absent, of another type, or the line is not an object.
    Missing,
}

fn field_of(line: &[u8], field: &str) -> serde_json::Result<Found> {
    let mut de = serde_json::Deserializer::from_slice(line);
    let found = FieldSeed(field).deserialize(&mut de)?;
    de.end()?;
    Ok(found)
}

/// Deserializes any JSON value, keeping only `field` of an object.
struct FieldSeed<'f>(&'f str);

impl<'de> DeserializeSeed<'de> for FieldSeed<'_> {
    type Value = Found;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> std::result::Result<Found, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for FieldSeed<'_> {
    type Value = Found;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Found, A::Error> {
        let mut found = Found::Missing;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == self.0 {
                // A repeated key: the last one wins, as in Python's json.loads.
                found = match map.next_value::<serde_json::Value>()? {
                    serde_json::Value::String(text) => Found::Text(text),
                    serde_json::Value::Null => Found::Null,
                    _ => Found::Missing,
                };
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }

    // Every other JSON value: not an object, so no field.
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Found, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Found::Missing)
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<Found, E> {
        Ok(Found::Missing)
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<Found, E> {
        Ok(Found::Missing)
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<Found, E> {
        Ok(Found::Missing)
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<Found, E> {
        Ok(Found::Missing)
    }
    fn visit_str<E>(self, _: &str) -> std::result::Result<Found, E> {
        Ok(Found::Missing)
    }
    fn visit_unit<E>(self) -> std::result::Result<Found, E> {
        Ok(Found::Missing)
    }
}

/// `line` with every `\\uXXXX` escape of a lone surrogate (one not in a high-low pair) written as
/// `\\uFFFD` instead. Escaped backslashes are skipped, so `\\\\ud800` is left alone.
fn replace_lone_surrogates(line: &[u8]) -> Vec<u8> {
    let unit = |at: usize| -> Option<u16> {
        let hex = line.get(at..at + 6)?;
        if hex[0] != b'\\' || hex[1] != b'u' {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()
    };
    let mut out = Vec::with_capacity(line.len());
    let mut i = 0;
    while i < line.len() {
        if line[i] != b'\\' {
            out.push(line[i]);
            i += 1;
            continue;
        }
        match unit(i) {
            Some(0xD800..=0xDBFF) if matches!(unit(i + 6), Some(0xDC00..=0xDFFF)) => {
                out.extend_from_slice(&line[i..i + 12]);
                i += 12;
            }
            Some(0xD800..=0xDFFF) => {
                out.extend_from_slice(b"\\uFFFD");
                i += 6;
            }
            _ => {
                // Any other escape: copy the backslash and the character it escapes.
                out.extend_from_slice(&line[i..(i + 2).min(line.len())]);
                i += 2;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &str, field: &str) -> Result<Vec<String>> {
        let block = Block { path: "t.jsonl".into(), offset: 0, line: 1, bytes: lines.as_bytes().to_vec() };
        block_texts(&block, field)
    }

    #[test]
    fn only_the_field_is_kept_and_null_is_empty() {
        let lines = "{\"id\": 1, \"meta\": {\"a\": [1, 2]}, \"text\": \"h\\u00e9\"}\n\n{\"text\": null}\n";
        assert_eq!(texts(lines, "text").unwrap(), ["hé", ""]);
    }

    #[test]
    fn a_missing_field_or_another_type_names_the_line() {
        for lines in
            ["{\"text\": \"a\"}\n{\"other\": 1}\n", "{\"text\": \"a\"}\n{\"text\": 5}\n", "{\"text\": \"a\"}\n[1]\n"]
        {
            let e = texts(lines, "text").unwrap_err().to_string();
            assert!(e.contains("line 2: no string field"), "{e}");
        }
        let e = texts("{\"text\": \"a\"} x\n", "text").unwrap_err().to_string();
        assert!(e.contains("line 1"), "{e}");
    }

    #[test]
    fn a_lone_surrogate_escape_is_a_replacement_character() {
        assert_eq!(texts("{\"text\": \"a\\ud800b\"}\n", "text").unwrap(), ["a\u{FFFD}b"]);
    }

    #[test]
    fn the_last_of_a_repeated_key_wins() {
        assert_eq!(texts("{\"text\": \"a\", \"text\": \"b\"}\n", "text").unwrap(), ["b"]);
    }
}
