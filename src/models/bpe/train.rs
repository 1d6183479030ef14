//! BPE training: the merge loop.
//!
//! 1. Each unique word becomes a sequence of symbol ids (bytes, or characters plus an optional
//!    end-of-word symbol) with its u64 count.
//! 2. Pair counts and, for each pair, the words that contain it are built once (in parallel).
//! 3. A max-heap holds (count, pair). Counts of existing pairs only ever fall — merging (a, b)
//!    into z removes pairs around each site and adds pairs that contain z, which are new — so a
//!    popped entry whose count is stale is pushed back with its current count, and an entry
//!    that is current is the true maximum ("lazy invalidation").
//! 4. A merge rewrites only the words listed for its pair and updates pair counts by the local
//!    change around each merge site.
//!
//! Ties between equal counts break on bytes: the smaller left token, then the smaller right
//! token, so the result never depends on thread count, hash order or corpus order. With
//! `ties_by_id`, on ids instead (the alphabet is in code-point order, so only merged tokens
//! differ: they rank by when they were made), as Hugging Face's trainer does.

use super::merge_state::{AnyMergeState, Candidate, Pair, PairHeap, TokenOrder, WordList};
use super::{Bpe, BpeOptions};
use crate::error::{Error, Result};
use crate::io::count::WordCounts;
use crate::models::vocab::Vocab;
use rustc_hash::{FxHashMap, FxHashSet};

/// The fewest pairs the merge heap takes in at a time (see `merge_loop`).
const HEAP_BATCH_MIN: usize = 16_384;

/// The heap is cut back to a batch when it holds this many batches.
const HEAP_PRUNE_AT: usize = 4;

/// The heap size at which it is cut back to `batch` entries.
fn heap_prune_at(batch: usize) -> usize {
    #[cfg(test)]
    if let Some(n) = tests::HEAP_PRUNE_AT.get() {
        return n;
    }
    HEAP_PRUNE_AT.saturating_mul(batch)
}

/// How many pairs the heap takes in when `merges_left` merges are still to learn.
fn heap_batch(merges_left: usize) -> usize {
    #[cfg(test)]
    if let Some(n) = tests::HEAP_BATCH.get() {
        return n;
    }
    merges_left.saturating_mul(2).max(HEAP_BATCH_MIN)
}

/// Everything that decides what BPE training learns. Shared by the Python API and the CLI.
#[derive(Debug, Clone, Default)]
pub struct BpeTrainConfig {
    /// Final number of tokens, special tokens included. Exactly one of this and `num_merges`.
    pub vocab_size: Option<usize>,
    pub num_merges: Option<usize>,
    pub options: BpeOptions,
    /// Reserved at ids 0.. in the order given; never split or merged.
    pub special_tokens: Vec<String>,
    /// A pair seen fewer times than this is never merged.
    pub min_frequency: u64,
    /// Longest token the trainer may create: bytes (byte-level) or characters, not counting the
    /// end-of-word suffix (character-level).
    pub max_token_length: Option<usize>,
    /// Character-level: keep at most this many characters in the base alphabet, the most
    /// frequent by total count (ties: smaller code point). `initial_alphabet` counts towards the
    /// limit and is always kept; special tokens and the end-of-word suffix do not count.
    pub limit_alphabet: Option<usize>,
    /// Characters always in the base alphabet, seen in the corpus or not. Byte-level: a no-op,
    /// since every byte of every character is already one of the 256 base tokens.
    pub initial_alphabet: Vec<char>,
    /// Ties between equal counts go to the pair of smaller ids (the earlier-made tokens), as
    /// Hugging Face's trainer breaks them, instead of the smaller bytes.
    pub ties_by_id: bool,
}

/// What the trainer reports while it works.
#[derive(Debug, Clone, Copy)]
pub struct TrainProgress {
    pub merges_done: u64,
    pub merges_total: u64,
}

/// Trains a BPE model on counted words. `progress` is called now and then; an error it returns
/// (such as Ctrl-C seen by Python) stops training.
pub fn train(
    words: &WordCounts,
    config: &BpeTrainConfig,
    progress: &mut dyn FnMut(TrainProgress) -> Result<()>,
) -> Result<Bpe> {
    words.check()?;
    let options = BpeOptions { whole_piece_first: false, ..config.options.clone() };
    let mut vocab = Vocab::default();
    for special in &config.special_tokens {
        vocab.push_special(special, None)?;
    }
    if let Some(unk) = &options.unk_token {
        vocab.push_special(unk, None)?;
    }
    let words = initial_words(words, config, &options, &mut vocab)?;
    merge_loop(vocab, words, Vec::new(), options, config, progress)
}

/// Continues training from `base`: every id and merge of `base` is kept, the words are first
/// encoded with its merges, and new merges are learned on top. Characters `base` has never
/// seen (character-level) join the alphabet, in code-point order, before the new merges.
pub fn continue_training(
    base: &Bpe,
    words: &WordCounts,
    config: &BpeTrainConfig,
    progress: &mut dyn FnMut(TrainProgress) -> Result<()>,
) -> Result<Bpe> {
    words.check()?;
    if base.is_rank_based() {
        return Err(Error::config("continued training needs a tokenizer with a merge list, not a tiktoken vocabulary"));
    }
    if words.is_empty() {
        return Err(Error::EmptyCorpus("no words to train on".into()));
    }
    if config.limit_alphabet.is_some() {
        return Err(Error::config(
            "limit_alphabet applies to fresh training; continued training keeps the base alphabet",
        ));
    }
    if base.vocab().n_vocab() != base.vocab().dense_len() {
        return Err(Error::config("continued training needs a base tokenizer whose ids are contiguous"));
    }
    let options = base.options().clone();
    if options.joined_suffix || options.continuing_subword_prefix.is_some() {
        return Err(Error::config("continued training from a model with Hugging Face's word marks is not supported"));
    }
    let mut vocab = base.vocab().clone();
    for special in &config.special_tokens {
        vocab.push_special(special, None)?;
    }
    let mut out = WordList::with_capacity(words.len(), 0);
    let mut symbols = Vec::new();
    if options.byte_level {
        for (word, count) in words.iter() {
            symbols.clear();
            base.encode_bytes(word, &mut symbols)?;
            out.push(&symbols, count)?;
        }
    } else {
        let mut texts = Vec::with_capacity(words.len());
        let mut unseen: Vec<char> = Vec::new();
        let mut buf = [0u8; 4];
        for (word, count) in words.iter() {
            let text = utf8_word(word)?;
            unseen.extend(text.chars().filter(|c| vocab.id(c.encode_utf8(&mut buf).as_bytes()).is_none()));
            texts.push((text, count));
        }
        unseen
            .extend(config.initial_alphabet.iter().filter(|c| vocab.id(c.encode_utf8(&mut buf).as_bytes()).is_none()));
        unseen.sort_unstable();
        unseen.dedup();
        for c in unseen {
            vocab.push(c.encode_utf8(&mut buf).as_bytes());
        }
        let suffix_id = options.end_of_word_suffix.as_ref().and_then(|s| vocab.id(s.as_bytes()));
        texts.sort_unstable();
        for (text, count) in texts {
            symbols.clear();
            // Every character was added to the vocabulary just above.
            symbols.extend(text.chars().filter_map(|c| vocab.id(c.encode_utf8(&mut buf).as_bytes())));
            symbols.extend(suffix_id);
            base.merge_symbols(&mut symbols);
            out.push(&symbols, count)?;
        }
    }
    merge_loop(vocab, out, base.merges().to_vec(), options, config, progress)
}

/// The merge loop shared by fresh and continued training.
fn merge_loop(
    mut vocab: Vocab,
    words: WordList,
    mut merges: Vec<Pair>,
    options: BpeOptions,
    config: &BpeTrainConfig,
    progress: &mut dyn FnMut(TrainProgress) -> Result<()>,
) -> Result<Bpe> {
    let base = vocab.len();
    let merges_before = merges.len();
    let target_merges = match (config.vocab_size, config.num_merges) {
        (Some(_), Some(_)) => return Err(Error::config("give vocab_size or num_merges, not both")),
        (None, None) => return Err(Error::config("give vocab_size or num_merges")),
        (Some(size), None) if size < base => {
            return Err(Error::config(format!(
                "vocab_size {size} is smaller than the base alphabet: {} symbols and {} special tokens",
                base - vocab.specials().len(),
                vocab.specials().len()
            )))
        }
        (Some(size), None) => size - base,
        (None, Some(n)) => n,
    };
    // With vocab_size, merges whose result is already a token do not count towards the size.
    let done = |merges: usize, vocab: &Vocab| match config.vocab_size {
        Some(size) => vocab.len() >= size,
        None => merges - merges_before >= target_merges,
    };
    let max_len = config.max_token_length.unwrap_or(usize::MAX);
    if max_len == 0 {
        return Err(Error::config("max_token_length must be at least 1"));
    }
    let min_frequency = config.min_frequency.max(1);
    let suffix_len = options.end_of_word_suffix.as_ref().map_or(0, |s| s.len());
    // Hugging Face's marked form: a merge joins the right token without its prefix, and a
    // token's length counts its marks (as tokenizers' `max_token_length` does).
    let prefix = options.continuing_subword_prefix.as_deref().unwrap_or("").as_bytes();
    let marked = options.joined_suffix || options.continuing_subword_prefix.is_some();
    let token_len = |bytes: &[u8]| -> usize {
        if options.byte_level {
            bytes.len()
        } else if marked {
            String::from_utf8_lossy(bytes).chars().count()
        } else {
            let stem = match &options.end_of_word_suffix {
                Some(s) if bytes.ends_with(s.as_bytes()) => &bytes[..bytes.len() - suffix_len],
                _ => bytes,
            };
            String::from_utf8_lossy(stem).chars().count()
        }
    };

    // Each learned token takes the lowest free id, and at most `target_merges` are learned, so
    // every id stays below `n_vocab + target_merges`: u16 symbols when that is at most 65,536.
    let mut state = AnyMergeState::new(words, vocab.n_vocab().saturating_add(target_merges));
    let mut token_bytes: TokenOrder =
        (0..vocab.dense_len() as u32).map(|id| vocab.token_bytes(id).unwrap_or_default().to_vec()).collect();
    token_bytes.by_id = config.ties_by_id;
    // The heap holds only the pairs counted at least `floor` times (a few per merge still to
    // learn) rather than every pair: most of the million-odd pairs of a corpus are never merged,
    // and a heap of them all is deep and cold. Every pair counted `floor` times or more has an
    // entry (counts that rise are pushed, counts that fall leave a higher entry behind), so the
    // top, once its count is checked, is still the most frequent pair; when the heap runs dry the
    // floor drops and the pairs between the two floors come in. Byte-level training starts with
    // few pairs (byte pairs: the floor starts at the minimum) and merges create millions, so when
    // the heap grows past a few batches the floor rises to keep a batch.
    let mut floor = state.floor_for(heap_batch(target_merges), u64::MAX, min_frequency);
    let mut heap = PairHeap::new(state.candidates(floor, u64::MAX), &token_bytes);

    // Every merge shortens some word, so there can be no more merges than symbols: the
    // reservation never follows an absurd vocab_size.
    merges.reserve(target_merges.min(state.symbol_count()));
    let mut prune_above = heap_prune_at(heap_batch(target_merges));
    let mut reported = 0u64;
    let report_every = (target_merges as u64 / 200).max(1);
    while !done(merges.len(), &vocab) {
        let Some(top) = heap.pop(&token_bytes) else {
            if floor <= min_frequency {
                break;
            }
            let merges_left = target_merges.saturating_sub(merges.len() - merges_before);
            let lower = state.floor_for(heap_batch(merges_left), floor, min_frequency);
            for candidate in state.candidates(lower, floor) {
                heap.push(candidate, &token_bytes);
            }
            floor = lower;
            continue;
        };
        let current = state.count(top.pair);
        if current != top.count {
            // Counts only fall while a pair waits in the heap: re-queue it at its true count
            // (below the floor it is found again when the floor drops).
            if current >= floor {
                heap.push(Candidate { count: current, ..top }, &token_bytes);
            }
            continue;
        }
        let mut joined = token_bytes.bytes(top.pair.0).to_vec();
        let right = token_bytes.bytes(top.pair.1);
        joined.extend_from_slice(right.strip_prefix(prefix).unwrap_or(right));
        if token_len(&joined) > max_len {
            continue;
        }
        let merged = vocab.push(&joined);
        if token_bytes.bytes_len() <= merged as usize {
            token_bytes.set(merged, joined);
        }
        merges.push(top.pair);
        for pair in state.apply_merge(top.pair, merged) {
            let count = state.count(pair);
            if count >= floor {
                heap.push(Candidate { count, pair }, &token_bytes);
            }
        }
        if heap.len() > prune_above {
            let batch = heap_batch(target_merges.saturating_sub(merges.len() - merges_before));
            // Entries below the new floor belong to pairs counted below it now (an entry is never
            // below its pair's count), so every pair at or above the floor keeps its entry.
            floor = floor.max(heap.prune(batch, &token_bytes));
            // Entries tied at the cut all stay, and late in training that can be most of them
            // (thousands of pairs counted once): the next cut waits until the heap has doubled,
            // so cutting costs at most a few passes per entry pushed, never one per merge.
            prune_above = heap_prune_at(batch).max(heap.len().saturating_mul(2));
        }
        let learned = (merges.len() - merges_before) as u64;
        if learned - reported >= report_every {
            reported = learned;
            progress(TrainProgress { merges_done: reported, merges_total: target_merges as u64 })?;
        }
    }
    // Freeing millions of where-list entries takes a noticeable fraction of a second; nothing
    // waits for it, so it happens on a thread of its own.
    std::thread::spawn(move || drop((state, heap)));
    let learned = (merges.len() - merges_before) as u64;
    progress(TrainProgress { merges_done: learned, merges_total: target_merges as u64 })?;
    Bpe::from_merges(vocab, merges, options)
}

/// Turns counted words into symbol sequences and adds the base alphabet to `vocab`.
///
/// Character-level with `limit_alphabet`: a character left out of the alphabet splits its word
/// there, and no pair spans it. That is what encoding later sees — the character becomes
/// `unk_token`, which no merge contains, or is an error without one — so the pairs counted are
/// pairs that can occur. (Hugging Face's BpeTrainer instead deletes such characters and joins
/// their neighbours, learning pairs that never touch in the text.)
fn initial_words(
    words: &WordCounts,
    config: &BpeTrainConfig,
    options: &BpeOptions,
    vocab: &mut Vocab,
) -> Result<WordList> {
    if words.is_empty() {
        return Err(Error::EmptyCorpus("no words to train on".into()));
    }
    let total_bytes: usize = words.iter().map(|(w, _)| w.len()).sum();
    let mut out = WordList::with_capacity(words.len(), total_bytes);
    let mut symbols: Vec<u32> = Vec::new();
    if options.byte_level {
        if config.limit_alphabet.is_some() {
            return Err(Error::config(
                "limit_alphabet is for character-level BPE (byte_level=False); the byte-level alphabet is always the 256 bytes",
            ));
        }
        // `initial_alphabet` needs nothing here: all 256 bytes are in the alphabet already.
        let byte_ids: Vec<u32> = (0..=255u8).map(|b| vocab.push(&[b])).collect();
        for (word, count) in words.iter() {
            symbols.clear();
            symbols.extend(word.iter().map(|&b| byte_ids[b as usize]));
            out.push(&symbols, count)?;
        }
    } else {
        let mut char_counts: FxHashMap<char, u64> = FxHashMap::default();
        let mut texts = Vec::with_capacity(words.len());
        for (word, count) in words.iter() {
            let text = utf8_word(word)?;
            for c in text.chars() {
                // Saturating: counts from word tables can be near u64::MAX, and a panic must not
                // reach Python; the order among such giants hardly matters.
                let n = char_counts.entry(c).or_insert(0);
                *n = n.saturating_add(count);
            }
            texts.push((text, count));
        }
        let alphabet = base_alphabet(char_counts, config)?;
        let mut char_ids: FxHashMap<char, u32> = FxHashMap::default();
        let mut buf = [0u8; 4];
        for c in alphabet {
            char_ids.insert(c, vocab.push(c.encode_utf8(&mut buf).as_bytes()));
        }
        // Sorted so that word order (and so where-lists) never depends on hash order.
        texts.sort_unstable();
        if options.joined_suffix || options.continuing_subword_prefix.is_some() {
            return marked_words(texts, &char_ids, options, vocab, out);
        }
        let suffix_id = options.end_of_word_suffix.as_ref().map(|s| vocab.push(s.as_bytes()));
        for (text, count) in texts {
            symbols.clear();
            for c in text.chars() {
                match char_ids.get(&c) {
                    Some(&id) => symbols.push(id),
                    None => {
                        out.push(&symbols, count)?;
                        symbols.clear();
                    }
                }
            }
            symbols.extend(suffix_id);
            out.push(&symbols, count)?;
        }
    }
    Ok(out)
}

/// Character-level words in Hugging Face's marked form (`BpeOptions::continuing_subword_prefix`,
/// `joined_suffix`): each character of the alphabet a symbol, with the prefix unless it is the
/// word's first and the suffix joined if it is the word's last, a marked symbol taking the next
/// id when first met (in word order). As tokenizers does, a character outside the alphabet is
/// left out, and its neighbours meet; a word's first and last are its own, kept or not.
fn marked_words(
    texts: Vec<(&str, u64)>,
    char_ids: &FxHashMap<char, u32>,
    options: &BpeOptions,
    vocab: &mut Vocab,
    mut out: WordList,
) -> Result<WordList> {
    let prefix = options.continuing_subword_prefix.as_deref().unwrap_or("");
    let suffix = options.end_of_word_suffix.as_deref().filter(|_| options.joined_suffix).unwrap_or("");
    let mut symbols = Vec::new();
    let mut marked = String::new();
    for (text, count) in texts {
        symbols.clear();
        let last = text.chars().count().saturating_sub(1);
        for (k, c) in text.chars().enumerate() {
            let Some(&id) = char_ids.get(&c) else { continue };
            if (k == 0 || prefix.is_empty()) && (k < last || suffix.is_empty()) {
                symbols.push(id);
                continue;
            }
            marked.clear();
            marked.push_str(if k > 0 { prefix } else { "" });
            marked.push(c);
            marked.push_str(if k == last { suffix } else { "" });
            symbols.push(vocab.id(marked.as_bytes()).unwrap_or_else(|| vocab.push(marked.as_bytes())));
        }
        out.push(&symbols, count)?;
    }
    Ok(out)
}

/// The character-level base alphabet in code-point order: `initial_alphabet`, then the most
/// frequent other characters up to `limit_alphabet` (ties go to the smaller code point, so the
/// choice is deterministic).
fn base_alphabet(char_counts: FxHashMap<char, u64>, config: &BpeTrainConfig) -> Result<Vec<char>> {
    let initial: FxHashSet<char> = config.initial_alphabet.iter().copied().collect();
    let mut seen: Vec<(char, u64)> = char_counts.into_iter().filter(|(c, _)| !initial.contains(c)).collect();
    if let Some(limit) = config.limit_alphabet {
        if limit == 0 {
            return Err(Error::config("limit_alphabet must be at least 1"));
        }
        if initial.len() > limit {
            return Err(Error::config(format!(
                "limit_alphabet {limit} is smaller than initial_alphabet ({} characters), which is always kept",
                initial.len()
            )));
        }
        let room = limit - initial.len();
        if seen.len() > room {
            seen.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            seen.truncate(room);
        }
    }
    let mut alphabet: Vec<char> = initial.into_iter().chain(seen.into_iter().map(|(c, _)| c)).collect();
    alphabet.sort_unstable();
    Ok(alphabet)
}

/// A counted word as text, for character-level training.
fn utf8_word(word: &[u8]) -> Result<&str> {
    std::str::from_utf8(word).map_err(|_| {
        Error::config(format!("character-level training needs UTF-8 words; got {:?}", String::from_utf8_lossy(word)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::SplitMix64;
    use std::cell::Cell;

    thread_local! {
        /// Overrides `heap_batch` on this test's thread.
        pub(super) static HEAP_BATCH: Cell<Option<usize>> = const { Cell::new(None) };
        /// Overrides `heap_prune_at`.
        pub(super) static HEAP_PRUNE_AT: Cell<Option<usize>> = const { Cell::new(None) };
    }

    /// `n` random lower-case words with lengths in `lens`, each counted `count` times.
    fn random_words(
        seed: u64,
        n: usize,
        lens: std::ops::Range<usize>,
        mut count: impl FnMut(&mut SplitMix64) -> u64,
    ) -> WordCounts {
        let mut rng = SplitMix64(seed);
        let mut words = WordCounts::default();
        for _ in 0..n {
            let len = lens.start + (rng.next_u64() as usize) % lens.len();
            let word: Vec<u8> = (0..len).map(|_| b'a' + (rng.next_u64() % 26) as u8).collect();
            words.add(&word, count(&mut rng));
        }
        words
    }

    #[test]
    fn cutting_the_heap_back_stays_linear_when_most_pairs_tie() {
        // Unique words counted once: late in training nearly every pair is counted once or
        // twice, so a cut keeps most of the heap (all tied at the cut). Cutting again after every
        // merge was quadratic (200k such words: 67 s instead of 0.5 s).
        use super::super::merge_state::{HEAP_PUSHES, PRUNE_SCANNED};
        let words = random_words(1, 20_000, 3..13, |_| 1);
        HEAP_BATCH.set(Some(50));
        HEAP_PUSHES.set(0);
        PRUNE_SCANNED.set(0);
        let config = BpeTrainConfig { num_merges: Some(8000), ..Default::default() };
        let model = train(&words, &config, &mut |_| Ok(())).unwrap();
        HEAP_BATCH.set(None);
        assert!(model.merges().len() > 4000, "only {} merges", model.merges().len());
        let (pushes, scanned) = (HEAP_PUSHES.get(), PRUNE_SCANNED.get());
        assert!(pushes > 10_000, "only {pushes} pushes: the case is not exercised");
        assert!(scanned <= 4 * pushes, "cuts scanned {scanned} entries for {pushes} pushes");
    }

    #[test]
    fn a_heap_fed_in_small_batches_learns_the_same_merges() {
        // Thousands of distinct pairs and heaps fed a few at a time, so the floor drops (and,
        // as the heap is cut back, rises) many times, against a heap holding every pair; with
        // min_frequency and max_token_length (a pair skipped for its length is popped again after
        // the floor drops, and skipped again).
        let words = random_words(2, 4000, 2..12, |rng| 1 + rng.next_u64() % 20);
        for (min_frequency, max_token_length) in [(1, None), (3, Some(3))] {
            let config =
                BpeTrainConfig { num_merges: Some(600), min_frequency, max_token_length, ..Default::default() };
            let learn = |batch: Option<usize>, prune_at: Option<usize>| {
                HEAP_BATCH.set(batch);
                HEAP_PRUNE_AT.set(prune_at);
                let model = train(&words, &config, &mut |_| Ok(())).unwrap();
                HEAP_BATCH.set(None);
                HEAP_PRUNE_AT.set(None);
                merge_strings(&model)
            };
            let all = learn(Some(usize::MAX), Some(usize::MAX));
            assert!(all.len() > 300, "only {} merges learned", all.len());
            // 1000 is more than the pairs at the start (the byte-level case: the floor starts at
            // the minimum and rises only as merges create pairs and the heap is cut back).
            for batch in [5, 60, 300, 1000] {
                assert_eq!(learn(Some(batch), None), all, "batches of {batch}, min_frequency {min_frequency}");
                // Cut back to the batch whenever it holds a few more.
                let cut_often = learn(Some(batch), Some(batch + 3));
                assert_eq!(cut_often, all, "batches of {batch} cut back often, min_frequency {min_frequency}");
            }
        }
    }

    fn counts(pairs: &[(&str, u64)]) -> WordCounts {
        let mut c = WordCounts::default();
        for &(w, n) in pairs {
            c.add(w.as_bytes(), n);
        }
        c
    }

    fn merge_strings(model: &Bpe) -> Vec<(String, String)> {
        let v = model.vocab();
        model
            .merges()
            .iter()
            .map(|&(l, r)| {
                (
                    String::from_utf8_lossy(v.token_bytes(l).unwrap()).into_owned(),
                    String::from_utf8_lossy(v.token_bytes(r).unwrap()).into_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn textbook_low_lower_newest_widest() {
        let config = BpeTrainConfig {
            num_merges: Some(10),
            options: BpeOptions { end_of_word_suffix: Some("</w>".into()), ..Default::default() },
            ..Default::default()
        };
        let model = train(&counts(&[("low", 5), ("lower", 2), ("newest", 6), ("widest", 3)]), &config, &mut |_| Ok(()))
            .unwrap();
        let merges = merge_strings(&model);
        let first: Vec<(&str, &str)> = merges[..5].iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(first, [("e", "s"), ("es", "t"), ("est", "</w>"), ("l", "o"), ("lo", "w")]);
        let mut ids = Vec::new();
        model.encode_piece("lowest", &mut ids).unwrap();
        let pieces: Vec<&[u8]> = ids.iter().map(|&i| model.vocab().token_bytes(i).unwrap()).collect();
        assert_eq!(pieces, [&b"low"[..], b"est</w>"]);
    }

    #[test]
    fn touching_sites_keep_pair_counts_exact() {
        // "aaaa" merges (a,a) at two touching sites; counts must match a recount from scratch.
        let config = BpeTrainConfig { num_merges: Some(3), ..Default::default() };
        let model = train(&counts(&[("aaaa", 3), ("aaa", 2), ("abab", 1)]), &config, &mut |_| Ok(())).unwrap();
        let merges = merge_strings(&model);
        let merges: Vec<(&str, &str)> = merges.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(merges, [("a", "a"), ("aa", "aa"), ("a", "b")]);
    }

    #[test]
    fn continuing_equals_training_longer() {
        let words = counts(&[("lowest", 4), ("newer", 3), ("wider", 2), ("low", 5), ("ünï", 2)]);
        for byte_level in [true, false] {
            let options = BpeOptions { byte_level, ..Default::default() };
            let short = BpeTrainConfig { num_merges: Some(4), options: options.clone(), ..Default::default() };
            let long = BpeTrainConfig { num_merges: Some(9), options, ..Default::default() };
            let base = train(&words, &short, &mut |_| Ok(())).unwrap();
            let more = BpeTrainConfig { num_merges: Some(5), ..long.clone() };
            let continued = continue_training(&base, &words, &more, &mut |_| Ok(())).unwrap();
            let scratch = train(&words, &long, &mut |_| Ok(())).unwrap();
            assert_eq!(merge_strings(&continued), merge_strings(&scratch), "byte_level={byte_level}");
        }
    }

    #[test]
    fn vocab_size_below_alphabet_is_an_error() {
        let config = BpeTrainConfig { vocab_size: Some(2), ..Default::default() };
        let err = train(&counts(&[("abc", 1)]), &config, &mut |_| Ok(())).unwrap_err();
        assert!(err.to_string().contains("smaller than the base alphabet"), "{err}");
    }

    fn char_config(num_merges: usize) -> BpeTrainConfig {
        BpeTrainConfig { num_merges: Some(num_merges), ..Default::default() }
    }

    fn ordinary_tokens(model: &Bpe) -> Vec<String> {
        model.vocab().ordinary().map(|(_, b)| String::from_utf8_lossy(b).into_owned()).collect()
    }

    #[test]
    fn limit_alphabet_keeps_the_most_frequent_characters() {
        // a: 8, b: 5, z: 3, y: 1 (by count times occurrences).
        let words = counts(&[("aab", 3), ("abz", 2), ("zy", 1)]);
        let config = BpeTrainConfig { limit_alphabet: Some(2), ..char_config(10) };
        let model = train(&words, &config, &mut |_| Ok(())).unwrap();
        assert_eq!(ordinary_tokens(&model)[..2], ["a", "b"]);
        assert_eq!(merge_strings(&model)[0], ("a".to_string(), "b".to_string()));
        assert!(model.vocab().id(b"z").is_none() && model.vocab().id(b"y").is_none());
    }

    #[test]
    fn limit_alphabet_breaks_ties_by_code_point() {
        let words = counts(&[("yx", 2), ("xy", 2), ("w", 1)]);
        let config = BpeTrainConfig { limit_alphabet: Some(1), ..char_config(3) };
        let model = train(&words, &config, &mut |_| Ok(())).unwrap();
        assert_eq!(ordinary_tokens(&model), ["x"]);
        assert!(model.merges().is_empty(), "one character alone forms no pair");
    }

    #[test]
    fn a_dropped_character_splits_its_word() {
        // Without the split, "ab" and "ab" would touch across the dropped "q" and merge again.
        let words = counts(&[("abqab", 1)]);
        for unk_token in [None, Some("<unk>".to_string())] {
            let options = BpeOptions { unk_token: unk_token.clone(), ..Default::default() };
            let config = BpeTrainConfig { limit_alphabet: Some(2), options, ..char_config(5) };
            let model = train(&words, &config, &mut |_| Ok(())).unwrap();
            assert_eq!(merge_strings(&model), [("a".to_string(), "b".to_string())], "unk_token={unk_token:?}");
            let mut ids = Vec::new();
            let encoded = model.encode_piece("abqab", &mut ids);
            match unk_token {
                Some(_) => {
                    let unk = model.vocab().any_id(b"<unk>").unwrap();
                    let ab = model.vocab().id(b"ab").unwrap();
                    assert_eq!(ids, [ab, unk, ab]);
                }
                None => assert!(matches!(encoded, Err(Error::OutOfVocabulary { ch: 'q', .. }))),
            }
        }
    }

    #[test]
    fn suffix_and_special_tokens_do_not_count_against_the_limit() {
        let options = BpeOptions { end_of_word_suffix: Some("</w>".into()), ..Default::default() };
        let config =
            BpeTrainConfig { limit_alphabet: Some(2), special_tokens: vec!["<s>".into()], options, ..char_config(0) };
        let model = train(&counts(&[("abc", 3), ("ab", 1)]), &config, &mut |_| Ok(())).unwrap();
        assert_eq!(ordinary_tokens(&model), ["a", "b", "</w>"]);
        assert_eq!(model.vocab().specials().len(), 1);
    }

    #[test]
    fn initial_alphabet_is_always_kept() {
        let words = counts(&[("aab", 3), ("abz", 2)]);
        let config = BpeTrainConfig { limit_alphabet: Some(3), initial_alphabet: vec!['é', 'y'], ..char_config(1) };
        let model = train(&words, &config, &mut |_| Ok(())).unwrap();
        // 'é' and 'y' are unseen yet kept; one place is left, and 'a' is the most frequent.
        assert_eq!(ordinary_tokens(&model)[..3], ["a", "y", "é"]);
        let mut ids = Vec::new();
        model.encode_piece("éy", &mut ids).unwrap();
        assert_eq!(ids.len(), 2);
    }

    #[test]
    fn alphabet_options_that_cannot_work_are_errors() {
        let words = counts(&[("abc", 1)]);
        let cases = [
            (BpeTrainConfig { limit_alphabet: Some(0), ..char_config(1) }, "at least 1"),
            (
                BpeTrainConfig { limit_alphabet: Some(1), initial_alphabet: vec!['x', 'y'], ..char_config(1) },
                "smaller than initial_alphabet",
            ),
            (
                BpeTrainConfig {
                    limit_alphabet: Some(10),
                    options: BpeOptions { byte_level: true, ..Default::default() },
                    ..char_config(1)
                },
                "character-level",
            ),
        ];
        for (config, expected) in cases {
            let err = train(&words, &config, &mut |_| Ok(())).unwrap_err();
            assert!(matches!(err, Error::Config(_)) && err.to_string().contains(expected), "{err}");
        }
    }

    #[test]
    fn byte_level_initial_alphabet_changes_nothing() {
        let words = counts(&[("lowest", 4), ("ünï", 2)]);
        let options = BpeOptions { byte_level: true, ..Default::default() };
        let plain = BpeTrainConfig { options: options.clone(), ..char_config(6) };
        let with = BpeTrainConfig { initial_alphabet: vec!['Ġ', 'x'], ..plain.clone() };
        let a = train(&words, &plain, &mut |_| Ok(())).unwrap();
        let b = train(&words, &with, &mut |_| Ok(())).unwrap();
        assert_eq!(merge_strings(&a), merge_strings(&b));
        assert_eq!(a.vocab().len(), b.vocab().len());
    }

    #[test]
    fn training_stops_cleanly_when_no_pair_is_left() {
        let words = counts(&[("abc", 1_000_000)]);
        for byte_level in [true, false] {
            let options = BpeOptions { byte_level, ..Default::default() };
            let config = BpeTrainConfig { options, ..char_config(1000) };
            let model = train(&words, &config, &mut |_| Ok(())).unwrap();
            assert_eq!(model.merges().len(), 2, "byte_level={byte_level}");
            let sized = BpeTrainConfig { num_merges: None, vocab_size: Some(100_000), ..config };
            assert_eq!(train(&words, &sized, &mut |_| Ok(())).unwrap().merges().len(), 2);
        }
    }
}
