//! The random numbers of sampling (subword regularization, BPE-dropout).

/// A small, fast, seedable generator (SplitMix64): sampling must repeat exactly for a seed on
/// every platform, which a generator of our own guarantees.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Runs `f` with this thread's generator of numbers in [0, 1), seeded once per thread from the
/// clock and a process-wide count: the draws tokenizers' sampling models make on every encode,
/// which no seed repeats (as in tokenizers).
pub fn with_thread_uniform<R>(f: impl FnOnce(&mut dyn FnMut() -> f64) -> R) -> R {
    use std::cell::RefCell;
    use std::sync::atomic::{AtomicU64, Ordering};
    static THREADS: AtomicU64 = AtomicU64::new(0);
    thread_local! {
        static RNG: RefCell<SplitMix64> = RefCell::new({
            let clock = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            let mut mixed = SplitMix64(clock ^ THREADS.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            SplitMix64(mixed.next_u64())
        });
    }
    RNG.with_borrow_mut(|rng| f(&mut || rng.next_f64()))
}
