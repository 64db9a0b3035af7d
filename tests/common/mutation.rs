//! What the decoders' mutation tests share: a seeded generator and the name of the
//! error a damaged file gave, to count which checks the damage reached.

use std::fmt::Debug;

/// Deterministic pseudo-random numbers (xorshift64*).
pub struct XorShift(pub u64);

impl XorShift {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// "ok", or the error's variant name.
pub fn outcome<E: Debug>(result: &Result<impl Sized, E>) -> String {
    match result {
        Ok(_) => "ok".into(),
        Err(e) => format!("{e:?}")
            .split([' ', '(', '{'])
            .next()
            .unwrap_or("?")
            .to_owned(),
    }
}
