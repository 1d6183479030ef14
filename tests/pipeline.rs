//! End to end through the Rust API: count → train → encode → decode → save → load.

use tokenmill::io::count::{WordCounts, WordSplitter};
use tokenmill::models::bpe::train::{train, BpeTrainConfig};
use tokenmill::models::bpe::BpeOptions;
use tokenmill::pipeline::normalize::Normalizer;
use tokenmill::pipeline::pretokenize::PreTokenizer;
use tokenmill::pipeline::special::SpecialTokens;
use tokenmill::tokenizer::{Model, SpecialSet, Tokenizer};

const TEXT: &str = "The quick brown fox jumps over the lazy dog. Ça va? 東京は日本の首都です。\n\
                    fn main() { println!(\"{}\", 12345); }\n";

fn trained(pattern: &str) -> Tokenizer {
    let splitter = WordSplitter {
        normalizer: Normalizer::default(),
        pretokenizer: PreTokenizer::from_spec(pattern).unwrap(),
        specials: SpecialTokens::new(&[("<|eot|>".into(), 0)]),
    };
    let mut counts = WordCounts::default();
    splitter.count_text(&TEXT.repeat(20), &mut counts).unwrap();
    let config = BpeTrainConfig {
        vocab_size: Some(300),
        options: BpeOptions { byte_level: true, ..Default::default() },
        special_tokens: vec!["<|eot|>".into()],
        ..Default::default()
    };
    let model = train(&counts, &config, &mut |_| Ok(())).unwrap();
    Tokenizer::new(splitter.normalizer, splitter.pretokenizer, Model::Bpe(model))
}

#[test]
fn round_trip_for_every_preset() {
    for pattern in ["gpt2", "cl100k", "o200k"] {
        let tok = trained(pattern);
        assert_eq!(tok.vocab().len(), 300);
        let text = "a new text<|eot|> with 東京 and ünïcödé 🙂";
        let ids = tok.encode(text, &SpecialSet::All, &SpecialSet::none()).unwrap();
        assert!(ids.contains(&0));
        assert_eq!(tok.decode_bytes(&ids).unwrap(), text.as_bytes());
        let ordinary = tok.encode_ordinary(text).unwrap();
        assert!(!ordinary.contains(&0));
        assert_eq!(tok.decode_bytes(&ordinary).unwrap(), text.as_bytes());
    }
}

#[test]
fn save_and_load_give_the_same_encoding() {
    let tok = trained("cl100k");
    let dir = std::env::temp_dir().join(format!("tokenmill-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tok.json");
    tokenmill::io::serialize::save(&tok, &path).unwrap();
    let loaded = tokenmill::io::serialize::load(&path).unwrap();
    assert_eq!(loaded.encode_ordinary(TEXT).unwrap(), tok.encode_ordinary(TEXT).unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn batch_equals_one_by_one() {
    let tok = trained("o200k");
    let texts: Vec<String> = (0..50).map(|i| format!("{i} {}", TEXT.chars().take(i * 3).collect::<String>())).collect();
    let texts: Vec<&str> = texts.iter().map(|t| t.as_str()).collect();
    let none = SpecialSet::none();
    let batch = tok.encode_batch(&texts, &none, &SpecialSet::All, Some(3)).unwrap();
    for (t, ids) in texts.iter().zip(batch) {
        assert_eq!(ids, tok.encode(t, &none, &SpecialSet::All).unwrap());
    }
}
