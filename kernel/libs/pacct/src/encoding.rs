//! The two number formats of an acct v3 record: `comp_t` and the integral float of
//! `ac_etime`.
//!
//! A record is 64 bytes and has to hold times from a hundredth of a second to years, so the
//! 1970s format packs counts into 16 bits as a tiny floating-point number:
//!
//! ```text
//!   comp_t   15 14 13 12 11 10  9  8  7  6  5  4  3  2  1  0
//!           [exponent][            mantissa (13 bits)         ]
//!            base 8
//!   value = mantissa << (3 * exponent)        (0 ..= 8191 << 21, about 1.7e10)
//! ```
//!
//! Up to 8191 the value is stored exactly (exponent 0). Above, each step of the exponent
//! drops three low bits: 12345 = 0b11_0000_0011_1001 becomes mantissa 1543, exponent 1,
//! and reads back as 1543 × 8 = 12344. The mantissa of a value above 8191 is at least 1024,
//! so the error is at most half a step: a relative error below 1/2048. The encoder rounds
//! to nearest (ties up) by looking at the highest bit it drops, as BSD's and Linux's do.
//! Past the largest value it saturates at `0xffff`.
//!
//! Elapsed time outgrew that format (a long-running daemon's ticks overflow it), so v3
//! stores `ac_etime` as an IEEE single-precision float. The kernel does not use floating
//! point, so Linux builds the float's bits with shifts ([`encode_float`]): normalise the
//! 64-bit integer until its top bit is set, count the shifts into the exponent, and keep
//! the 23 bits after the leading one. It truncates rather than rounds, so every value
//! below 2^24 is exact and larger ones lose their low bits toward zero.

use tally_uapi::acct::comp_t;

/// Bits of a `comp_t` mantissa, and its largest value.
const MANT_BITS: u32 = 13;
const MAX_MANT: u64 = (1 << MANT_BITS) - 1;
/// Bits of the (base-8) exponent: each step shifts by 3.
const EXP_BITS: u32 = 3;
const MAX_EXP: u32 = (1 << EXP_BITS) - 1;

/// The largest value a `comp_t` holds: mantissa 8191, exponent 7.
pub const COMP_T_MAX: u64 = MAX_MANT << (3 * MAX_EXP);

/// A count as a `comp_t`, Linux's `encode_comp_t`: rounded to nearest (ties up) on the
/// highest dropped bit, `0xffff` when it does not fit. `8192 → 0x2400`, `12345 → 0x2607`.
pub const fn encode_comp_t(value: u64) -> comp_t {
    let mut v = value;
    let mut exp = 0u32;
    let mut round_up = false;
    while v > MAX_MANT {
        round_up = v & (1 << (EXP_BITS - 1)) != 0;
        v >>= EXP_BITS;
        exp += 1;
    }
    if round_up {
        v += 1;
        if v > MAX_MANT {
            v >>= EXP_BITS;
            exp += 1;
        }
    }
    if exp > MAX_EXP {
        return comp_t::MAX;
    }
    ((exp << MANT_BITS) as u64 | v) as comp_t
}

/// The count a `comp_t` stands for: `(c & 0x1fff) << (3 * (c >> 13))`, as GNU acct's
/// `comp_t_2_double` reads it.
pub const fn decode_comp_t(c: comp_t) -> u64 {
    ((c as u64) & MAX_MANT) << (3 * (c as u32 >> MANT_BITS))
}

/// A count as the bits of an IEEE-754 `f32`, Linux's `encode_float` for `ac_etime`:
/// truncated toward zero (exact below 2^24). `250 → 0x437a_0000` (250.0).
pub const fn encode_float(value: u64) -> u32 {
    if value == 0 {
        return 0;
    }
    // Shift until bit 63 is the leading one; the exponent starts at 127 + 63 = 190 for a
    // value whose leading one is already there, and drops by one per shift.
    let shift = value.leading_zeros();
    let normalised = value << shift;
    let exp = 190 - shift;
    // Bit 63 is the implicit leading one; the 23 bits below it are the fraction.
    ((normalised >> 40) as u32 & 0x7f_ffff) | (exp << 23)
}

/// The float of [`encode_float`]'s bits (what a C reader sees in `ac_etime`).
pub const fn decode_float(bits: u32) -> f32 {
    f32::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Linux's loop, kept literally as the reference for the closed-form [`encode_float`].
    fn encode_float_loop(mut value: u64) -> u32 {
        let mut exp: u32 = 190;
        if value == 0 {
            return 0;
        }
        while (value as i64) > 0 {
            value <<= 1;
            exp -= 1;
        }
        ((value >> 40) as u32 & 0x7f_ffff) | (exp << 23)
    }

    /// The largest `f32` not above `v`: `v as f32` rounds to nearest, step down if it went up.
    fn f32_toward_zero(v: u64) -> f32 {
        let f = v as f32;
        if f as u128 > v as u128 {
            f32::from_bits(f.to_bits() - 1)
        } else {
            f
        }
    }

    #[test]
    fn comp_t_vectors_from_the_reference() {
        let vectors = [
            (0, 0x0000),
            (1, 0x0001),
            (8191, 0x1fff),
            (8192, 0x2400),
            (8196, 0x2401),
            (12345, 0x2607),
            (100_000, 0x461b),
            (1 << 24, 0x9000),
            (COMP_T_MAX, 0xffff),
            (u64::MAX, 0xffff),
        ];
        for (v, c) in vectors {
            assert_eq!(encode_comp_t(v), c, "encode {v}");
        }
        assert_eq!(decode_comp_t(0x2607), 12344);
        assert_eq!(decode_comp_t(0x461b), 100_032, "1563 × 64");
        assert_eq!(decode_comp_t(0xffff), COMP_T_MAX);
        assert_eq!(COMP_T_MAX, 8191 << 21);
    }

    #[test]
    fn comp_t_rounds_on_the_highest_dropped_bit() {
        // 8195 = 1024 * 8 + 3: dropped bits 011, highest clear → down to 1024.
        assert_eq!(encode_comp_t(8195), 0x2400);
        // 8196: dropped 100 → up to 1025 (a tie goes up).
        assert_eq!(encode_comp_t(8196), 0x2401);
        // 65532 = 8191 * 8 + 4: rounding up overflows the mantissa → next exponent.
        assert_eq!(encode_comp_t(65_532), (2 << 13) | 1024);
        assert_eq!(decode_comp_t(encode_comp_t(65_532)), 65_536);
        // The largest value and everything that rounds to it stays; what rounds past it
        // saturates.
        assert_eq!(encode_comp_t(COMP_T_MAX + (1 << 20) - 1), 0xffff);
        assert_eq!(decode_comp_t(encode_comp_t(COMP_T_MAX - (1 << 21))), COMP_T_MAX - (1 << 21));
    }

    #[test]
    fn comp_t_is_exact_up_to_8191_and_round_trips_every_code() {
        for v in 0..=MAX_MANT {
            assert_eq!(encode_comp_t(v), v as u16);
        }
        // Every canonical code (mantissa >= 1024 once the exponent is above 0) decodes to a
        // value that encodes back to it.
        for c in 0..=u16::MAX {
            let mant = c & 0x1fff;
            if c >> 13 > 0 && mant < 1024 {
                continue;
            }
            assert_eq!(encode_comp_t(decode_comp_t(c)), c, "code {c:#x}");
        }
    }

    #[test]
    fn comp_t_error_is_at_most_half_a_step_everywhere_below_2_pow_24() {
        for v in (0..1u64 << 24).step_by(7) {
            let c = encode_comp_t(v);
            let step = 1u64 << (3 * (c >> 13) as u32);
            let back = decode_comp_t(c);
            assert!(back.abs_diff(v) * 2 <= step, "{v} -> {c:#x} -> {back}");
        }
    }

    #[test]
    fn float_vectors() {
        assert_eq!(encode_float(0), 0);
        assert_eq!(encode_float(1), 0x3f80_0000);
        assert_eq!(encode_float(250), 0x437a_0000);
        assert_eq!(decode_float(encode_float(250)), 250.0);
        assert_eq!(encode_float(1 << 24), ((1u64 << 24) as f32).to_bits());
        // 2^24 + 1 is not a float: truncated to 2^24.
        assert_eq!(decode_float(encode_float((1 << 24) + 1)), 16_777_216.0);
        assert_eq!(encode_float(u64::MAX), f32_toward_zero(u64::MAX).to_bits());
        assert_eq!(encode_float(u64::MAX), 0x5f7f_ffff);
    }

    #[test]
    fn float_is_exact_for_every_value_below_2_pow_24() {
        for v in 0..1u64 << 24 {
            assert_eq!(encode_float(v), (v as f32).to_bits(), "{v}");
        }
    }

    proptest! {
        #[test]
        fn float_truncates_toward_zero(v in any::<u64>()) {
            prop_assert_eq!(encode_float(v), f32_toward_zero(v).to_bits());
            prop_assert_eq!(encode_float(v), encode_float_loop(v));
        }

        #[test]
        fn float_matches_linuxs_loop_at_every_magnitude(shift in 0u32..64, low in any::<u64>()) {
            let v = (1u64 << shift) | (low >> (64 - shift.max(1)));
            prop_assert_eq!(encode_float(v), encode_float_loop(v));
        }

        #[test]
        fn comp_t_relative_error_below_1_in_2048(v in 0u64..=COMP_T_MAX) {
            let back = decode_comp_t(encode_comp_t(v));
            prop_assert!(back.abs_diff(v) as f64 <= v as f64 / 2048.0, "{} -> {}", v, back);
        }

        #[test]
        fn comp_t_is_monotonic(a in any::<u64>(), b in any::<u64>()) {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            prop_assert!(decode_comp_t(encode_comp_t(lo)) <= decode_comp_t(encode_comp_t(hi)));
        }
    }
}
