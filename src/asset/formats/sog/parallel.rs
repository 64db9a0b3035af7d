//! Spreading work over threads on native targets; wasm32 has none, so everything
//! there runs in the calling thread.

use super::error::SogError;

/// Below this many splats per thread, spawning costs more than it saves.
#[cfg(not(target_arch = "wasm32"))]
const MIN_SPLATS_PER_THREAD: usize = 1 << 15;

/// The worker count that `DecodeOptions::threads` asks for (0: one per core).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn workers(threads: usize) -> usize {
    match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Fills `out`, `per_splat` elements per splat, as contiguous runs of splats on up to
/// `threads` threads: `fill(first_splat, run)`. The first error, in splat order, wins.
pub(crate) fn fill_runs<T: Send>(
    out: &mut [T],
    per_splat: usize,
    threads: usize,
    fill: impl Fn(usize, &mut [T]) -> Result<(), SogError> + Sync,
) -> Result<(), SogError> {
    let splats = out.len() / per_splat.max(1);
    #[cfg(not(target_arch = "wasm32"))]
    {
        let workers = workers(threads).min(splats / MIN_SPLATS_PER_THREAD);
        if workers > 1 {
            return fill_parallel(out, per_splat, splats.div_ceil(workers), &fill);
        }
    }
    #[cfg(target_arch = "wasm32")]
    let _ = (threads, splats);
    fill(0, out)
}

#[cfg(not(target_arch = "wasm32"))]
fn fill_parallel<T: Send>(
    out: &mut [T],
    per_splat: usize,
    run: usize,
    fill: &(impl Fn(usize, &mut [T]) -> Result<(), SogError> + Sync),
) -> Result<(), SogError> {
    use std::sync::Mutex;

    // Runs wait in a queue that the calling thread drains too, so a thread that cannot
    // be spawned only means less parallelism, never a run left undone.
    let queue: Mutex<Vec<(usize, &mut [T])>> = Mutex::new(
        out.chunks_mut(run * per_splat)
            .enumerate()
            .map(|(k, chunk)| (k * run, chunk))
            .rev()
            .collect(),
    );
    let failures: Mutex<Vec<(usize, SogError)>> = Mutex::new(Vec::new());
    let work = || {
        loop {
            let next = queue.lock().map(|mut q| q.pop()).unwrap_or(None);
            let Some((first, chunk)) = next else { break };
            if let Err(e) = fill(first, chunk)
                && let Ok(mut failures) = failures.lock()
            {
                failures.push((first, e));
            }
        }
    };
    let runs = queue.lock().map_or(0, |q| q.len());
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..runs)
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(scope, work).ok())
            .collect();
        work();
        for helper in helpers {
            // Our own code does not panic on any input; if it ever does, say so.
            if let Err(panic) = helper.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
    let mut failures = failures.into_inner().unwrap_or_default();
    failures.sort_by_key(|(first, _)| *first);
    failures.into_iter().next().map_or(Ok(()), |(_, e)| Err(e))
}
