//! GPU prefix scan and radix sort against CPU references (runs on lavapipe in CI).

mod common;

use std::fmt::Debug;
use std::time::{Duration, Instant};

use bevy_splat::gpu_sort::{
    LookBack, ONESWEEP_LARGEST_SORT, RadixSort, SORT_BLOCK, SORT_WORKGROUP_SIZE, SortAlgorithm,
    SortBuffers, SortKey, SortRanking, SortStorage, SortValues,
};
use bevy_splat::gpu_sort::{PrefixScan, SCAN_BLOCK, ScanBuffers};
use common::gpu::Gpu;

/// The counter buffer of every test holds n and the scan total side by side, at
/// offsets that are not multiples of 256 (n is past the first 256 bytes).
const COUNT_WORD: usize = 67;
const TOTAL_WORD: usize = 3;
const COUNTER_WORDS: usize = 80;
const SENTINEL: u32 = 0xDEAD_BEEF;
/// The algorithms most sort tests run here: the classic steps on every adapter, and
/// the one-sweep sort where the plugin runs it (`SortAlgorithm::for_adapter`: NVIDIA
/// and AMD GPUs through a native API) or when `BEVY_SPLAT_TEST_ONESWEEP` is set. On
/// lavapipe (CI) the one-sweep sort once went wrong in about one run of this file in
/// three, from lavapipe's loop budget (`radix_sort/look_back.wgsl`); since its waits
/// are bounded it is exact there too, and CI tests it through
/// [`sort_stress_matches_cpu_stable_sort`] and [`one_sweep_fallback_counts_exactly`],
/// which run it on every adapter. Running every test below with both algorithms on
/// lavapipe would double this file's time for little more.
fn algorithms(gpu: &Gpu) -> Vec<SortAlgorithm> {
    let onesweep = SortAlgorithm::for_adapter(&gpu.device.adapter_info())
        == SortAlgorithm::OneSweep
        || std::env::var_os("BEVY_SPLAT_TEST_ONESWEEP").is_some();
    let mut algorithms = vec![SortAlgorithm::Classic];
    if onesweep {
        algorithms.push(SortAlgorithm::OneSweep);
    } else {
        eprintln!(
            "{}: the one-sweep sort is tested here only by the stress and fallback tests \
             (set BEVY_SPLAT_TEST_ONESWEEP for all)",
            gpu.describe()
        );
    }
    algorithms
}

/// The rankings the stress test and the benchmark run: the workgroup masks, which any
/// adapter runs, and the subgroup ballots where this device has them
/// (`SortRanking::for_device`; lavapipe does, with 8 lanes).
fn rankings(gpu: &Gpu) -> Vec<SortRanking> {
    let mut rankings = vec![SortRanking::WorkgroupMasks];
    let device_ranking = SortRanking::for_device(&gpu.device);
    if device_ranking != SortRanking::WorkgroupMasks {
        rankings.push(device_ranking);
    }
    rankings
}

/// splitmix64
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..bound (bound > 0), slightly biased, fine for tests.
    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }
}

fn counters(gpu: &Gpu, n: u32) -> wgpu::Buffer {
    let mut words = vec![SENTINEL; COUNTER_WORDS];
    words[COUNT_WORD] = n;
    gpu.upload(&words, wgpu::BufferUsages::STORAGE)
}

/// Buffers for `capacity` pairs of `sort` that read n from word COUNT_WORD of
/// `counter` (made by [`counters`]).
fn counted_buffers(
    gpu: &Gpu,
    sort: &RadixSort,
    capacity: u32,
    counter: &wgpu::Buffer,
) -> SortBuffers {
    SortBuffers::new(
        &gpu.device,
        sort,
        capacity,
        counter,
        (COUNT_WORD * 4) as u64,
    )
}

#[track_caller]
fn assert_same<T: PartialEq + Debug>(what: &str, got: &[T], want: &[T]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        let to = (i + 4).min(got.len());
        panic!(
            "{what}: first mismatch at {i}: got {:?}, want {:?}",
            &got[i..to],
            &want[i..to]
        );
    }
}

/// Scans `n` random values held in a buffer of `capacity` (plus slack) and checks the
/// prefix, the total, and that everything past n is untouched. Returns the GPU time.
fn check_scan(gpu: &Gpu, scan: &PrefixScan, n: u32, capacity: u32, rng: &mut Rng) -> Duration {
    assert!(n <= capacity);
    // Values small enough for the total to fit in u32.
    let max_value = (u64::from(u32::MAX) / u64::from(n.max(1))).min(1 << 20);
    let input: Vec<u32> = (0..capacity as usize + 7)
        .map(|_| rng.below(max_value + 1) as u32)
        .collect();
    let values = gpu.upload(&input, wgpu::BufferUsages::STORAGE);
    let counter = counters(gpu, n);
    let buffers = ScanBuffers::new(
        &gpu.device,
        scan,
        capacity,
        &values,
        &counter,
        (COUNT_WORD * 4) as u64,
        &counter,
        (TOTAL_WORD * 4) as u64,
    );
    let start = Instant::now();
    gpu.run(|pass| scan.encode(pass, &buffers));
    let elapsed = start.elapsed();

    let mut want = input.clone();
    let mut run = 0u32;
    for v in &mut want[..n as usize] {
        let x = *v;
        *v = run;
        run += x;
    }
    let got: Vec<u32> = gpu.read(&values, input.len());
    assert_same(&format!("scan of {n} (capacity {capacity})"), &got, &want);
    let mut want_counters = vec![SENTINEL; COUNTER_WORDS];
    want_counters[COUNT_WORD] = n;
    want_counters[TOTAL_WORD] = run;
    let got_counters: Vec<u32> = gpu.read(&counter, COUNTER_WORDS);
    assert_same(
        &format!("scan of {n}: counters"),
        &got_counters,
        &want_counters,
    );
    elapsed
}

#[derive(Clone, Copy, Debug)]
enum Keys {
    /// Uniform over the key bits.
    Uniform,
    /// 13 distinct keys spread over the key bits: long runs of equal keys.
    FewDistinct,
    /// Like the renderer's: a tile id (few hundred values) above 32 depth bits, from
    /// few depths.
    TileDepth,
    /// Uniform over all 64 bits: the bits above `key_bits` must be ignored.
    Unmasked,
}

fn make_keys(kind: Keys, n: usize, key_bits: u32, rng: &mut Rng) -> Vec<u64> {
    let mask = if key_bits >= 64 {
        u64::MAX
    } else {
        (1u64 << key_bits) - 1
    };
    let few: Vec<u64> = (0..13).map(|_| rng.next()).collect();
    (0..n)
        .map(|_| match kind {
            Keys::Uniform => rng.next() & mask,
            Keys::FewDistinct => few[rng.below(few.len() as u64) as usize] & mask,
            Keys::TileDepth => {
                ((rng.below(300) << 32) | rng.below(5000).wrapping_mul(0x9E37_79B9)) & mask
            }
            Keys::Unmasked => rng.next(),
        })
        .collect()
}

/// Writes `keys` and, as values, their indices into the sort's input buffers.
/// `keys` as a sort of `key` keys stores them: 64 bits each, or their low 32 bits.
fn keys_as_stored(key: SortKey, keys: &[u64]) -> Vec<u8> {
    match key {
        SortKey::U64 => bytemuck::cast_slice(keys).to_vec(),
        SortKey::U32 => keys
            .iter()
            .flat_map(|&k| (k as u32).to_le_bytes())
            .collect(),
    }
}

/// Keys stored at `key`'s width, widened to 64 bits.
fn keys_widened(key: SortKey, bytes: &[u8]) -> Vec<u64> {
    match key {
        SortKey::U64 => bytemuck::pod_collect_to_vec(bytes),
        SortKey::U32 => bytemuck::pod_collect_to_vec::<u8, u32>(bytes)
            .into_iter()
            .map(u64::from)
            .collect(),
    }
}

fn fill<K: bytemuck::Pod>(gpu: &Gpu, buffers: &SortBuffers, keys: &[K]) {
    if keys.is_empty() {
        return;
    }
    let values: Vec<u32> = (0..keys.len() as u32).collect();
    gpu.queue
        .write_buffer(&buffers.keys[0], 0, bytemuck::cast_slice(keys));
    gpu.queue
        .write_buffer(&buffers.values[0], 0, bytemuck::cast_slice(&values));
}

/// Sorts `n` pairs (values = input index) on the GPU and checks them against a CPU
/// stable sort by the low `key_bits` bits. Returns the GPU time.
fn check_sort(
    gpu: &Gpu,
    sort: &RadixSort,
    n: u32,
    capacity: u32,
    key_bits: u32,
    kind: Keys,
    rng: &mut Rng,
) -> Duration {
    let keys = make_keys(kind, n as usize, key_bits, rng);
    let counter = counters(gpu, n);
    let buffers = counted_buffers(gpu, sort, capacity, &counter);
    assert_eq!(buffers.capacity(), capacity);
    fill(gpu, &buffers, &keys);
    let mut result = usize::MAX;
    let start = Instant::now();
    gpu.run(|pass| result = sort.encode(pass, &buffers, key_bits));
    let elapsed = start.elapsed();
    assert_eq!(
        result,
        key_bits.div_ceil(8) as usize % 2,
        "result buffer index"
    );

    let mask = if key_bits >= 64 {
        u64::MAX
    } else {
        (1u64 << key_bits) - 1
    };
    let mut order: Vec<u32> = (0..n).collect();
    order.sort_by_key(|&i| keys[i as usize] & mask); // stable
    let want_keys: Vec<u64> = order.iter().map(|&i| keys[i as usize]).collect();
    let got_values: Vec<u32> = gpu.read(&buffers.values[result], n as usize);
    let got_keys: Vec<u64> = gpu.read(&buffers.keys[result], n as usize);
    let what = format!("sort of {n} ({kind:?}, {key_bits} bits)");
    assert_same(&format!("{what}: keys"), &got_keys, &want_keys);
    assert_same(&format!("{what}: values (stability)"), &got_values, &order);
    elapsed
}

#[test]
fn prefix_scan_matches_cpu() {
    let gpu = Gpu::new();
    let scan = PrefixScan::new(&gpu.device);
    let mut rng = Rng(1);
    let big = (1 << 24) + 3;
    let cases: &[(u32, u32)] = &[
        (0, 0),
        (0, 100),
        (1, 1),
        (255, 300),
        (256, 256),
        (257, 5000),
        (SCAN_BLOCK, SCAN_BLOCK),
        (SCAN_BLOCK + 1, 2 * SCAN_BLOCK),
        (65_537, 65_600),
        (1_000_000, 1_000_000),
        // three levels
        (big, big),
    ];
    eprintln!("prefix scan on {}", gpu.describe());
    for &(n, capacity) in cases {
        let t = check_scan(&gpu, &scan, n, capacity, &mut rng);
        eprintln!("  scan n = {n:>9} (capacity {capacity:>9}): {t:.2?}");
    }
}

#[test]
fn radix_sort_matches_cpu_stable_sort() {
    let gpu = Gpu::new();
    for algorithm in algorithms(&gpu) {
        let sort = RadixSort::with_key(&gpu.device, SortKey::U64, algorithm);
        let mut rng = Rng(2);
        let bits = [1, 7, 8, 9, 31, 32, 33, 43, 64];
        let kinds = [
            Keys::Uniform,
            Keys::FewDistinct,
            Keys::TileDepth,
            Keys::Unmasked,
        ];
        eprintln!("{algorithm:?} radix sort on {}", gpu.describe());
        let mut case = 0;
        for n in [0, 1, 255, 256, 257, SORT_BLOCK + 1, 65_537] {
            let start = Instant::now();
            for key_bits in bits {
                let kind = kinds[case % kinds.len()];
                case += 1;
                // Some cases with room to spare.
                let capacity = if case % 3 == 0 { n + 1000 } else { n };
                check_sort(&gpu, &sort, n, capacity, key_bits, kind, &mut rng);
            }
            eprintln!("  sort n = {n:>9}, all key widths: {:.2?}", start.elapsed());
        }
        for (key_bits, kind) in [
            (9, Keys::FewDistinct),
            (32, Keys::Uniform),
            (43, Keys::TileDepth),
            (64, Keys::Uniform),
        ] {
            let n = 1_000_000;
            let t = check_sort(&gpu, &sort, n, n, key_bits, kind, &mut rng);
            eprintln!("  sort n = {n:>9}, {key_bits:>2} bits ({kind:?}): {t:.2?}");
        }
    }
}

/// One sort's buffers reused with other pair counts and key widths, as a view's are
/// from frame to frame: nothing a sort leaves behind (the one-sweep sort's block
/// counters and look-back words) leaks into the next.
#[test]
fn a_reused_sort_stays_exact() {
    let gpu = Gpu::new();
    let capacity = 300_000u32;
    for algorithm in algorithms(&gpu) {
        let sort = RadixSort::with_key(&gpu.device, SortKey::U64, algorithm);
        let counter = counters(&gpu, 0);
        let buffers = counted_buffers(&gpu, &sort, capacity, &counter);
        assert_eq!(buffers.algorithm(), algorithm, "a small sort runs as asked");
        let mut rng = Rng(9);
        for (n, key_bits) in [
            (capacity, 43),
            (5_000, 43),
            (capacity, 16),
            (0, 24),
            (capacity - 7, 64),
            (SORT_BLOCK, 8),
            (capacity, 43),
        ] {
            let keys = make_keys(Keys::TileDepth, n as usize, key_bits, &mut rng);
            gpu.queue
                .write_buffer(&counter, (COUNT_WORD * 4) as u64, bytemuck::bytes_of(&n));
            fill(&gpu, &buffers, &keys);
            let mut result = usize::MAX;
            gpu.run(|pass| result = sort.encode(pass, &buffers, key_bits));
            let mask = if key_bits >= 64 {
                u64::MAX
            } else {
                (1u64 << key_bits) - 1
            };
            let mut order: Vec<u32> = (0..n).collect();
            order.sort_by_key(|&i| keys[i as usize] & mask);
            let got_values: Vec<u32> = gpu.read(&buffers.values[result], n as usize);
            let what = format!("{algorithm:?} sort of {n} ({key_bits} bits), reused");
            assert_same(&what, &got_values, &order);
        }
    }
}

/// The same sort built for 32-bit keys (the renderer's tile sort): stable, by the low
/// `key_bits` bits, keys carried along.
#[test]
fn radix_sort_of_u32_keys_matches_cpu_stable_sort() {
    let gpu = Gpu::new();
    for algorithm in algorithms(&gpu) {
        let sort = RadixSort::with_key(&gpu.device, SortKey::U32, algorithm);
        let mut rng = Rng(4);
        for n in [0u32, 1, 257, SORT_BLOCK + 1, 65_537, 1_000_000] {
            for key_bits in [1, 8, 13, 16, 32] {
                let mask = if key_bits == 32 {
                    u32::MAX
                } else {
                    (1u32 << key_bits) - 1
                };
                // Few distinct keys when n is large: long runs of equal keys.
                let keys: Vec<u32> = (0..n)
                    .map(|_| (rng.below(1 << 20) as u32).wrapping_mul(0x9E37_79B9))
                    .collect();
                let counter = counters(&gpu, n);
                let buffers = counted_buffers(&gpu, &sort, n.max(1), &counter);
                fill(&gpu, &buffers, &keys);
                let mut result = usize::MAX;
                gpu.run(|pass| result = sort.encode(pass, &buffers, key_bits));
                assert_eq!(result, RadixSort::output_index(key_bits));
                let mut order: Vec<u32> = (0..n).collect();
                order.sort_by_key(|&i| keys[i as usize] & mask);
                let want_keys: Vec<u32> = order.iter().map(|&i| keys[i as usize]).collect();
                let what = format!("u32 sort of {n} ({key_bits} bits)");
                let got_keys: Vec<u32> = gpu.read(&buffers.keys[result], n as usize);
                let got_values: Vec<u32> = gpu.read(&buffers.values[result], n as usize);
                assert_same(&format!("{what}: keys"), &got_keys, &want_keys);
                assert_same(&format!("{what}: values (stability)"), &got_values, &order);
            }
        }
    }
}

/// Every kernel runs on 2-D grids once its workgroup count passes the device's
/// per-dimension limit (65,535). The data that takes on lavapipe is past its 128 MiB
/// binding limit, so this lowers the grid limit to exercise the same path, including
/// surplus groups in the last row. Devices with large bindings also run a scan with
/// more than 65,535 workgroups for real.
#[test]
fn grids_beyond_dispatch_limit() {
    let gpu = Gpu::new();
    let mut rng = Rng(3);
    for max_x in [1, 7] {
        let scan = PrefixScan::with_max_workgroups_per_dimension(&gpu.device, max_x);
        for n in [0, 3000, 1_000_000] {
            check_scan(&gpu, &scan, n, n, &mut rng);
        }
        for algorithm in algorithms(&gpu) {
            let sort = RadixSort::with_max_workgroups_per_dimension(&gpu.device, algorithm, max_x);
            for (n, key_bits) in [(65_537, 43), (1_000_000, 20)] {
                check_sort(&gpu, &sort, n, n, key_bits, Keys::TileDepth, &mut rng);
            }
        }
    }

    let limits = gpu.device.limits();
    let groups = u64::from(limits.max_compute_workgroups_per_dimension) + 2;
    let n = groups * u64::from(SCAN_BLOCK) - 100;
    if n * 4 > limits.max_storage_buffer_binding_size {
        eprintln!(
            "real > {} workgroup scan skipped: {} byte binding limit",
            limits.max_compute_workgroups_per_dimension, limits.max_storage_buffer_binding_size
        );
        return;
    }
    let scan = PrefixScan::new(&gpu.device);
    let t = check_scan(&gpu, &scan, n as u32, n as u32, &mut rng);
    eprintln!("scan of {n} ({groups} workgroups): {t:.2?}");
}

/// GPU time of one compute pass recorded by `f`, from timestamp queries.
fn timed_pass(gpu: &Gpu, f: impl FnOnce(&mut wgpu::ComputePass<'_>)) -> Duration {
    let queries = gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
        label: Some("bench timestamps"),
        ty: wgpu::QueryType::Timestamp,
        count: 2,
    });
    let resolved = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("bench timestamps"),
        size: 16,
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("bench pass"),
            timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                query_set: &queries,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            }),
        });
        f(&mut pass);
    }
    encoder.resolve_query_set(&queries, 0..2, &resolved, 0);
    gpu.queue.submit([encoder.finish()]);
    let ticks: Vec<u64> = gpu.read(&resolved, 2);
    let ns = ticks[1].saturating_sub(ticks[0]) as f64 * f64::from(gpu.queue.get_timestamp_period());
    Duration::from_nanos(ns as u64)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Timings for a real GPU (lavapipe's say nothing):
/// `cargo test --test gpu_sort -- --ignored --nocapture`. `BENCH_PAIRS` sets the pair
/// count (default 30M, the renderer's load for a 5.8M-splat scene; the one-sweep sort
/// runs up to `ONESWEEP_LARGEST_SORT`), `BENCH_LOOK_BACK_SPINS` the one-sweep
/// look-back's spins (`LookBack::Wait`).
#[test]
#[ignore = "benchmark, for real GPUs"]
fn benchmark_sort_and_scan() {
    let gpu = Gpu::new();
    eprintln!("benchmark on {}", gpu.describe());
    let features = gpu.device.features();
    if !features
        .contains(wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES)
    {
        eprintln!("no timestamp queries inside passes: skipped");
        return;
    }
    let limit = gpu.device.limits().max_storage_buffer_binding_size / 8;
    let n: u32 = std::env::var("BENCH_PAIRS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30_000_000u32)
        .min(limit as u32);
    for algorithm in algorithms(&gpu) {
        for ranking in rankings(&gpu) {
            benchmark_sort(&gpu, (algorithm, ranking), n, SortKey::U64);
            // The renderer's two sorts, at the angel grid K = 9's sizes: 5.8 M depth
            // keys of 24 bits, 10.3 M bin keys of 13 bits.
            benchmark_sort(&gpu, (algorithm, ranking), n.min(5_800_000), SortKey::U32);
        }
    }
    benchmark_scan(&gpu);
}

/// Times `n` pairs of `key` keys (for `U32`, the renderer's depth and bin sorts, the
/// latter with 1.78 times as many pairs) by `algorithm` with `ranking`.
fn benchmark_sort(
    gpu: &Gpu,
    (algorithm, ranking): (SortAlgorithm, SortRanking),
    n: u32,
    key: SortKey,
) {
    const ITERATIONS: usize = 12;
    const WARM_UP: usize = 4;
    // `with_look_back` ranks as the device suits, so other rankings keep the default
    // spins (and report none).
    let spins = env_number("BENCH_LOOK_BACK_SPINS")
        .map(|spins| spins as u32)
        .filter(|_| {
            algorithm == SortAlgorithm::OneSweep && ranking == SortRanking::for_device(&gpu.device)
        });
    let sort = match spins {
        Some(spins) => RadixSort::with_look_back(&gpu.device, key, LookBack::Wait { spins }),
        None => RadixSort::with_ranking(&gpu.device, key, algorithm, ranking),
    };
    let capacity = if key == SortKey::U32 {
        n * 16 / 9 + 1
    } else {
        n
    };
    let counter = counters(gpu, n);
    let buffers = counted_buffers(gpu, &sort, capacity, &counter);
    let fallbacks = || {
        buffers.look_back_fallbacks().map(|(buffer, offset)| {
            let words: Vec<u32> = gpu.read(buffer, offset as usize / 4 + 1);
            words[offset as usize / 4]
        })
    };
    eprintln!(
        "{:?} sort buffers ({ranking:?}) for {capacity} pairs of {key:?} keys ({spins:?} \
         spins): {:.1} MiB",
        buffers.algorithm(),
        buffers.gpu_bytes() as f64 / (1 << 20) as f64
    );
    let queries: Vec<wgpu::QuerySet> = (0..ITERATIONS)
        .map(|_| {
            gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("bench timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 25,
            })
        })
        .collect();
    let resolved = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("bench timestamps"),
        size: 256 * ITERATIONS as u64,
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let period = f64::from(gpu.queue.get_timestamp_period());
    let values: Vec<u32> = (0..capacity).collect();
    let pristine_values = gpu.upload(&values, wgpu::BufferUsages::COPY_SRC);
    let mut rng = Rng(4);
    type Config<'a> = (&'a str, u32, u32, &'a dyn Fn(&mut Rng) -> u64);
    let u64_configs: [Config; 4] = [
        // 13 tile bits (8160 tiles, 1080p) above 32 depth bits, as the renderer once sorted.
        ("tile+depth", n, 45, &|r: &mut Rng| {
            (r.below(8160) << 32) | (r.next() & 0xFFFF_FFFF)
        }),
        ("uniform", n, 64, &|r: &mut Rng| r.next()),
        ("uniform", n, 8, &|r: &mut Rng| r.next()),
        // every digit equal: the worst case for workgroup atomics
        ("constant", n, 32, &|_: &mut Rng| 0x1234_5678),
    ];
    let u32_configs: [Config; 2] = [
        ("depth", n, 24, &|r: &mut Rng| r.below(1 << 24)),
        // Bins of 16x16-pixel tiles at 1080p, uniformly random (the duplicate's keys
        // come in runs, which this does not model).
        ("bins", capacity - 1, 13, &|r: &mut Rng| r.below(8160)),
    ];
    let configs: &[Config] = match key {
        SortKey::U64 => &u64_configs,
        SortKey::U32 => &u32_configs,
    };
    // BENCH_CONFIGS=0,3 picks configurations by index.
    let picked: Option<Vec<usize>> = std::env::var("BENCH_CONFIGS")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect());
    for (index, &(name, n, key_bits, make)) in configs.iter().enumerate() {
        if picked.as_ref().is_some_and(|p| !p.contains(&index)) {
            continue;
        }
        gpu.queue
            .write_buffer(&counter, (COUNT_WORD * 4) as u64, bytemuck::bytes_of(&n));
        let keys: Vec<u64> = (0..n).map(|_| make(&mut rng)).collect();
        let fallbacks_before = fallbacks();
        let pristine_keys = gpu.upload(&keys_as_stored(key, &keys), wgpu::BufferUsages::COPY_SRC);
        let passes = key_bits.div_ceil(8) as usize;
        let stamps = 1 + 3 * passes as u32;
        // The GPU drops its clocks while the CPU prepares data (seen on the H200: 345
        // against 1980 MHz) and takes a while to raise them: keep it busy for a second
        // first. Then all iterations back to back in one submission, the first few as
        // warm-up.
        let warm_up = Instant::now();
        while warm_up.elapsed() < Duration::from_secs(1) {
            gpu.run(|pass| {
                sort.encode(pass, &buffers, key_bits);
            });
        }
        let mut result = 0;
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        for q in &queries {
            encoder.copy_buffer_to_buffer(
                &pristine_keys,
                0,
                &buffers.keys[0],
                0,
                u64::from(n) * key.bytes(),
            );
            encoder.copy_buffer_to_buffer(
                &pristine_values,
                0,
                &buffers.values[0],
                0,
                u64::from(n) * 4,
            );
            let mut pass = encoder.begin_compute_pass(&Default::default());
            result = sort.encode_profiled(&mut pass, &buffers, key_bits, q);
        }
        for (k, q) in queries.iter().enumerate() {
            encoder.resolve_query_set(q, 0..stamps, &resolved, 256 * k as u64);
        }
        gpu.queue.submit([encoder.finish()]);
        let ticks: Vec<u64> = gpu.read(&resolved, 32 * ITERATIONS);
        let mut runs: Vec<Vec<f64>> = (WARM_UP..ITERATIONS)
            .map(|k| {
                ticks[32 * k..32 * k + stamps as usize]
                    .windows(2)
                    .map(|w| w[1].saturating_sub(w[0]) as f64 * period / 1e6)
                    .collect()
            })
            .collect();
        let total = |r: &Vec<f64>| r.iter().sum::<f64>();
        runs.sort_by(|a, b| total(a).total_cmp(&total(b)));
        let mid = &runs[runs.len() / 2];
        let steps: Vec<String> = mid
            .chunks(3)
            .map(|c| format!("{:.3}+{:.3}+{:.3}", c[0], c[1], c[2]))
            .collect();
        eprintln!(
            "{algorithm:?} sort ({ranking:?}) {n} pairs, {name} keys, {key_bits} bits: {:.3} ms (median of {}), \
             {:.0} Mpairs/s; per pass count+scan+scatter ms: {}",
            total(mid),
            ITERATIONS - WARM_UP,
            f64::from(n) / total(mid) / 1e3,
            steps.join(" | ")
        );
        if let (Some(before), Some(after)) = (fallbacks_before, fallbacks()) {
            eprintln!(
                "  look-back fallbacks over the warm-up and the {ITERATIONS} timed sorts: {}",
                after.wrapping_sub(before)
            );
        }
        // Full check in O(n): a permutation, keys carried along, sorted, stable.
        let mask = if key_bits >= 64 {
            u64::MAX
        } else {
            (1u64 << key_bits) - 1
        };
        let got_keys = keys_widened(
            key,
            &gpu.read(&buffers.keys[result], (u64::from(n) * key.bytes()) as usize),
        );
        let got_values: Vec<u32> = gpu.read(&buffers.values[result], n as usize);
        let mut seen = vec![false; n as usize];
        for i in 0..n as usize {
            let v = got_values[i] as usize;
            assert!(
                !seen[v] && got_keys[i] == keys[v],
                "pair {i} is not an input pair"
            );
            seen[v] = true;
            if i > 0 {
                let (a, b) = (got_keys[i - 1] & mask, got_keys[i] & mask);
                assert!(
                    a < b || (a == b && got_values[i - 1] < got_values[i]),
                    "pairs {} and {i} out of order",
                    i - 1
                );
            }
        }
    }
}

fn benchmark_scan(gpu: &Gpu) {
    let scan = PrefixScan::new(&gpu.device);
    for m in [5_800_000u32, 30_000_000] {
        let values = gpu.upload(&vec![1u32; m as usize], wgpu::BufferUsages::STORAGE);
        let counter = counters(gpu, m);
        let buffers = ScanBuffers::new(
            &gpu.device,
            &scan,
            m,
            &values,
            &counter,
            (COUNT_WORD * 4) as u64,
            &counter,
            (TOTAL_WORD * 4) as u64,
        );
        // Rescanning scanned values only changes the numbers, not the work. Ten scans
        // per pass, back to back, after a second of warm-up.
        let warm_up = Instant::now();
        while warm_up.elapsed() < Duration::from_secs(1) {
            gpu.run(|pass| scan.encode(pass, &buffers));
        }
        let times: Vec<Duration> = (0..5)
            .map(|_| {
                timed_pass(gpu, |pass| {
                    for _ in 0..10 {
                        scan.encode(pass, &buffers);
                    }
                }) / 10
            })
            .collect();
        let t = median(times);
        eprintln!(
            "scan {m} values: {t:.3?} median of 5, {:.0} GB/s (12 bytes per value)",
            f64::from(m) * 12.0 / t.as_secs_f64() / 1e9
        );
    }
}

/// A sort told its keys' range (`SortBuffers::with_key_range`) orders by the top bits
/// of (key − smallest): exactly when the keys span fewer than 2^bits values, and by
/// the span's top bits, stably, when they span more. 64-bit keys (the high word moves
/// along unsorted) with the caller's values, and 32-bit keys whose values are their
/// input indices (`SortValues::InputIndex`).
#[test]
fn a_ranged_sort_orders_by_the_top_bits_of_the_span() {
    let gpu = Gpu::new();
    for algorithm in algorithms(&gpu) {
        ranged_sort_case(&gpu, algorithm);
    }
}

fn ranged_sort_case(gpu: &Gpu, algorithm: SortAlgorithm) {
    let sort = RadixSort::with_key(&gpu.device, SortKey::U64, algorithm);
    let sort_u32 = RadixSort::with_key(&gpu.device, SortKey::U32, algorithm);
    let mut rng = Rng(7);
    const RANGE_WORD: usize = 70;
    let n = 50_000u32;
    // (smallest key, span): within 24 bits, then 4 bits more (the lowest 4 ignored).
    for (base, span) in [(0x3f80_0000u32, 1u32 << 24), (0x3c00_0000, 1 << 28)] {
        let low: Vec<u32> = (0..n)
            .map(|_| base + rng.below(u64::from(span)) as u32)
            .collect();
        // The high word carries a payload the sort must move, not sort by.
        let keys: Vec<[u32; 2]> = low.iter().map(|&k| [k, k ^ 0x5555]).collect();
        let mut words = vec![SENTINEL; COUNTER_WORDS];
        words[COUNT_WORD] = n;
        let most = *low.iter().max().unwrap();
        let least = *low.iter().min().unwrap();
        words[RANGE_WORD] = most;
        words[RANGE_WORD + 1] = !least;
        let counter = gpu.upload(&words, wgpu::BufferUsages::STORAGE);
        let ranged = |sort: &RadixSort, values| {
            SortBuffers::with_key_range(
                &gpu.device,
                sort,
                n,
                &counter,
                (COUNT_WORD * 4) as u64,
                (RANGE_WORD * 4) as u64,
                24,
                values,
            )
        };
        let bits = 32 - (most - least).leading_zeros();
        let shift = bits.saturating_sub(24);
        let mut order: Vec<u32> = (0..n).collect();
        order.sort_by_key(|&i| (low[i as usize] - least) >> shift); // stable
        let what = format!(
            "{algorithm:?} ranged sort over a span of 2^{}",
            span.trailing_zeros()
        );

        let wide = ranged(&sort, SortValues::Given);
        fill(gpu, &wide, &keys);
        let mut result = usize::MAX;
        gpu.run(|pass| result = sort.encode(pass, &wide, 24));
        assert_eq!(result, 1, "three passes end in buffer 1");
        let got_values: Vec<u32> = gpu.read(&wide.values[result], n as usize);
        let got_keys: Vec<[u32; 2]> = gpu.read(&wide.keys[result], n as usize);
        let want_keys: Vec<[u32; 2]> = order.iter().map(|&i| keys[i as usize]).collect();
        assert_same(&format!("{what}: values"), &got_values, &order);
        assert_same(&format!("{what}: keys"), &got_keys, &want_keys);
        if shift == 0 {
            assert!(
                got_keys.windows(2).all(|w| w[0][0] <= w[1][0]),
                "{what}: exact order"
            );
        }

        // 32-bit keys, values = input indices: values[0] holds garbage the sort must
        // not read.
        let narrow = ranged(&sort_u32, SortValues::InputIndex);
        gpu.queue
            .write_buffer(&narrow.keys[0], 0, bytemuck::cast_slice(&low));
        gpu.queue.write_buffer(
            &narrow.values[0],
            0,
            bytemuck::cast_slice(&vec![SENTINEL; n as usize]),
        );
        gpu.run(|pass| result = sort_u32.encode(pass, &narrow, 24));
        let got_values: Vec<u32> = gpu.read(&narrow.values[result], n as usize);
        let got_keys: Vec<u32> = gpu.read(&narrow.keys[result], n as usize);
        let want_keys: Vec<u32> = order.iter().map(|&i| low[i as usize]).collect();
        assert_same(&format!("{what}, u32: values"), &got_values, &order);
        assert_same(&format!("{what}, u32: keys"), &got_keys, &want_keys);
    }
}

/// A sort that prefers the one-sweep algorithm runs it up to `ONESWEEP_LARGEST_SORT`
/// pairs and the classic steps above, where its look-back costs more than it saves.
#[test]
fn large_sorts_run_the_classic_steps() {
    let gpu = Gpu::new();
    let onesweep = RadixSort::with_key(&gpu.device, SortKey::U32, SortAlgorithm::OneSweep);
    assert_eq!(
        onesweep.algorithm_for(ONESWEEP_LARGEST_SORT),
        SortAlgorithm::OneSweep
    );
    assert_eq!(
        onesweep.algorithm_for(ONESWEEP_LARGEST_SORT + 1),
        SortAlgorithm::Classic
    );
    let classic = RadixSort::with_key(&gpu.device, SortKey::U32, SortAlgorithm::Classic);
    assert_eq!(classic.algorithm_for(1), SortAlgorithm::Classic);
}

/// Key sets [`sort_stress_matches_cpu_stable_sort`] sorts per algorithm, unless
/// `BEVY_SPLAT_SORT_STRESS` gives another count (say 10000 on a real GPU).
const STRESS_SETS: usize = 2000;
/// Largest pair count of a stress sort (its buffers' capacity).
const STRESS_CAPACITY: u32 = 1 << 20;
/// Most pairs and sorts in one submission: the sorts of a batch run back to back on
/// the same buffers, each fed and read back by copies.
const STRESS_BATCH_PAIRS: u64 = 1 << 20;
const STRESS_BATCH_SORTS: usize = 64;

/// How a stress set's keys are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StressKeys {
    Uniform,
    AllEqual,
    Sorted,
    Reversed,
    /// Every key has one bit set, a random one of the key bits.
    SingleBit,
    /// Two keys that differ in one bit.
    OneBitDiffers,
    /// 2 to 16 distinct keys: long runs of equal digits.
    FewDistinct,
    /// Random bits above `key_bits` too, which the sort must ignore.
    AboveKeyBits,
    /// Only 0 and the largest key: every digit at either end.
    ZeroOrMax,
    /// Sorted, then a few swaps.
    NearlySorted,
    /// i mod a small period: a digit pattern repeating across blocks.
    Sawtooth,
}

const STRESS_KINDS: [StressKeys; 11] = [
    StressKeys::Uniform,
    StressKeys::AllEqual,
    StressKeys::Sorted,
    StressKeys::Reversed,
    StressKeys::SingleBit,
    StressKeys::OneBitDiffers,
    StressKeys::FewDistinct,
    StressKeys::AboveKeyBits,
    StressKeys::ZeroOrMax,
    StressKeys::NearlySorted,
    StressKeys::Sawtooth,
];

/// The sorts a stress run drives: key type and where the values come from: u32 keys
/// with given values, as the renderer's depth and pair sorts run, with the input
/// indices as values (`SortValues::InputIndex`), and 64-bit keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StressSort {
    U64,
    U32,
    U32InputIndex,
}

const STRESS_SORTS: [StressSort; 3] = [StressSort::U64, StressSort::U32, StressSort::U32InputIndex];

impl StressSort {
    fn key(self) -> SortKey {
        match self {
            StressSort::U64 => SortKey::U64,
            StressSort::U32 | StressSort::U32InputIndex => SortKey::U32,
        }
    }

    fn key_width(self) -> u32 {
        8 * self.key().bytes() as u32
    }
}

struct StressCase {
    sort: StressSort,
    kind: StressKeys,
    n: u32,
    key_bits: u32,
    keys: Vec<u64>,
    values: Vec<u32>,
}

impl StressCase {
    fn new(sort: StressSort, kind: StressKeys, n: u32, key_bits: u32, rng: &mut Rng) -> Self {
        let width = sort.key_width();
        let key_bits = key_bits.clamp(1, width);
        let keys = stress_keys(kind, n as usize, key_bits, width, rng);
        // Distinct values (an odd multiplier is a bijection), so that the values say
        // whether equal keys kept their order.
        let salt = rng.next() as u32;
        let values = (0..n).map(|i| i.wrapping_mul(0x9E37_79B1) ^ salt).collect();
        Self {
            sort,
            kind,
            n,
            key_bits,
            keys,
            values,
        }
    }

    fn describe(&self) -> String {
        format!(
            "{:?} sort of {} pairs, {:?} keys, {} bits",
            self.sort, self.n, self.kind, self.key_bits
        )
    }

    /// The GPU's sorted keys and values against a CPU stable sort by the low
    /// `key_bits` bits: the first difference, if any.
    fn check(&self, got_keys: &[u64], got_values: &[u32]) -> Result<(), String> {
        let mask = low_bits(self.key_bits);
        let mut order: Vec<u32> = (0..self.n).collect();
        order.sort_by_key(|&i| self.keys[i as usize] & mask);
        let want_value = |i: u32| match self.sort {
            StressSort::U32InputIndex => i,
            StressSort::U64 | StressSort::U32 => self.values[i as usize],
        };
        let wrong = order.iter().enumerate().find(|&(slot, &i)| {
            got_keys[slot] != self.keys[i as usize] || got_values[slot] != want_value(i)
        });
        match wrong {
            None => Ok(()),
            Some((slot, &i)) => Err(format!(
                "{}: first mismatch at {slot}: got key {:#x} value {}, want key {:#x} value {}",
                self.describe(),
                got_keys[slot],
                got_values[slot],
                self.keys[i as usize],
                want_value(i)
            )),
        }
    }
}

fn low_bits(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// `n` keys of `width` bits whose low `key_bits` bits are sorted.
fn stress_keys(kind: StressKeys, n: usize, key_bits: u32, width: u32, rng: &mut Rng) -> Vec<u64> {
    let mask = low_bits(key_bits);
    let word = low_bits(width);
    let uniform = |rng: &mut Rng| rng.next() & mask;
    let mut keys: Vec<u64> = match kind {
        StressKeys::Uniform
        | StressKeys::Sorted
        | StressKeys::Reversed
        | StressKeys::NearlySorted => (0..n).map(|_| uniform(rng)).collect(),
        StressKeys::AllEqual => vec![rng.next() & mask; n],
        StressKeys::SingleBit => (0..n)
            .map(|_| 1u64 << rng.below(u64::from(key_bits)))
            .collect(),
        StressKeys::OneBitDiffers => {
            let base = rng.next() & mask;
            let bit = 1u64 << rng.below(u64::from(key_bits));
            (0..n)
                .map(|_| if rng.below(2) == 0 { base } else { base ^ bit })
                .collect()
        }
        StressKeys::FewDistinct => {
            let few: Vec<u64> = (0..2 + rng.below(15)).map(|_| rng.next() & mask).collect();
            (0..n)
                .map(|_| few[rng.below(few.len() as u64) as usize])
                .collect()
        }
        StressKeys::AboveKeyBits => (0..n).map(|_| rng.next() & word).collect(),
        StressKeys::ZeroOrMax => (0..n)
            .map(|_| if rng.below(2) == 0 { 0 } else { mask })
            .collect(),
        StressKeys::Sawtooth => {
            let period = 1 + rng.below(300);
            let step = uniform(rng) | 1;
            (0..n as u64)
                .map(|i| (i % period).wrapping_mul(step) & mask)
                .collect()
        }
    };
    match kind {
        StressKeys::Sorted => keys.sort_unstable(),
        StressKeys::Reversed => keys.sort_unstable_by(|a, b| b.cmp(a)),
        StressKeys::NearlySorted => {
            keys.sort_unstable();
            for _ in 0..n.div_ceil(100) {
                let (a, b) = (rng.below(n as u64), rng.below(n as u64));
                keys.swap(a as usize, b as usize);
            }
        }
        _ => {}
    }
    keys
}

/// Pair counts where blocks and workgroups begin and end: 0, around a workgroup's
/// threads, and around 1, 2, 4 (a histogram workgroup's blocks) and 5 sort blocks.
fn boundary_sizes() -> Vec<u32> {
    let mut sizes = vec![0, 1, 2];
    let wg = SORT_WORKGROUP_SIZE;
    sizes.extend([wg - 1, wg, wg + 1]);
    for blocks in [1, 2, 4, 5] {
        let at = blocks * SORT_BLOCK;
        sizes.extend([at - 1, at, at + 1]);
    }
    sizes
}

/// The `count` key sets of a stress run: every sort at the boundary sizes and three
/// large sets first, then random ones, mostly small (many sorts in little time) and
/// often within a few pairs of a block boundary.
fn stress_cases(count: usize, seed: u64) -> impl Iterator<Item = StressCase> {
    let mut rng = Rng(seed);
    let mut fixed: Vec<(StressSort, u32, u32)> = Vec::new();
    for (i, n) in boundary_sizes().into_iter().enumerate() {
        for (j, sort) in STRESS_SORTS.into_iter().enumerate() {
            let bits = [sort.key_width(), 8, 9, 17][(i + j) % 4];
            fixed.push((sort, n, bits));
        }
    }
    fixed.extend([
        (StressSort::U64, 262_145, 64),
        (StressSort::U32, STRESS_CAPACITY, 32),
        (StressSort::U32InputIndex, 600_001, 20),
    ]);
    (0..count).map(move |i| {
        let kind = STRESS_KINDS[i % STRESS_KINDS.len()];
        let (sort, n, key_bits) = match fixed.get(i) {
            Some(&case) => case,
            None => {
                let sort = STRESS_SORTS[rng.below(STRESS_SORTS.len() as u64) as usize];
                let n = match rng.below(10) {
                    0..=3 => rng.below(600) as u32,
                    4..=6 => {
                        let blocks = 1 + rng.below(3) as u32;
                        (blocks * SORT_BLOCK + rng.below(5) as u32).saturating_sub(2)
                    }
                    _ => rng.below(6_000) as u32,
                };
                let width = sort.key_width();
                // Half the widths where a pass begins or ends, half anywhere.
                let key_bits = if rng.below(2) == 0 {
                    [1, 7, 8, 9, 16, 17, 24, 25, 32, 33, 40, 48, 56, 57, 63, 64]
                        [rng.below(16) as usize]
                } else {
                    1 + rng.below(u64::from(width)) as u32
                };
                (sort, n, key_bits.min(width))
            }
        };
        StressCase::new(sort, kind, n, key_bits, &mut rng)
    })
}

/// One sort of each [`StressSort`], with buffers for the largest stress set, reused
/// by every set.
struct StressRig {
    sorts: Vec<(RadixSort, StressSort)>,
    buffers: Vec<(SortBuffers, wgpu::Buffer)>,
}

impl StressRig {
    fn new(gpu: &Gpu, algorithm: SortAlgorithm, ranking: SortRanking) -> Self {
        let mut sorts = Vec::new();
        let mut buffers = Vec::new();
        for which in STRESS_SORTS {
            let sort = RadixSort::with_ranking(&gpu.device, which.key(), algorithm, ranking);
            let counter = counters(gpu, 0);
            let values = match which {
                StressSort::U32InputIndex => SortValues::InputIndex,
                StressSort::U64 | StressSort::U32 => SortValues::Given,
            };
            let storage = SortStorage::allocate(&gpu.device, which.key(), STRESS_CAPACITY);
            let sort_buffers = SortBuffers::in_storage(
                &gpu.device,
                &sort,
                storage,
                STRESS_CAPACITY,
                &counter,
                (COUNT_WORD * 4) as u64,
                None,
                values,
            );
            assert_eq!(sort_buffers.algorithm(), algorithm);
            if values == SortValues::InputIndex {
                // Values the sort must not read.
                let garbage = vec![SENTINEL; STRESS_CAPACITY as usize];
                gpu.queue
                    .write_buffer(&sort_buffers.values[0], 0, bytemuck::cast_slice(&garbage));
            }
            sorts.push((sort, which));
            buffers.push((sort_buffers, counter));
        }
        Self { sorts, buffers }
    }

    /// Sorts every case of `cases` in one submission and checks each against the CPU:
    /// the errors of the sets that came out wrong.
    fn sort_batch(&self, gpu: &Gpu, cases: &[StressCase]) -> Vec<String> {
        // Everything the copies feed in, then every result read back.
        let mut upload: Vec<u8> = Vec::new();
        let mut read_at = Vec::new();
        let mut read_bytes = 0u64;
        for case in cases {
            upload.extend_from_slice(&keys_as_stored(case.sort.key(), &case.keys));
            upload.extend_from_slice(bytemuck::cast_slice(&case.values));
            upload.extend_from_slice(&case.n.to_le_bytes());
            read_at.push(read_bytes);
            read_bytes += u64::from(case.n) * (case.sort.key().bytes() + 4);
        }
        let upload = gpu.upload(&upload, wgpu::BufferUsages::COPY_SRC);
        let readback = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("sort stress readback"),
            size: read_bytes.max(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        let mut upload_at = 0u64;
        for (case, &read_at) in cases.iter().zip(&read_at) {
            let index = STRESS_SORTS
                .iter()
                .position(|&s| s == case.sort)
                .expect("every stress sort has a rig");
            let (sort, _) = &self.sorts[index];
            let (buffers, counter) = &self.buffers[index];
            let n = u64::from(case.n);
            let key_bytes = n * case.sort.key().bytes();
            if n > 0 {
                encoder.copy_buffer_to_buffer(&upload, upload_at, &buffers.keys[0], 0, key_bytes);
                if case.sort != StressSort::U32InputIndex {
                    encoder.copy_buffer_to_buffer(
                        &upload,
                        upload_at + key_bytes,
                        &buffers.values[0],
                        0,
                        n * 4,
                    );
                }
            }
            upload_at += key_bytes + n * 4;
            encoder.copy_buffer_to_buffer(&upload, upload_at, counter, (COUNT_WORD * 4) as u64, 4);
            upload_at += 4;
            let out = {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                sort.encode(&mut pass, buffers, case.key_bits)
            };
            if n > 0 {
                encoder.copy_buffer_to_buffer(&buffers.keys[out], 0, &readback, read_at, key_bytes);
                encoder.copy_buffer_to_buffer(
                    &buffers.values[out],
                    0,
                    &readback,
                    read_at + key_bytes,
                    n * 4,
                );
            }
        }
        gpu.queue.submit([encoder.finish()]);
        let mut errors = Vec::new();
        if read_bytes == 0 {
            gpu.wait();
            return errors;
        }
        readback.slice(..).map_async(wgpu::MapMode::Read, |result| {
            result.expect("mapping the stress readback failed");
        });
        gpu.wait();
        let bytes = readback.slice(..).get_mapped_range();
        for (case, &at) in cases.iter().zip(&read_at) {
            let n = case.n as usize;
            let at = at as usize;
            let key_bytes = n * case.sort.key().bytes() as usize;
            let keys = keys_widened(case.sort.key(), &bytes[at..at + key_bytes]);
            let values: Vec<u32> =
                bytemuck::pod_collect_to_vec(&bytes[at + key_bytes..at + key_bytes + n * 4]);
            if let Err(error) = case.check(&keys, &values) {
                errors.push(error);
            }
        }
        errors
    }

    /// The look-back fallbacks the one-sweep sorts took (0 for classic sorts).
    fn fallbacks(&self, gpu: &Gpu) -> u64 {
        self.buffers
            .iter()
            .filter_map(|(buffers, _)| buffers.look_back_fallbacks())
            .map(|(buffer, offset)| {
                let words: Vec<u32> = gpu.read(buffer, offset as usize / 4 + 1);
                u64::from(words[offset as usize / 4])
            })
            .sum()
    }
}

fn env_number(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    match text.trim().parse() {
        Ok(number) => Some(number),
        Err(_) => panic!("{name}={text:?} is not a number"),
    }
}

/// Thousands of key sets, random and adversarial (all equal, sorted, reversed, one
/// bit, few distinct values, bits above the sorted width, sizes at block and
/// workgroup boundaries, a few large ones), with values, sorted on one device through
/// buffers reused from set to set, against a CPU stable sort. Both algorithms on
/// every adapter, each with both rankings where the device has subgroups: the
/// one-sweep sort is exact wherever it runs (lavapipe, whose threads stall one
/// another's blocks, runs its look-back's fallback thousands of times), and the
/// subgroup ranking with lavapipe's 8 lanes as with a GPU's 32.
/// `BEVY_SPLAT_SORT_STRESS=N` sorts N sets per variant (default
/// [`STRESS_SETS`]), `BEVY_SPLAT_SORT_STRESS_SEED` picks other sets.
#[test]
fn sort_stress_matches_cpu_stable_sort() {
    let gpu = Gpu::new();
    let count = env_number("BEVY_SPLAT_SORT_STRESS").map_or(STRESS_SETS, |n| n as usize);
    let seed = env_number("BEVY_SPLAT_SORT_STRESS_SEED").unwrap_or(28);
    let variants = rankings(&gpu).into_iter().flat_map(|ranking| {
        [SortAlgorithm::Classic, SortAlgorithm::OneSweep].map(|algorithm| (algorithm, ranking))
    });
    for (algorithm, ranking) in variants {
        let start = Instant::now();
        let rig = StressRig::new(&gpu, algorithm, ranking);
        let mut sorted = 0usize;
        let mut pairs = 0u64;
        let mut errors = Vec::new();
        let mut batch: Vec<StressCase> = Vec::new();
        let mut batch_pairs = 0u64;
        let mut cases = stress_cases(count, seed).peekable();
        while let Some(case) = cases.next() {
            batch_pairs += u64::from(case.n);
            batch.push(case);
            let next_fits = cases.peek().is_some_and(|next| {
                batch.len() < STRESS_BATCH_SORTS
                    && batch_pairs + u64::from(next.n) <= STRESS_BATCH_PAIRS
            });
            if !next_fits {
                errors.extend(rig.sort_batch(&gpu, &batch));
                sorted += batch.len();
                pairs += batch_pairs;
                batch.clear();
                batch_pairs = 0;
            }
        }
        let fallbacks = rig.fallbacks(&gpu);
        eprintln!(
            "sort stress: {algorithm:?}, {ranking:?}, on {}: {sorted} key sets sorted \
             ({pairs} pairs, seed {seed}), {} mismatches, {fallbacks} look-back fallbacks, \
             {:.1?}",
            gpu.describe(),
            errors.len(),
            start.elapsed()
        );
        for error in errors.iter().take(10) {
            eprintln!("  {error}");
        }
        assert_eq!(sorted, count, "{algorithm:?}, {ranking:?}: key sets tried");
        assert!(
            errors.is_empty(),
            "{algorithm:?}, {ranking:?}: {} sets sorted wrong",
            errors.len()
        );
    }
}

/// The one-sweep look-back's fallback, which counts an earlier block's digits from its
/// keys when that block has not published them in time: with
/// `LookBack::CountEveryBlock` every block counts every block before it and reads
/// nothing the others publish, so the sort is deterministic on any adapter (lavapipe
/// included) and the fallback count is known exactly; with no spins, a block counts
/// at once whichever earlier block it finds unpublished.
#[test]
fn one_sweep_fallback_counts_exactly() {
    let gpu = Gpu::new();
    let mut rng = Rng(12);
    for look_back in [LookBack::CountEveryBlock, LookBack::Wait { spins: 0 }] {
        for sort_kind in [StressSort::U64, StressSort::U32] {
            let sort = RadixSort::with_look_back(&gpu.device, sort_kind.key(), look_back);
            let sizes = [1, SORT_BLOCK + 1, 3 * SORT_BLOCK, 6 * SORT_BLOCK + 5];
            for (i, n) in sizes.into_iter().enumerate() {
                let kind = STRESS_KINDS[(i + 3) % STRESS_KINDS.len()];
                let key_bits = [sort_kind.key_width(), 17, 8, 9][i % 4];
                let case = StressCase::new(sort_kind, kind, n, key_bits, &mut rng);
                let counter = counters(&gpu, n);
                let buffers = counted_buffers(&gpu, &sort, n, &counter);
                assert_eq!(buffers.algorithm(), SortAlgorithm::OneSweep);
                gpu.queue.write_buffer(
                    &buffers.keys[0],
                    0,
                    &keys_as_stored(sort_kind.key(), &case.keys),
                );
                gpu.queue
                    .write_buffer(&buffers.values[0], 0, bytemuck::cast_slice(&case.values));
                let mut out = usize::MAX;
                gpu.run(|pass| out = sort.encode(pass, &buffers, case.key_bits));
                let key = sort_kind.key();
                let keys = keys_widened(
                    key,
                    &gpu.read(&buffers.keys[out], (u64::from(n) * key.bytes()) as usize),
                );
                let values: Vec<u32> = gpu.read(&buffers.values[out], n as usize);
                let what = format!("{look_back:?}: {}", case.describe());
                if let Err(error) = case.check(&keys, &values) {
                    panic!("{what}: {error}");
                }
                let Some((status, offset)) = buffers.look_back_fallbacks() else {
                    panic!("{what}: a one-sweep sort counts its fallbacks");
                };
                let fallbacks: Vec<u32> = gpu.read(status, offset as usize / 4 + 1);
                let fallbacks = u64::from(fallbacks[offset as usize / 4]);
                if look_back == LookBack::CountEveryBlock {
                    // Block b counts blocks 0..b for each of the 256 digits, every pass.
                    let blocks = u64::from(n.div_ceil(SORT_BLOCK));
                    let passes = u64::from(case.key_bits.div_ceil(8));
                    let want = passes * 256 * blocks * blocks.saturating_sub(1) / 2;
                    assert_eq!(fallbacks, want, "{what}: fallbacks");
                }
                eprintln!("{what}: exact, {fallbacks} fallbacks");
            }
        }
    }
}

/// A probe of the driver, not of this crate: how many iterations loops of a length
/// known only at run time really run. lavapipe (Mesa's gallivm) stops every loop of
/// an invocation once all its loops together have run 65,535 iterations, silently;
/// this is what broke the one-sweep sort's unbounded look-back there (see
/// `radix_sort/look_back.wgsl`). `cargo test --test gpu_sort -- --ignored
/// --nocapture driver_loop_budget` prints what the adapter does.
#[test]
#[ignore = "a probe of the driver; prints, asserts nothing"]
fn driver_loop_budget_probe() {
    let gpu = Gpu::new();
    let source = "
        @group(0) @binding(0) var<storage, read_write> io: array<u32>;
        @compute @workgroup_size(8)
        fn main(@builtin(local_invocation_index) t: u32) {
            var x = t;
            var first = 0u;
            for (var i = 0u; i < io[0]; i++) { x = x * 1664525u + 1013904223u; first += 1u; }
            var second = 0u;
            for (var i = 0u; i < io[1]; i++) { x = x * 1664525u + 1013904223u; second += 1u; }
            if t == 0u { io[2] = first; io[3] = second; io[4] = x; }
        }";
    // SAFETY: both loops end (their bounds are the buffer's first words), and every
    // index is below the buffer's five words.
    let module = unsafe {
        gpu.device.create_shader_module_trusted(
            wgpu::ShaderModuleDescriptor {
                label: Some("loop budget probe"),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            },
            wgpu::ShaderRuntimeChecks::unchecked(),
        )
    };
    let pipeline = gpu
        .device
        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("loop budget probe"),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
    for (first, second) in [(65_535, 0), (65_536, 0), (1_000_000, 0), (60_000, 10_000)] {
        let io = gpu.upload(&[first, second, 0u32, 0, 0], wgpu::BufferUsages::STORAGE);
        let group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("loop budget probe"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: io.as_entire_binding(),
            }],
        });
        gpu.run(|pass| {
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups(1, 1, 1);
        });
        let ran: Vec<u32> = gpu.read(&io, 4);
        eprintln!(
            "{}: loops of {first} and then {second} iterations ran {} and {}",
            gpu.describe(),
            ran[2],
            ran[3]
        );
    }
}
