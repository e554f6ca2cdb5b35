//! Shortest decimal digits of a binary float exactly as PostgreSQL's Ryu port prints them.
//!
//! PostgreSQL builds Ryu with `STRICTLY_SHORTEST = 0`: the digit string must lie strictly
//! inside the rounding interval of the float (never on a midpoint, even when the mantissa
//! is even), and among the shortest candidates the one closest to the exact value wins,
//! exact ties going to the even digit. Rust's `{:e}` accepts the interval bounds for even
//! mantissas, so it occasionally prints one digit fewer. This module uses the
//! Steele-White / Burger-Dybvig free-format algorithm on a small bignum instead.

use std::cmp::Ordering;

/// The unsigned integer operations the digit generator needs; `None` means overflow.
trait Nat: Clone + Ord + Sized {
    fn from_u64(v: u64) -> Self;
    fn shl(&self, bits: u32) -> Option<Self>;
    fn mul_small(&mut self, m: u32) -> Option<()>;
    fn add(&self, other: &Self) -> Option<Self>;
    /// `self -= other`; requires `self >= other`.
    fn sub_assign(&mut self, other: &Self);

    fn mul_pow10(&mut self, mut k: u32) -> Option<()> {
        while k > 0 {
            let step = k.min(9);
            self.mul_small(10u32.pow(step))?;
            k -= step;
        }
        Some(())
    }
}

/// The fast path: most floats of everyday magnitude fit in 128 bits throughout.
impl Nat for u128 {
    fn from_u64(v: u64) -> u128 {
        v as u128
    }

    fn shl(&self, bits: u32) -> Option<u128> {
        (bits < 128 && self.leading_zeros() >= bits).then(|| self << bits)
    }

    fn mul_small(&mut self, m: u32) -> Option<()> {
        *self = self.checked_mul(m as u128)?;
        Some(())
    }

    fn add(&self, other: &u128) -> Option<u128> {
        self.checked_add(*other)
    }

    fn sub_assign(&mut self, other: &u128) {
        *self -= other;
    }
}

/// An unsigned big integer, little-endian base 2^32 limbs without high zero limbs.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Big(Vec<u32>);

impl Big {
    fn trim(mut self) -> Big {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
        self
    }
}

impl Nat for Big {
    fn from_u64(v: u64) -> Big {
        Big(vec![v as u32, (v >> 32) as u32]).trim()
    }

    fn shl(&self, bits: u32) -> Option<Big> {
        let (limbs, bits) = ((bits / 32) as usize, bits % 32);
        let mut out = vec![0u32; limbs];
        let mut carry = 0u32;
        for &l in &self.0 {
            if bits == 0 {
                out.push(l);
            } else {
                out.push((l << bits) | carry);
                carry = l >> (32 - bits);
            }
        }
        out.push(carry);
        Some(Big(out).trim())
    }

    fn mul_small(&mut self, m: u32) -> Option<()> {
        let mut carry = 0u64;
        for l in &mut self.0 {
            let v = *l as u64 * m as u64 + carry;
            *l = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
        Some(())
    }

    fn add(&self, other: &Big) -> Option<Big> {
        let n = self.0.len().max(other.0.len());
        let mut out = Vec::with_capacity(n + 1);
        let mut carry = 0u64;
        for i in 0..n {
            let a = *self.0.get(i).unwrap_or(&0) as u64;
            let v = a + *other.0.get(i).unwrap_or(&0) as u64 + carry;
            out.push(v as u32);
            carry = v >> 32;
        }
        out.push(carry as u32);
        Some(Big(out).trim())
    }

    fn sub_assign(&mut self, other: &Big) {
        let mut borrow = 0i64;
        for i in 0..self.0.len() {
            let v = self.0[i] as i64 - *other.0.get(i).unwrap_or(&0) as i64 - borrow;
            borrow = (v < 0) as i64;
            self.0[i] = v.rem_euclid(1 << 32) as u32;
        }
        *self = std::mem::replace(self, Big(Vec::new())).trim();
    }
}

impl Ord for Big {
    fn cmp(&self, other: &Big) -> Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }
}

impl PartialOrd for Big {
    fn partial_cmp(&self, other: &Big) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Shortest digits of `mant * 2^exp` (positive, `mant < 2^precision`), where `min_exp` is
/// the exponent of subnormals. Returns the digits (first one non-zero) and the decimal
/// exponent of the first digit: the value is `d1.d2d3... * 10^exponent`.
fn shortest(mant: u64, exp: i32, min_exp: i32, precision: u32) -> (Vec<u8>, i32) {
    generate::<u128>(mant, exp, min_exp, precision)
        .or_else(|| generate::<Big>(mant, exp, min_exp, precision))
        .unwrap_or((vec![0], 0))
}

fn generate<N: Nat>(mant: u64, exp: i32, min_exp: i32, precision: u32) -> Option<(Vec<u8>, i32)> {
    // v = r/s; the distances to the neighbouring floats are 2*mp/s above and 2*mm/s below.
    let unequal_gaps = mant == 1 << (precision - 1) && exp > min_exp;
    let one = N::from_u64(1);
    let (mut r, mut s, mut mp, mut mm) = if exp >= 0 {
        let gap = one.shl(exp as u32)?;
        if unequal_gaps {
            let r = N::from_u64(mant).shl(exp as u32 + 2)?;
            (r, N::from_u64(4), gap.shl(1)?, gap)
        } else {
            let r = N::from_u64(mant).shl(exp as u32 + 1)?;
            (r, N::from_u64(2), gap.clone(), gap)
        }
    } else if unequal_gaps {
        let s = one.shl((2 - exp) as u32)?;
        (N::from_u64(mant).shl(2)?, s, N::from_u64(2), one)
    } else {
        let s = one.shl((1 - exp) as u32)?;
        (N::from_u64(mant).shl(1)?, s, one.clone(), one)
    };
    // Scale so that the upper bound lies in (0.1, 1] times 10^k.
    let estimate = (mant as f64).log10() + exp as f64 * std::f64::consts::LOG10_2;
    let mut k = estimate.ceil() as i32;
    if k >= 0 {
        s.mul_pow10(k as u32)?;
    } else {
        for b in [&mut r, &mut mp, &mut mm] {
            b.mul_pow10((-k) as u32)?;
        }
    }
    while r.add(&mp)? > s {
        s.mul_small(10)?;
        k += 1;
    }
    loop {
        let mut high = r.add(&mp)?;
        high.mul_small(10)?;
        if high > s {
            break;
        }
        for b in [&mut r, &mut mp, &mut mm] {
            b.mul_small(10)?;
        }
        k -= 1;
    }
    let mut digits = Vec::new();
    loop {
        for b in [&mut r, &mut mp, &mut mm] {
            b.mul_small(10)?;
        }
        let mut d = 0u8;
        while r >= s {
            r.sub_assign(&s);
            d += 1;
        }
        let low_ok = r < mm; // the truncated digits are strictly above the lower bound
        let high_ok = r.add(&mp)? > s; // rounding up stays strictly below the upper bound
        match (low_ok, high_ok) {
            (false, false) => digits.push(d),
            (true, false) => {
                digits.push(d);
                break;
            }
            (false, true) => {
                digits.push(d + 1);
                break;
            }
            (true, true) => {
                let up = match r.shl(1)?.cmp(&s) {
                    Ordering::Less => false,
                    Ordering::Greater => true,
                    Ordering::Equal => d % 2 == 1,
                };
                digits.push(d + up as u8);
                break;
            }
        }
    }
    Some((digits, k - 1))
}

/// Shortest digits of a finite, non-zero `|v|` as PostgreSQL's `float8out` chooses them.
pub(crate) fn shortest_f64(v: f64) -> (Vec<u8>, i32) {
    let bits = v.abs().to_bits();
    let (biased, frac) = ((bits >> 52) as i32, bits & ((1 << 52) - 1));
    if biased == 0 {
        shortest(frac, -1074, -1074, 53)
    } else {
        shortest(frac | 1 << 52, biased - 1075, -1074, 53)
    }
}

/// Shortest digits of a finite, non-zero `|v|` as PostgreSQL's `float4out` chooses them.
pub(crate) fn shortest_f32(v: f32) -> (Vec<u8>, i32) {
    let bits = v.abs().to_bits();
    let (biased, frac) = ((bits >> 23) as i32, (bits & ((1 << 23) - 1)) as u64);
    if biased == 0 {
        shortest(frac, -149, -149, 24)
    } else {
        shortest(frac | 1 << 23, biased - 150, -149, 24)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn digits_str(d: (Vec<u8>, i32)) -> String {
        let s: String = d.0.iter().map(|x| (b'0' + x) as char).collect();
        format!("{s}e{}", d.1)
    }

    #[test]
    fn boundaries_are_excluded_and_ties_go_even() {
        // values where Rust's shortest output differs from PostgreSQL's
        assert_eq!(digits_str(shortest_f32(351_691.62)), "35169162e5");
        assert_eq!(digits_str(shortest_f32(2_887_380.2)), "28873802e6");
        assert_eq!(digits_str(shortest_f32(99653984.0)), "99653984e7");
        assert_eq!(digits_str(shortest_f32(1053031168.0)), "105303117e9");
        // 1e23 is exactly the midpoint between two doubles: PostgreSQL prints 16 nines
        assert_eq!(digits_str(shortest_f64(1e23)), "9999999999999999e22");
        assert_eq!(
            digits_str(shortest_f64(65197637617214496.0)),
            "65197637617214496e16"
        );
        assert_eq!(digits_str(shortest_f64(5e-324)), "5e-324");
        assert_eq!(digits_str(shortest_f64(f64::MAX)), "17976931348623157e308");
        assert_eq!(digits_str(shortest_f32(f32::MAX)), "34028235e38");
        assert_eq!(digits_str(shortest_f32(1e-45)), "1e-45");
        assert_eq!(digits_str(shortest_f64(0.3)), "3e-1");
        assert_eq!(digits_str(shortest_f64(123.0)), "123e2");
    }

    #[test]
    fn fast_and_big_paths_agree() {
        let mut r = rand::rngs::StdRng::seed_from_u64(5);
        for _ in 0..10_000 {
            let bits = if r.gen_bool(0.5) {
                r.gen::<u64>() >> 1
            } else {
                let v: f64 = r.gen_range(-20.0..20.0);
                (10f64.powf(v) * r.gen_range(1.0..10.0)).to_bits()
            };
            let (biased, frac) = ((bits >> 52) as i32, bits & ((1 << 52) - 1));
            if biased == 0 || biased == 2047 {
                continue;
            }
            let (m, e) = (frac | 1 << 52, biased - 1075);
            let fast = generate::<u128>(m, e, -1074, 53);
            let value = f64::from_bits(bits);
            if (1e-5..1e17).contains(&value) {
                assert!(fast.is_some(), "{value:e} should take the fast path");
            }
            if let Some(fast) = fast {
                assert_eq!(
                    Some(fast),
                    generate::<Big>(m, e, -1074, 53),
                    "{:e}",
                    f64::from_bits(bits)
                );
            }
        }
    }

    #[test]
    fn agrees_with_round_trip_and_is_never_longer_than_needed() {
        let mut r = rand::rngs::StdRng::seed_from_u64(17);
        for _ in 0..20_000 {
            let v = f64::from_bits(r.gen::<u64>() >> 1);
            if !v.is_finite() || v == 0.0 {
                continue;
            }
            let (digits, exp) = shortest_f64(v);
            let s: String = digits.iter().map(|x| (b'0' + x) as char).collect();
            let back: f64 = format!("0.{s}e{}", exp + 1).parse().unwrap();
            assert_eq!(back, v, "{v:e} -> {s}e{exp}");
            // Rust's shortest accepts the bounds, so it is never longer.
            let rust = format!("{v:e}");
            let rust_len = rust.split('e').next().unwrap().replace('.', "").len();
            assert!(digits.len() >= rust_len && digits.len() <= 17, "{v:e}: {s}");
            let w = f32::from_bits(r.gen::<u32>() >> 1);
            if w.is_finite() && w != 0.0 {
                let (digits, exp) = shortest_f32(w);
                let s: String = digits.iter().map(|x| (b'0' + x) as char).collect();
                let back: f32 = format!("0.{s}e{}", exp + 1).parse().unwrap();
                assert_eq!(back, w, "{w:e} -> {s}e{exp}");
            }
        }
    }
}
