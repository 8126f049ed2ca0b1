//! # A small reproducible random number generator
//!
//! SplitMix64 (Steele, Lea and Flood, 2014): a 64-bit counter passed through a mixing
//! function. Not cryptographic, but fast, with good statistical quality and, what matters
//! here, the same sequence for the same seed on every run: a `syscall_fuzz` failure is
//! replayed by running it again with the seed it printed.
#![forbid(unsafe_code)]

/// The generator's state.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub const fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`; 0 when `n == 0`). Slightly biased for huge `n`, which
    /// does not matter for choosing test inputs.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// True with probability `1/n`.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
}
