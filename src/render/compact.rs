//! The compact GPU layout ([`SplatStorage::Compact`](crate::SplatStorage)): each splat
//! quantised into 28 bytes of geometry plus one byte per higher-order SH coefficient,
//! decoded by the preprocess (`passes/preprocess_compact.wgsl`).
//!
//! The geometry buffer starts with one box per [`POSITION_BLOCK`] splats (six words:
//! the least corner, then the step per level, f32 each), then seven words per splat
//! (`splat_word` in WGSL):
//! - 0, 1: the position as three 21-bit levels within its block's box (x in bits
//!   0–20, y in 21–41, z in 42–62 of the 64 bits, low word first). A step is 1/2²¹ of
//!   the box, so a run of 256 neighbouring splats (SOG, compressed PLY and SPZ files
//!   come in spatial order) keeps sub-micrometre positions, and even a block that
//!   spans a whole scene keeps 1/2²¹ of it;
//! - 2: rotation as the "smallest three": the index of the largest |component| of the
//!   unit quaternion (2 bits, that component made positive) and the other three in 10
//!   bits each over [−1/√2, 1/√2];
//! - 3, 4: the log-scales and the opacity logit as f16;
//! - 5, 6: the DC colour coefficients as f16, and the scale of the splat's own higher
//!   SH coefficients (f16, their largest magnitude).
//!
//! SH beyond DC: one signed byte per coefficient relative to the splat's scale, the
//! splats' bytes end to end (45 at degree 3, read across word boundaries). A per-splat
//! scale keeps the step fine for the many splats whose view-dependent colour is faint,
//! and an outlier splat coarsens only itself.
//!
//! A splat the GPU would cull as invalid (non-finite position, rotation of zero or
//! non-finite length, a log-scale that is NaN or +∞, any non-finite SH coefficient) is
//! encoded with a NaN log-scale, which the preprocess culls the same way; it takes no
//! part in its block's box.

use half::f16;

use crate::asset::SplatGeometry;

/// 32-bit words of compact geometry per splat.
pub const COMPACT_GEOMETRY_WORDS: usize = 7;

/// Splats that share one position box.
pub const POSITION_BLOCK: usize = 256;

/// Words of one position box: the least corner and the step per level.
pub const POSITION_BOX_WORDS: usize = 6;

/// Levels of one position coordinate.
const POSITION_LEVELS: u32 = (1 << 21) - 1;

/// Most a 10-bit field holds.
const TEN_BITS: f32 = 1023.0;

/// Words of compact geometry for `count` splats: their boxes, then the splats.
pub fn compact_geometry_words(count: usize) -> usize {
    count.div_ceil(POSITION_BLOCK) * POSITION_BOX_WORDS + count * COMPACT_GEOMETRY_WORDS
}

/// Bytes of compact SH per splat for `sh_stride` floats (the three DC floats live in
/// the geometry).
pub fn compact_sh_bytes(sh_stride: usize) -> usize {
    sh_stride.saturating_sub(3)
}

/// Words of compact SH for `count` splats of `sh_stride` floats each.
pub fn compact_sh_words(count: usize, sh_stride: usize) -> usize {
    (count * compact_sh_bytes(sh_stride)).div_ceil(4)
}

/// The compact geometry and SH words of `geometry` with `sh_stride` SH floats each.
pub fn encode_compact(
    geometry: &[SplatGeometry],
    sh: &[f32],
    sh_stride: usize,
) -> (Vec<u32>, Vec<u32>) {
    let rest_bytes = compact_sh_bytes(sh_stride);
    let mut packed_geometry = Vec::with_capacity(compact_geometry_words(geometry.len()));
    let mut rest = Vec::with_capacity(geometry.len() * rest_bytes + 3);
    let encoded: Vec<EncodedSplat> = geometry
        .iter()
        .enumerate()
        .map(|(index, splat)| encode_splat(splat, &sh[index * sh_stride..(index + 1) * sh_stride]))
        .collect();
    let boxes: Vec<PositionBox> = encoded
        .chunks(POSITION_BLOCK)
        .map(PositionBox::around)
        .collect();
    for position_box in &boxes {
        packed_geometry.extend(
            position_box
                .min
                .iter()
                .chain(&position_box.step)
                .map(|v| v.to_bits()),
        );
    }
    for (block, splats) in boxes.iter().zip(encoded.chunks(POSITION_BLOCK)) {
        for splat in splats {
            let [low, high] = block.levels(splat.position);
            packed_geometry.extend_from_slice(&[low, high]);
            packed_geometry.extend_from_slice(&splat.words);
        }
    }
    for (index, splat) in encoded.iter().enumerate() {
        let coefficients = &sh[index * sh_stride..(index + 1) * sh_stride];
        rest.extend(rest_bytes_of(coefficients, splat.rest_scale));
    }
    rest.resize(rest.len().div_ceil(4) * 4, 0);
    let packed_sh = rest
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    (packed_geometry, packed_sh)
}

struct EncodedSplat {
    /// `None` for a splat the GPU culls.
    position: Option<[f32; 3]>,
    /// Words 2 to 6.
    words: [u32; COMPACT_GEOMETRY_WORDS - 2],
    rest_scale: f32,
}

/// One block's box: positions are `min + level · step` per axis.
struct PositionBox {
    min: [f32; 3],
    step: [f32; 3],
}

impl PositionBox {
    fn around(splats: &[EncodedSplat]) -> Self {
        let mut min = [f32::INFINITY; 3];
        let mut max = [f32::NEG_INFINITY; 3];
        for position in splats.iter().filter_map(|s| s.position) {
            for axis in 0..3 {
                min[axis] = min[axis].min(position[axis]);
                max[axis] = max[axis].max(position[axis]);
            }
        }
        if min[0] > max[0] {
            // No drawable splat: any box does.
            return Self {
                min: [0.0; 3],
                step: [0.0; 3],
            };
        }
        // The span in f64: max − min of finite f32s may overflow f32.
        let step = [0, 1, 2].map(|axis| {
            ((f64::from(max[axis]) - f64::from(min[axis])) / f64::from(POSITION_LEVELS)) as f32
        });
        Self { min, step }
    }

    /// The position's 21-bit levels, packed into two words.
    fn levels(&self, position: Option<[f32; 3]>) -> [u32; 2] {
        let Some(position) = position else {
            return [0, 0];
        };
        let [x, y, z] = [0, 1, 2].map(|axis| {
            if self.step[axis] > 0.0 {
                ((f64::from(position[axis]) - f64::from(self.min[axis]))
                    / f64::from(self.step[axis]))
                .round()
                .clamp(0.0, f64::from(POSITION_LEVELS)) as u64
            } else {
                0
            }
        });
        let bits = x | (y << 21) | (z << 42);
        [bits as u32, (bits >> 32) as u32]
    }
}

fn half_bits(value: f32) -> u32 {
    u32::from(f16::from_f32(value).to_bits())
}

fn halves(low: f32, high: f32) -> u32 {
    half_bits(low) | (half_bits(high) << 16)
}

/// A log-scale the GPU draws: finite, or −∞ (a scale of zero).
fn drawable_log_scale(value: f32) -> bool {
    value.is_finite() || value == f32::NEG_INFINITY
}

fn encode_splat(splat: &SplatGeometry, coefficients: &[f32]) -> EncodedSplat {
    let rotation = smallest_three(splat.rotation);
    let valid = splat.position.iter().all(|v| v.is_finite())
        && splat.log_scale.iter().all(|&v| drawable_log_scale(v))
        && coefficients.iter().all(|v| v.is_finite())
        && rotation.is_some();
    let rest = coefficients.get(3..).unwrap_or(&[]);
    let largest = rest.iter().fold(0.0_f32, |m, v| m.max(v.abs()));
    // The scale the GPU reads back, so that quantising uses exactly it; never so small
    // that f16 flushes it to zero while coefficients remain.
    let rest_scale = f16::from_f32(largest.min(f16::MAX.to_f32()))
        .to_f32()
        .max(if largest > 0.0 {
            f16::MIN_POSITIVE_SUBNORMAL.to_f32()
        } else {
            0.0
        });
    let dc = |channel: usize| coefficients.get(channel).copied().unwrap_or(0.0);
    let [sx, sy, sz] = splat.log_scale;
    let sx = if valid { sx } else { f32::NAN };
    EncodedSplat {
        position: valid.then_some(splat.position),
        words: [
            rotation.unwrap_or(0),
            halves(sx, sy),
            halves(sz, splat.opacity_logit),
            halves(dc(0), dc(1)),
            halves(dc(2), rest_scale),
        ],
        rest_scale,
    }
}

/// The unit quaternion (w, x, y, z) of `rotation` as 2 + 3 × 10 bits, or `None` where
/// it has no direction (zero or non-finite length).
fn smallest_three(rotation: [f32; 4]) -> Option<u32> {
    let q = rotation.map(f64::from);
    let norm = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    if !(norm > 0.0 && norm.is_finite()) {
        return None;
    }
    let mut largest = 0;
    for i in 1..4 {
        if q[i].abs() > q[largest].abs() {
            largest = i;
        }
    }
    // q and −q are the same rotation: make the dropped component positive.
    let sign = if q[largest] < 0.0 { -1.0 } else { 1.0 };
    let mut word = largest as u32;
    let mut shift = 2;
    for (i, component) in q.iter().enumerate() {
        if i == largest {
            continue;
        }
        let unit = (sign * component / norm) * std::f64::consts::SQRT_2;
        let level = (((unit + 1.0) * 0.5) as f32 * TEN_BITS)
            .round()
            .clamp(0.0, TEN_BITS);
        word |= (level as u32) << shift;
        shift += 10;
    }
    Some(word)
}

/// The SH coefficients past DC as signed bytes of `scale`.
fn rest_bytes_of(coefficients: &[f32], scale: f32) -> impl Iterator<Item = u8> + '_ {
    coefficients
        .get(3..)
        .unwrap_or(&[])
        .iter()
        .map(move |&value| {
            let level = if scale > 0.0 && value.is_finite() {
                (value / scale * 127.0).round().clamp(-127.0, 127.0) as i8
            } else {
                0
            };
            level as u8
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    // The decoders below follow `preprocess_compact.wgsl`.
    fn decode_rotation(word: u32) -> [f32; 4] {
        let largest = (word & 3) as usize;
        let mut q = [0.0_f32; 4];
        let mut shift = 2;
        let mut sum = 0.0;
        for (i, slot) in q.iter_mut().enumerate() {
            if i == largest {
                continue;
            }
            let level = ((word >> shift) & 1023) as f32;
            *slot = (level / TEN_BITS * 2.0 - 1.0) * std::f32::consts::FRAC_1_SQRT_2;
            sum += *slot * *slot;
            shift += 10;
        }
        q[largest] = (1.0 - sum).max(0.0).sqrt();
        q
    }

    fn decode_half(word: u32, high: bool) -> f32 {
        f16::from_bits((if high { word >> 16 } else { word }) as u16).to_f32()
    }

    fn decode_rest(words: &[u32], first_byte: usize, scale: f32, count: usize) -> Vec<f32> {
        (first_byte..first_byte + count)
            .map(|b| {
                let byte = (words[b / 4] >> (8 * (b % 4))) as u8 as i8;
                (f32::from(byte) / 127.0).max(-1.0) * scale
            })
            .collect()
    }

    /// Splat `index`'s position from its block's box and its two level words.
    fn decode_position(geometry: &[u32], count: usize, index: usize) -> [f32; 3] {
        let block = &geometry[index / POSITION_BLOCK * POSITION_BOX_WORDS..];
        let at =
            count.div_ceil(POSITION_BLOCK) * POSITION_BOX_WORDS + index * COMPACT_GEOMETRY_WORDS;
        let bits = u64::from(geometry[at]) | (u64::from(geometry[at + 1]) << 32);
        [0, 1, 2].map(|axis| {
            let level = ((bits >> (21 * axis)) & u64::from(POSITION_LEVELS)) as f32;
            f32::from_bits(block[axis]) + level * f32::from_bits(block[3 + axis])
        })
    }

    /// Splat `index`'s words 2 to 6.
    fn words(geometry: &[u32], count: usize, index: usize) -> &[u32] {
        let at =
            count.div_ceil(POSITION_BLOCK) * POSITION_BOX_WORDS + index * COMPACT_GEOMETRY_WORDS;
        &geometry[at + 2..at + COMPACT_GEOMETRY_WORDS]
    }

    fn splat(rotation: [f32; 4]) -> SplatGeometry {
        SplatGeometry {
            position: [1.5, -2.25, 3.0],
            opacity_logit: 0.75,
            rotation,
            log_scale: [-4.0, -3.5, f32::NEG_INFINITY],
            _pad: 0.0,
        }
    }

    #[test]
    fn rotations_come_back_within_a_thousandth() {
        let rotations = [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, -2.0],
            [0.3, -0.5, 0.7, 0.1],
            [-0.9, 0.2, 0.1, -0.3],
            [0.5, 0.5, 0.5, 0.5],
        ];
        for rotation in rotations {
            let word = smallest_three(rotation).expect("a rotation with a direction");
            let back = decode_rotation(word);
            let norm = rotation.iter().map(|v| v * v).sum::<f32>().sqrt();
            let unit = rotation.map(|v| v / norm);
            // q and −q agree: compare |⟨q, q'⟩| with 1.
            let dot: f32 = unit.iter().zip(back).map(|(a, b)| a * b).sum();
            assert!((dot.abs() - 1.0).abs() < 1e-5, "{rotation:?} → {back:?}");
            for (a, b) in unit.iter().zip(back) {
                assert!(
                    (a.abs() - b.abs()).abs() < 1.5e-3,
                    "{rotation:?} → {back:?}"
                );
            }
        }
    }

    #[test]
    fn compact_words_decode_to_the_splat() {
        let coefficients: Vec<f32> = (0..96).map(|i| (i as f32 - 20.0) * 0.01).collect();
        let mut second = splat([1.0, 0.0, 0.0, 0.0]);
        second.position = [-0.5, 4.0, 2.0];
        let geometry = [splat([0.3, -0.5, 0.7, 0.1]), second];
        let (packed, sh) = encode_compact(&geometry, &coefficients, 48);
        assert_eq!(
            packed.len(),
            POSITION_BOX_WORDS + 2 * COMPACT_GEOMETRY_WORDS
        );
        assert_eq!(packed.len(), compact_geometry_words(2));
        // 45 bytes a splat, end to end.
        assert_eq!(sh.len(), 23);
        assert_eq!(sh.len(), compact_sh_words(2, 48));
        for (index, splat) in geometry.iter().enumerate() {
            let position = decode_position(&packed, 2, index);
            for axis in 0..3 {
                // Half a step of the box (at most 6.25 units across here).
                let step = 6.25 / POSITION_LEVELS as f32;
                assert!(
                    (position[axis] - splat.position[axis]).abs() <= step,
                    "{position:?} against {:?}",
                    splat.position
                );
            }
        }
        let w = words(&packed, 2, 0);
        assert_eq!(decode_half(w[1], false), -4.0);
        assert_eq!(decode_half(w[2], false), f32::NEG_INFINITY);
        assert_eq!(decode_half(w[2], true), 0.75);
        assert!((decode_half(w[3], false) - coefficients[0]).abs() < 1e-4);
        for index in 0..2 {
            let own = &coefficients[48 * index..48 * (index + 1)];
            let scale = decode_half(words(&packed, 2, index)[4], true);
            let largest = own[3..].iter().fold(0.0_f32, |m, v| m.max(v.abs()));
            assert!((scale - largest).abs() < 1e-3, "{scale} against {largest}");
            for (a, b) in decode_rest(&sh, 45 * index, scale, 45)
                .iter()
                .zip(&own[3..])
            {
                assert!((a - b).abs() <= scale / 254.0 + 1e-6, "{a} against {b}");
            }
        }
    }

    #[test]
    fn every_block_keeps_its_own_box() {
        // Two blocks far apart: each keeps its splats' positions to its own step.
        let geometry: Vec<SplatGeometry> = (0..POSITION_BLOCK + 3)
            .map(|i| {
                let mut s = splat([1.0, 0.0, 0.0, 0.0]);
                let far = if i < POSITION_BLOCK { 0.0 } else { 1.0e4 };
                s.position = [far + 0.001 * i as f32, -0.002 * i as f32, 0.5];
                s
            })
            .collect();
        let count = geometry.len();
        let (packed, _) = encode_compact(&geometry, &vec![0.0; 3 * count], 3);
        for (index, splat) in geometry.iter().enumerate() {
            let position = decode_position(&packed, count, index);
            for axis in 0..3 {
                let error = (position[axis] - splat.position[axis]).abs();
                // f32 near 10⁴ itself keeps only a thousandth of a unit.
                let bound = if index < POSITION_BLOCK { 1e-6 } else { 1.5e-3 };
                assert!(
                    error <= bound,
                    "splat {index}: {position:?} against {:?}",
                    splat.position
                );
            }
        }
    }

    #[test]
    fn invalid_splats_get_a_scale_the_gpu_culls() {
        let zero_rotation = splat([0.0; 4]);
        let mut nan_scale = splat([1.0, 0.0, 0.0, 0.0]);
        nan_scale.log_scale[1] = f32::NAN;
        let mut far = splat([1.0, 0.0, 0.0, 0.0]);
        far.position[0] = f32::INFINITY;
        for bad in [zero_rotation, nan_scale, far] {
            let (geometry, _) = encode_compact(&[bad], &[0.1, 0.2, 0.3], 3);
            assert!(decode_half(words(&geometry, 1, 0)[1], false).is_nan());
        }
        let (geometry, _) =
            encode_compact(&[splat([1.0, 0.0, 0.0, 0.0])], &[0.1, f32::NAN, 0.3], 3);
        assert!(decode_half(words(&geometry, 1, 0)[1], false).is_nan());
        // An invalid splat leaves its block's box to the others.
        let mut wide = far;
        wide.position = [f32::MAX, 0.0, 0.0];
        wide.rotation = [0.0; 4];
        let (geometry, _) = encode_compact(&[splat([1.0, 0.0, 0.0, 0.0]), wide], &[0.0; 6], 3);
        assert_eq!(decode_position(&geometry, 2, 0), [1.5, -2.25, 3.0]);
    }

    #[test]
    fn degree_zero_has_no_sh_words_and_a_zero_scale() {
        let (geometry, sh) = encode_compact(&[splat([1.0, 0.0, 0.0, 0.0])], &[0.1, 0.2, 0.3], 3);
        assert!(sh.is_empty());
        assert_eq!(decode_half(words(&geometry, 1, 0)[4], true), 0.0);
        assert_eq!(compact_sh_words(1, 12), 3);
        assert_eq!(compact_sh_words(4, 27), 24);
        assert_eq!(compact_sh_words(3, 48), 34);
    }

    /// The splats (geometry, SH) as the decoders above read `packed` and `sh` back:
    /// what the GPU should see of each, in f32.
    fn decode_cloud(
        packed: &[u32],
        sh: &[u32],
        count: usize,
        sh_stride: usize,
    ) -> (Vec<SplatGeometry>, Vec<f32>) {
        let rest = compact_sh_bytes(sh_stride);
        let mut geometry = Vec::with_capacity(count);
        let mut coefficients = Vec::with_capacity(count * sh_stride);
        for index in 0..count {
            let w = words(packed, count, index);
            geometry.push(SplatGeometry {
                position: decode_position(packed, count, index),
                opacity_logit: decode_half(w[2], true),
                rotation: decode_rotation(w[0]),
                log_scale: [
                    decode_half(w[1], false),
                    decode_half(w[1], true),
                    decode_half(w[2], false),
                ],
                _pad: 0.0,
            });
            coefficients.extend([
                decode_half(w[3], false),
                decode_half(w[3], true),
                decode_half(w[4], false),
            ]);
            let scale = decode_half(w[4], true);
            coefficients.extend(decode_rest(sh, index * rest, scale, rest));
        }
        (geometry, coefficients)
    }

    /// The preprocess reads the words exactly as written here, at every SH degree: a
    /// compact cloud draws what the full (f32) layout draws of the same splats as the
    /// decoders above, which follow `preprocess_compact.wgsl`, read them back. (The
    /// full layout is checked against the CPU rasterizer in `tests/cpu_reference.rs`.)
    /// Renders on the GPU (lavapipe in CI).
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn the_gpu_reads_compact_words_as_written() {
        use bevy::camera::PerspectiveProjection;
        use bevy::camera::visibility::RenderLayers;
        use bevy::math::UVec2;
        use bevy::prelude::{DefaultPlugins, PluginGroup};
        use bevy::transform::components::Transform;
        use bevy::winit::WinitPlugin;

        use crate::headless::{Headless, quiet_log};
        use crate::{GaussianSplats, SplatStorage};

        const SIZE: UVec2 = UVec2::new(72, 40);
        const FOV_Y: f32 = 1.0;
        // splitmix64, as floats in [0, 1).
        let mut state = 0x0c0f_fee5_u64;
        let mut next = move || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32
        };
        let (width, height) = (SIZE.x as f32, SIZE.y as f32);
        let focal = height / 2.0 / (FOV_Y / 2.0).tan();

        let mut headless = Headless::new(DefaultPlugins.set(quiet_log()).disable::<WinitPlugin>());
        let mut cameras = Vec::new();
        for degree in 0..=3u8 {
            let stride = 3 * (usize::from(degree) + 1).pow(2);
            // 40 splats over the image at depths 2 to 3, turned and stretched.
            let geometry: Vec<SplatGeometry> = (0..40)
                .map(|_| {
                    let (x, y, z) = (next() * width, next() * height, 2.0 + next());
                    let opacity = 0.3 + 0.6 * next();
                    SplatGeometry {
                        position: [
                            (x - width / 2.0) / focal * z,
                            -(y - height / 2.0) / focal * z,
                            -z,
                        ],
                        opacity_logit: (opacity / (1.0 - opacity)).ln(),
                        rotation: [next() - 0.5, next() - 0.5, next() - 0.5, next() - 0.5],
                        log_scale: [
                            (0.03 + 0.1 * next()).ln(),
                            (0.03 + 0.1 * next()).ln(),
                            0.05_f32.ln(),
                        ],
                        _pad: 0.0,
                    }
                })
                .collect();
            let sh: Vec<f32> = (0..geometry.len() * stride)
                .map(|_| next() * 2.0 - 1.0)
                .collect();
            let (packed, sh_words) = encode_compact(&geometry, &sh, stride);
            let (decoded_geometry, decoded_sh) =
                decode_cloud(&packed, &sh_words, geometry.len(), stride);
            let clouds = [
                GaussianSplats::new(geometry, sh, degree)
                    .unwrap()
                    .with_storage(SplatStorage::Compact),
                GaussianSplats::new(decoded_geometry, decoded_sh, degree)
                    .unwrap()
                    .with_storage(SplatStorage::Full),
            ];
            // Each cloud alone in a camera of its own, through a render layer.
            for (i, cloud) in clouds.into_iter().enumerate() {
                let layer = RenderLayers::layer(1 + 2 * usize::from(degree) + i);
                let handle = headless.add_splats(cloud);
                let entity = headless.spawn_cloud(handle, Transform::IDENTITY);
                headless
                    .app
                    .world_mut()
                    .entity_mut(entity)
                    .insert(layer.clone());
                let projection = PerspectiveProjection {
                    fov: FOV_Y,
                    aspect_ratio: SIZE.x as f32 / SIZE.y as f32,
                    near: 0.01,
                    ..Default::default()
                };
                let camera = headless.spawn_camera(Transform::IDENTITY, projection, SIZE, None);
                headless
                    .app
                    .world_mut()
                    .entity_mut(camera.entity)
                    .insert(layer);
                cameras.push(camera);
            }
        }
        let images = headless.render(&cameras).expect("the clouds render");
        for (degree, pair) in images.chunks_exact(2).enumerate() {
            let (compact, full) = (&pair[0], &pair[1]);
            let mut worst = 0;
            let mut lit = 0;
            for y in 0..SIZE.y {
                for x in 0..SIZE.x {
                    let (a, b) = (compact.pixel(x, y), full.pixel(x, y));
                    worst = worst.max((0..4).map(|c| a[c].abs_diff(b[c])).max().unwrap_or(0));
                    lit += usize::from(b[..3].iter().any(|&c| c > 2));
                }
            }
            println!("degree {degree}: max difference {worst}/255, {lit} pixels lit");
            assert!(lit > 500, "degree {degree}: only {lit} pixels drawn");
            // Identical on lavapipe; 1/255 leaves a GPU its own rounding of the
            // decode (a fused multiply-add, a square root).
            assert!(worst <= 1, "degree {degree}: max difference {worst}/255");
        }
    }
}
