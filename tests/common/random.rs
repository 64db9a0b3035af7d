//! A tiny deterministic pseudo-random stream (xorshift32) for building test scenes.

pub struct Rng(pub u32);

impl Rng {
    /// The next value, uniform in [0, 1].
    pub fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0 as f32 / u32::MAX as f32
    }
}
