//! The kernel's random numbers: one ChaCha20 generator for `getrandom(2)` and the loader's
//! `AT_RANDOM` (the 16 bytes musl and glibc take their stack-protector canary and pointer
//! guard from), [`fill`] the one entry point.
//!
//! **Seed.** The CPU's own generator when it has one: `rdseed` (an entropy source) or else
//! `rdrand` (QEMU's `-cpu max` under TCG has `rdrand` only; it takes its bytes from the
//! host's `getrandom`), asked through the HAL after CPUID says the instruction exists. Mixed
//! in always, and all there is on a CPU without either: the time stamp counter read around
//! [`JITTER_SAMPLES`] short pieces of work (their durations vary with caches, the host's
//! scheduling under an emulator, interrupts) and the RTC's calendar time. That fallback is
//! what Linux's jitter entropy does on such machines: unpredictable enough for a canary and
//! for programs' seeds, not a substitute for a hardware source against a determined local
//! attacker (`docs/linux-abi.md`).
//!
//! **Generator.** ChaCha20 (RFC 8439's block function) keyed with 256 bits, as Linux's
//! `get_random_bytes` since 5.17: output is the key stream of (key, block counter); after
//! each request the key is replaced by fresh key stream ("fast key erasure"), so the bytes
//! handed out earlier cannot be recomputed from a later state, and a word of `rdrand` is
//! folded into the new key when the CPU has it. `getrandom` never blocks: the generator is
//! seeded at boot, before any program runs (Linux's "crng ready").

use spin::Mutex;

/// TSC samples taken for the seed when there is no hardware source (and always mixed in).
const JITTER_SAMPLES: usize = 256;

struct Rng {
    key: [u32; 8],
    counter: u64,
    rdrand: bool,
}

static RNG: Mutex<Option<Rng>> = Mutex::new(None);

/// ChaCha20's quarter round (RFC 8439 §2.1).
fn quarter(s: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
    s[a] = s[a].wrapping_add(s[b]);
    s[d] = (s[d] ^ s[a]).rotate_left(16);
    s[c] = s[c].wrapping_add(s[d]);
    s[b] = (s[b] ^ s[c]).rotate_left(12);
    s[a] = s[a].wrapping_add(s[b]);
    s[d] = (s[d] ^ s[a]).rotate_left(8);
    s[c] = s[c].wrapping_add(s[d]);
    s[b] = (s[b] ^ s[c]).rotate_left(7);
}

/// One 64-byte ChaCha20 block (RFC 8439 §2.3): key, 32-bit block counter, 96-bit nonce.
pub fn chacha20_block(key: &[u32; 8], counter: u32, nonce: &[u32; 3]) -> [u8; 64] {
    let mut init = [0u32; 16];
    init[..4].copy_from_slice(&[0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574]);
    init[4..12].copy_from_slice(key);
    init[12] = counter;
    init[13..].copy_from_slice(nonce);
    let mut s = init;
    for _ in 0..10 {
        quarter(&mut s, 0, 4, 8, 12);
        quarter(&mut s, 1, 5, 9, 13);
        quarter(&mut s, 2, 6, 10, 14);
        quarter(&mut s, 3, 7, 11, 15);
        quarter(&mut s, 0, 5, 10, 15);
        quarter(&mut s, 1, 6, 11, 12);
        quarter(&mut s, 2, 7, 8, 13);
        quarter(&mut s, 3, 4, 9, 14);
    }
    let mut out = [0u8; 64];
    for (i, w) in s.iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&w.wrapping_add(init[i]).to_le_bytes());
    }
    out
}

impl Rng {
    /// The next block of key stream (the 64-bit counter split into the block counter and
    /// the first nonce word, so it never repeats under one key).
    fn block(&mut self) -> [u8; 64] {
        let b = chacha20_block(&self.key, self.counter as u32, &[(self.counter >> 32) as u32, 0, 0]);
        self.counter = self.counter.wrapping_add(1);
        b
    }

    /// Fast key erasure: the key becomes fresh key stream (with a word of `rdrand` folded
    /// in when the CPU has one), and the counter starts again.
    fn rekey(&mut self, extra: u64) {
        let b = self.block();
        for (i, k) in self.key.iter_mut().enumerate() {
            *k = u32::from_le_bytes([b[i * 4], b[i * 4 + 1], b[i * 4 + 2], b[i * 4 + 3]]);
        }
        self.key[0] ^= extra as u32;
        self.key[1] ^= (extra >> 32) as u32;
        if self.rdrand {
            if let Some(r) = hal::cpu::random_u64(false) {
                self.key[2] ^= r as u32;
                self.key[3] ^= (r >> 32) as u32;
            }
        }
        self.counter = 0;
    }
}

/// A word from the CPU's generator: `rdseed` first, `rdrand` else (up to 10 tries each, as
/// Intel advises), `None` if the CPU has neither or both stayed empty.
fn hardware_word(rdrand: bool, rdseed: bool) -> Option<u64> {
    for _ in 0..10 {
        if let Some(v) = rdseed.then(|| hal::cpu::random_u64(true)).flatten() {
            return Some(v);
        }
        if let Some(v) = rdrand.then(|| hal::cpu::random_u64(false)).flatten() {
            return Some(v);
        }
    }
    None
}

/// A new generator, seeded as the module comment says; logs which sources it had.
fn seeded() -> Rng {
    let (rdrand, rdseed) = hal::cpu::random_instructions();
    let mut rng = Rng { key: [0; 8], counter: 0, rdrand };
    let mut hw = 0;
    for k in rng.key.iter_mut() {
        if let Some(v) = hardware_word(rdrand, rdseed) {
            *k ^= v as u32 ^ (v >> 32) as u32;
            hw += 1;
        }
    }
    // The jitter: each sample is the TSC delta across a piece of work whose length
    // depends on the previous delta; every sample goes through the ChaCha rekey.
    let rtc = hal::rtc::read();
    let mut prev = hal::tsc::read();
    let mut mix: u64 = prev ^ (u64::from(rtc.seconds) | u64::from(rtc.minutes) << 8 | u64::from(rtc.hours) << 16);
    for _ in 0..JITTER_SAMPLES {
        let spins = (mix & 0x3f) + 1;
        for _ in 0..spins {
            mix = mix.rotate_left(7) ^ hal::tsc::read();
        }
        let now = hal::tsc::read();
        rng.key[(now as usize) % 8] ^= (now.wrapping_sub(prev)) as u32;
        prev = now;
        rng.rekey(mix);
    }
    log::info!("random: ChaCha20 seeded from {hw} hardware words (rdrand {rdrand}, rdseed {rdseed}) and TSC jitter");
    rng
}

/// Seed the generator (at boot; [`fill`] also seeds it on first use).
pub fn init() {
    hal::cpu::without_interrupts(|| {
        let mut g = RNG.lock();
        if g.is_none() {
            *g = Some(seeded());
        }
    });
}

/// Fill `buf` with random bytes: `getrandom`'s and `AT_RANDOM`'s source. Takes the
/// generator's lock with interrupts off for `buf.len() / 64` blocks: callers with large
/// requests ask in pieces (`getrandom` asks 256 bytes at a time).
pub fn fill(buf: &mut [u8]) {
    hal::cpu::without_interrupts(|| {
        let mut g = RNG.lock();
        let rng = g.get_or_insert_with(seeded);
        for chunk in buf.chunks_mut(64) {
            let b = rng.block();
            chunk.copy_from_slice(&b[..chunk.len()]);
        }
        rng.rekey(hal::tsc::read());
    });
}
