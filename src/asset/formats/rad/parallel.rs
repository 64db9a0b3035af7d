//! Decoding a file's chunks on several threads on native targets (each chunk's blobs
//! inflate independently, and inflating is most of the time); wasm32 has no threads,
//! so there they decode in the calling thread.

/// `f` over `items`, results in the items' order.
pub fn map_in_order<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(items.len());
        if workers > 1 {
            return map_parallel(items, workers, &f);
        }
    }
    items.iter().map(f).collect()
}

#[cfg(not(target_arch = "wasm32"))]
fn map_parallel<T: Sync, R: Send>(
    items: &[T],
    workers: usize,
    f: &(impl Fn(&T) -> R + Sync),
) -> Vec<R> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    let work = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { break };
            let result = f(item);
            if let Ok(mut results) = results.lock() {
                results[i] = Some(result);
            }
        }
    };
    std::thread::scope(|scope| {
        // A thread that cannot be spawned only means less parallelism: the calling
        // thread takes items too.
        for _ in 1..workers {
            let _ = std::thread::Builder::new().spawn_scoped(scope, work);
        }
        work();
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect()
}
