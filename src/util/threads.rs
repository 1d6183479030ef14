//! The thread pool the core's parallel loops (counting, training) run on — one that survives `fork`.
//!
//! rayon's global pool starts its threads once per process. A child made by `fork` (PyTorch
//! DataLoader workers, `multiprocessing` with the fork start method) inherits the pool's
//! bookkeeping but not its threads, so work handed to it waits forever. This pool remembers the
//! process that built it; in any other process a new pool is built, and the inherited one, whose
//! threads do not exist here, is forgotten rather than shut down.

use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::{Arc, Mutex};

static POOL: Mutex<Option<(u32, Arc<ThreadPool>)>> = Mutex::new(None);

/// This process's pool, built on first use (one thread per core, or `RAYON_NUM_THREADS`).
pub fn pool() -> Arc<ThreadPool> {
    let pid = std::process::id();
    let mut guard = POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((owner, pool)) = guard.as_ref() {
        if *owner == pid {
            return Arc::clone(pool);
        }
    }
    if let Some((_, inherited)) = guard.take() {
        std::mem::forget(inherited);
    }
    let pool = Arc::new(
        ThreadPoolBuilder::new()
            .thread_name(|i| format!("tokenmill-{i}"))
            .build()
            .expect("starting the worker threads"),
    );
    *guard = Some((pid, Arc::clone(&pool)));
    pool
}

/// Runs `op` in this process's pool: every rayon iterator inside it uses the pool's threads.
pub fn install<R: Send>(op: impl FnOnce() -> R + Send) -> R {
    pool().install(op)
}

/// The number of threads the pool runs.
pub fn count() -> usize {
    pool().current_num_threads()
}
