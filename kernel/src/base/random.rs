//! # random — the kernel's one source of random bytes
//!
//! What needs randomness: `AT_RANDOM`, the 16 bytes every new program finds on its stack
//! (musl takes its stack-protector canary and pointer guard from them), and `getrandom(2)`.
//! Both take them from here, so there is one place to judge. The CPU's `RDRAND` answers
//! when it has one (QEMU's `-cpu max` does, even under TCG); otherwise a SplitMix64
//! sequence whose every step is mixed with the TSC: unpredictable enough to make two runs'
//! canaries differ, **not** cryptographic (Linux's `get_random_bytes` is a ChaCha20 pool fed
//! by interrupt timings; Tally has no such pool).

use core::sync::atomic::{AtomicU64, Ordering};

static STATE: AtomicU64 = AtomicU64::new(0x853c_49e6_748f_ea9b);

/// SplitMix64's finaliser (Steele, Lea, Flood 2014): a bijection that spreads every input bit.
const fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// 64 random bits.
pub fn next_u64() -> u64 {
    if let Some(v) = hal::cpu::rdrand64() {
        return v;
    }
    let s = STATE.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed);
    mix(s ^ hal::tsc::read().rotate_left(29))
}

/// Fill `buf` with random bytes.
pub fn fill(buf: &mut [u8]) {
    for chunk in buf.chunks_mut(8) {
        let v = next_u64().to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
}
