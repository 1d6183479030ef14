//! Randomized damage to every reader and arbitrary bytes through the encoder: each outcome is a
//! value or an `Error`, never a panic. (A deterministic stand-in for coverage-guided fuzzing,
//! which needs a nightly toolchain; the seeds are fixed so a failure reproduces.)

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use tokenmill::io::count::{WordCounts, WordSplitter};
use tokenmill::io::serialize;
use tokenmill::models::bpe::train::{train, BpeTrainConfig};
use tokenmill::models::bpe::BpeOptions;
use tokenmill::pipeline::normalize::Normalizer;
use tokenmill::pipeline::pretokenize::PreTokenizer;
use tokenmill::pipeline::special::SpecialTokens;
use tokenmill::tokenizer::{Model, SpecialSet, Tokenizer};

/// xorshift64*: a fixed, dependency-free stream of pseudo-random numbers.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const TEXT: &str = "The quick brown fox jumps over the lazy dog 12345. Ça va? 東京 <|eot|> fn main() {}\n";

fn trained(byte_level: bool) -> Tokenizer {
    let splitter = WordSplitter {
        normalizer: Normalizer::default(),
        pretokenizer: PreTokenizer::from_spec("cl100k").unwrap(),
        specials: SpecialTokens::new(&[("<|eot|>".into(), 0)]),
    };
    let mut counts = WordCounts::default();
    splitter.count_text(&TEXT.repeat(10), &mut counts).unwrap();
    let options = if byte_level {
        BpeOptions { byte_level: true, ..Default::default() }
    } else {
        BpeOptions { end_of_word_suffix: Some("</w>".into()), unk_token: Some("<unk>".into()), ..Default::default() }
    };
    let config =
        BpeTrainConfig { num_merges: Some(60), options, special_tokens: vec!["<|eot|>".into()], ..Default::default() };
    let model = train(&counts, &config, &mut |_| Ok(())).unwrap();
    Tokenizer::new(splitter.normalizer, splitter.pretokenizer, Model::Bpe(model))
}

/// One random change: flip a bit, cut the tail, repeat a span, or write a large number.
fn damage(rng: &mut Rng, good: &[u8]) -> Vec<u8> {
    let mut data = good.to_vec();
    let at = rng.below(data.len());
    match rng.below(4) {
        0 => data[at] ^= 1 << rng.below(8),
        1 => data.truncate(at),
        2 => {
            let end = (at + rng.below(64)).min(data.len());
            let span = data[at..end].to_vec();
            data.splice(at..at, span);
        }
        _ => {
            let numbers: [&[u8]; 5] = [b"4294967295", b"99999999999999999999", b"-1", b"1e9", b"4000000000"];
            let n = numbers[rng.below(numbers.len())];
            data.splice(at..at, n.iter().copied());
        }
    }
    data
}

#[test]
fn damaged_tokenizer_files_never_panic() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for byte_level in [true, false] {
        let good = serialize::to_json(&trained(byte_level));
        for _ in 0..1500 {
            let data = damage(&mut rng, good.as_bytes());
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                let Ok(text) = std::str::from_utf8(&data) else {
                    return;
                };
                if let Ok(tok) = serialize::from_json(text, Path::new("fuzz.json")) {
                    // A file that loads must also encode and decode without panicking.
                    let ids = tok.encode(TEXT, &SpecialSet::All, &SpecialSet::none()).unwrap_or_default();
                    let _ = tok.decode_bytes(&ids);
                }
            }));
            assert!(outcome.is_ok(), "panic on {:?}", String::from_utf8_lossy(&data));
        }
    }
}

#[test]
fn damaged_count_files_never_panic() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let mut counts = WordCounts::default();
    for (i, word) in TEXT.split(' ').enumerate() {
        counts.add(word.as_bytes(), i as u64 * 1000 + 1);
    }
    let good = counts.to_bytes("{\"meta\": 1}");
    for _ in 0..3000 {
        let data = damage(&mut rng, &good);
        let outcome = catch_unwind(|| WordCounts::from_bytes(&data, Path::new("fuzz.counts")).is_ok());
        assert!(outcome.is_ok(), "panic on {data:?}");
        // The checksum refuses every damaged copy that differs from the original.
        if data != good {
            assert_eq!(outcome.ok(), Some(false), "damaged file accepted: {data:?}");
        }
    }
}

#[test]
fn arbitrary_text_encodes_and_round_trips() {
    let mut rng = Rng(0x94D0_49BB_1331_11EB);
    let byte_level = trained(true);
    let char_level = trained(false);
    let pool: Vec<char> = "aé東 \n\t<|eot|>0123\u{0301}\u{1F600}\u{FFFD}\r".chars().collect();
    for _ in 0..3000 {
        let len = rng.below(80);
        let text: String = (0..len)
            .map(|_| {
                if rng.below(4) == 0 {
                    char::from_u32(rng.below(0x11_0000) as u32).unwrap_or('x')
                } else {
                    pool[rng.below(pool.len())]
                }
            })
            .collect();
        let ids = byte_level.encode(&text, &SpecialSet::none(), &SpecialSet::none()).unwrap();
        assert_eq!(byte_level.decode_bytes(&ids).unwrap(), text.as_bytes());
        // Character-level: unknown characters become <unk>, never a panic.
        let ids = char_level.encode(&text, &SpecialSet::All, &SpecialSet::none()).unwrap();
        assert!(char_level.decode_bytes(&ids).is_ok());
    }
}
