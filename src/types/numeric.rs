//! numeric: text and binary I/O, typmod application and arithmetic with PostgreSQL's
//! result scales, on top of `rust_decimal::Decimal`.
//!
//! `Decimal` holds a 96-bit mantissa and a scale of at most 28, so values need at most 28
//! fractional digits and about 29 significant digits. Inputs with more fractional digits
//! than fit are rounded (half away from zero) to the largest scale that fits; inputs whose
//! integer part does not fit give 22003 `value overflows numeric format`.

use rust_decimal::Decimal;

use super::float::{is_pg_space, rounded_digits};
use crate::err;
use crate::error::{Error, Result};

const MAX_MANTISSA: u128 = (1u128 << 96) - 1;
const MAX_SCALE: i64 = Decimal::MAX_SCALE as i64;
/// PostgreSQL's `NUMERIC_MIN_SIG_DIGITS`: division keeps at least this many digits.
const MIN_SIG_DIGITS: i64 = 16;

const NUMERIC_POS: u16 = 0x0000;
const NUMERIC_NEG: u16 = 0x4000;
const NUMERIC_NAN: u16 = 0xC000;
const NUMERIC_PINF: u16 = 0xD000;
const NUMERIC_NINF: u16 = 0xF000;

pub(crate) fn overflow() -> Error {
    err!(NUMERIC_VALUE_OUT_OF_RANGE, "value overflows numeric format")
}

fn pow10(n: u32) -> u128 {
    10u128.pow(n)
}

/// A zero with the sign bit cleared (Decimal can carry a negative zero; numeric cannot).
pub(crate) fn fix_zero(d: Decimal) -> Decimal {
    if d.is_zero() && d.is_sign_negative() {
        Decimal::from_i128_with_scale(0, d.scale())
    } else {
        d
    }
}

/// Build a Decimal equal to `digits * 10^exp10` (each digit 0..=9) truncated to `dscale`
/// fractional digits and shown with scale `dscale`. When that does not fit, the scale is
/// lowered with rounding half away from zero; 22003 if even the integer part does not fit.
pub(crate) fn from_digits(
    negative: bool,
    digits: &[u8],
    exp10: i64,
    dscale: i64,
) -> Result<Decimal> {
    let dscale = dscale.max(0);
    let start = digits.iter().position(|&d| d != 0).unwrap_or(digits.len());
    let mut digits = &digits[start..];
    let mut exp10 = exp10;
    if exp10 < -dscale {
        let drop = (-dscale - exp10).min(digits.len() as i64) as usize;
        digits = &digits[..digits.len() - drop];
        exp10 = -dscale;
    }
    let n = digits.len() as i64;
    let mut scale = dscale.min(MAX_SCALE);
    loop {
        // mantissa = digits * 10^k at this scale
        let k = exp10 + scale;
        if n + k <= 29 {
            let keep = (n + k).clamp(0, n) as usize;
            let mut m: u128 = 0;
            for &d in &digits[..keep] {
                m = m * 10 + d as u128;
            }
            if k > 0 {
                m *= pow10(k as u32);
            } else if keep < digits.len() && (n + k) >= 0 && digits[keep] >= 5 {
                m += 1;
            }
            if m <= MAX_MANTISSA {
                let signed = if negative { -(m as i128) } else { m as i128 };
                return Ok(Decimal::from_i128_with_scale(signed, scale as u32));
            }
        }
        if scale == 0 {
            return Err(overflow());
        }
        scale -= 1;
    }
}

/// `numeric_in` without a typmod.
pub fn parse_numeric(text: &str) -> Result<Decimal> {
    let invalid = || {
        err!(
            INVALID_TEXT_REPRESENTATION,
            "invalid input syntax for type numeric: \"{text}\""
        )
    };
    let s = text.trim_start_matches(is_pg_space);
    let lower = s.to_ascii_lowercase();
    for (word, nan) in [
        ("nan", true),
        ("infinity", false),
        ("+infinity", false),
        ("-infinity", false),
        ("inf", false),
        ("+inf", false),
        ("-inf", false),
    ] {
        if let Some(rest) = lower.strip_prefix(word) {
            if !rest.chars().all(is_pg_space) {
                return Err(invalid());
            }
            let what = if nan { "NaN" } else { "Infinity" };
            return Err(Error::unsupported(format!(
                "{what} is not supported for numeric"
            )));
        }
    }
    let b = s.as_bytes();
    let mut i = 0;
    let mut negative = false;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        negative = b[i] == b'-';
        i += 1;
    }
    let mut digits = Vec::new();
    let (mut frac, mut seen_point) = (0i64, false);
    while i < b.len() {
        match b[i] {
            c @ b'0'..=b'9' => {
                digits.push(c - b'0');
                frac += seen_point as i64;
            }
            b'.' if !seen_point => seen_point = true,
            _ => break,
        }
        i += 1;
    }
    if digits.is_empty() {
        return Err(invalid());
    }
    let mut exponent: i64 = 0;
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        let mut exp_negative = false;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            exp_negative = b[i] == b'-';
            i += 1;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            exponent = exponent
                .saturating_mul(10)
                .saturating_add((b[i] - b'0') as i64);
            i += 1;
        }
        if i == start {
            return Err(invalid());
        }
        if exponent >= (i32::MAX / 2) as i64 {
            return Err(overflow());
        }
        if exp_negative {
            exponent = -exponent;
        }
    }
    if !s[i..].chars().all(is_pg_space) {
        return Err(invalid());
    }
    from_digits(negative, &digits, exponent - frac, frac - exponent)
}

/// Number of decimal digits before the decimal point of the leading significant digit
/// (`floor(log10(|d|)) + 1`); zero for values below one down to 0.1, negative below that.
fn leading_digit_position(d: &Decimal) -> i64 {
    let m = d.mantissa().unsigned_abs();
    let len = if m == 0 { 0 } else { m.ilog10() as i64 + 1 };
    len - d.scale() as i64
}

/// `apply_typmod`: round to `scale` places (half away from zero) and check that the value
/// fits `precision` digits.
pub fn apply_typmod(d: Decimal, precision: u8, scale: u8) -> Result<Decimal> {
    let mut d = d;
    d.rescale((scale as u32).min(Decimal::MAX_SCALE));
    let d = fix_zero(d);
    let max_digits = precision as i64 - scale as i64;
    if !d.is_zero() && leading_digit_position(&d) > max_digits {
        let bound = if max_digits == 0 {
            "1".to_string()
        } else {
            format!("10^{max_digits}")
        };
        return Err(err!(NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow").with_detail(format!(
            "A field with precision {precision}, scale {scale} must round to an absolute value less than {bound}."
        )));
    }
    Ok(d)
}

/// The base-10000 digits of `|d|` as PostgreSQL stores them: `(weight, digits)` with no
/// leading or trailing zero digits (so zero has no digits and weight 0).
pub(crate) fn pg_digits(d: &Decimal) -> (i32, Vec<u16>) {
    let scale = d.scale();
    let pad = (4 - scale % 4) % 4;
    let mut m = d.mantissa().unsigned_abs() * pow10(pad);
    let frac_groups = ((scale + pad) / 4) as i32;
    let mut digits = Vec::new();
    while m > 0 {
        digits.push((m % 10000) as u16);
        m /= 10000;
    }
    if digits.is_empty() {
        return (0, digits);
    }
    let weight = digits.len() as i32 - 1 - frac_groups;
    digits.reverse();
    while digits.last() == Some(&0) {
        digits.pop();
    }
    (weight, digits)
}

/// `numeric_send`.
pub fn encode_numeric_binary(d: &Decimal, out: &mut Vec<u8>) {
    let (weight, digits) = pg_digits(d);
    let sign = if d.is_sign_negative() && !digits.is_empty() {
        NUMERIC_NEG
    } else {
        NUMERIC_POS
    };
    let weight = if digits.is_empty() { 0 } else { weight };
    out.extend_from_slice(&(digits.len() as u16).to_be_bytes());
    out.extend_from_slice(&(weight as i16).to_be_bytes());
    out.extend_from_slice(&sign.to_be_bytes());
    out.extend_from_slice(&(d.scale() as u16).to_be_bytes());
    for digit in digits {
        out.extend_from_slice(&digit.to_be_bytes());
    }
}

/// `numeric_recv` (without typmod); 22P03 on malformed input.
pub fn decode_numeric_binary(bytes: &[u8]) -> Result<Decimal> {
    let bad = |msg: &str| Error::new(crate::error::SqlState::INVALID_BINARY_REPRESENTATION, msg);
    let u16_at = |i: usize| -> Result<u16> {
        match bytes.get(i..i + 2) {
            Some(b) => Ok(u16::from_be_bytes([b[0], b[1]])),
            None => Err(bad("insufficient data left in message")),
        }
    };
    let ndigits = u16_at(0)? as usize;
    let weight = u16_at(2)? as i16 as i64;
    let sign = u16_at(4)?;
    let dscale = u16_at(6)?;
    match sign {
        NUMERIC_POS | NUMERIC_NEG => {}
        NUMERIC_NAN => return Err(Error::unsupported("NaN is not supported for numeric")),
        NUMERIC_PINF | NUMERIC_NINF => {
            return Err(Error::unsupported("Infinity is not supported for numeric"))
        }
        _ => return Err(bad("invalid sign in external \"numeric\" value")),
    }
    if dscale & 0x3FFF != dscale {
        return Err(bad("invalid scale in external \"numeric\" value"));
    }
    let mut decimal_digits = Vec::with_capacity(ndigits * 4);
    for i in 0..ndigits {
        let digit = u16_at(8 + 2 * i)?;
        if digit >= 10000 {
            return Err(bad("invalid digit in external \"numeric\" value"));
        }
        decimal_digits.extend_from_slice(&[
            (digit / 1000) as u8,
            (digit / 100 % 10) as u8,
            (digit / 10 % 10) as u8,
            (digit % 10) as u8,
        ]);
    }
    if bytes.len() != 8 + 2 * ndigits {
        return Err(bad("incorrect binary data format"));
    }
    let exp10 = 4 * (weight + 1 - ndigits as i64);
    from_digits(sign == NUMERIC_NEG, &decimal_digits, exp10, dscale as i64)
}

/// numeric → float8, correctly rounded (PostgreSQL goes through the text form and strtod).
pub fn numeric_to_f64(d: &Decimal) -> f64 {
    let m = d.mantissa();
    if m.unsigned_abs() < (1u128 << 53) && d.scale() <= 22 {
        // Both operands are exact doubles, so one division rounds correctly.
        const POW10: [f64; 23] = [
            1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
            1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
        ];
        return m as f64 / POW10[d.scale() as usize];
    }
    d.to_string().parse().unwrap_or(0.0)
}

/// numeric → float4, rounding the decimal value directly to single precision.
pub fn numeric_to_f32(d: &Decimal) -> f32 {
    d.to_string().parse().unwrap_or(0.0)
}

/// float → numeric through `%.{sig}g` (15 digits for float8, 6 for float4), as PostgreSQL.
pub fn float_to_numeric(v: f64, sig: usize) -> Result<Decimal> {
    if v.is_nan() {
        return Err(Error::unsupported("NaN is not supported for numeric"));
    }
    if v.is_infinite() {
        return Err(Error::unsupported("Infinity is not supported for numeric"));
    }
    let (negative, digits, exp10) = rounded_digits(v, sig);
    from_digits(negative, &digits, exp10, -exp10)
}

/// Round to an integer, half away from zero (`round_var(var, 0)`).
pub fn round_to_integer(d: &Decimal) -> i128 {
    let m = d.mantissa();
    let p = pow10(d.scale()) as i128;
    let (q, r) = (m / p, m % p);
    if r.abs() * 2 >= p {
        q + m.signum()
    } else {
        q
    }
}

/// Result scale of numeric division (`select_div_scale`).
fn div_scale(a: &Decimal, b: &Decimal) -> i64 {
    let (w1, d1) = pg_digits(a);
    let (w2, d2) = pg_digits(b);
    let first1 = d1.first().copied().unwrap_or(0);
    let first2 = d2.first().copied().unwrap_or(0);
    let mut qweight = (w1 - w2) as i64;
    if first1 <= first2 {
        qweight -= 1;
    }
    (MIN_SIG_DIGITS - qweight * 4)
        .max(a.scale() as i64)
        .max(b.scale() as i64)
        .clamp(0, 1000)
}

/// `round(a * 10^k / b)` half away from zero for `a, b < 2^96`; `None` above `MAX_MANTISSA`.
fn div_round(a: u128, b: u128, k: i64) -> Option<u128> {
    if k >= 0 {
        let (mut q, mut r) = (a / b, a % b);
        for _ in 0..k {
            r *= 10;
            q = q.checked_mul(10)? + r / b;
            r %= b;
            if q > MAX_MANTISSA {
                return None;
            }
        }
        if r >= b - r {
            q += 1;
        }
        (q <= MAX_MANTISSA).then_some(q)
    } else {
        let Some(divisor) = b.checked_mul(pow10((-k) as u32)) else {
            return Some(0);
        };
        let (mut q, r) = (a / divisor, a % divisor);
        if r >= divisor - r {
            q += 1;
        }
        (q <= MAX_MANTISSA).then_some(q)
    }
}

/// Numeric division with PostgreSQL's result scale (at least 16 significant digits).
pub fn div(a: &Decimal, b: &Decimal) -> Result<Decimal> {
    if b.is_zero() {
        return Err(err!(DIVISION_BY_ZERO, "division by zero"));
    }
    let (ma, mb) = (a.mantissa().unsigned_abs(), b.mantissa().unsigned_abs());
    let negative = a.is_sign_negative() != b.is_sign_negative();
    let mut scale = div_scale(a, b).min(MAX_SCALE);
    loop {
        let k = b.scale() as i64 + scale - a.scale() as i64;
        if let Some(q) = div_round(ma, mb, k) {
            let signed = if negative { -(q as i128) } else { q as i128 };
            return Ok(fix_zero(Decimal::from_i128_with_scale(
                signed,
                scale as u32,
            )));
        }
        if scale == 0 {
            return Err(overflow());
        }
        scale -= 1;
    }
}

/// Numeric modulo: sign of the dividend, scale of the larger input scale.
pub fn rem(a: &Decimal, b: &Decimal) -> Result<Decimal> {
    if b.is_zero() {
        return Err(err!(DIVISION_BY_ZERO, "division by zero"));
    }
    let scale = a.scale().max(b.scale());
    let align = |d: &Decimal| d.mantissa().checked_mul(pow10(scale - d.scale()) as i128);
    if let (Some(x), Some(y)) = (align(a), align(b)) {
        let r = x % y;
        if r.unsigned_abs() <= MAX_MANTISSA {
            return Ok(fix_zero(Decimal::from_i128_with_scale(r, scale)));
        }
    }
    a.checked_rem(*b).map(fix_zero).ok_or_else(overflow)
}

/// Keep PostgreSQL's result scale where Decimal dropped trailing zeros or could not keep it.
fn with_scale(d: Decimal, scale: u32) -> Decimal {
    let mut d = d;
    if d.scale() < scale {
        d.rescale(scale.min(Decimal::MAX_SCALE));
    }
    fix_zero(d)
}

pub fn add(a: &Decimal, b: &Decimal) -> Result<Decimal> {
    let r = a.checked_add(*b).ok_or_else(overflow)?;
    Ok(with_scale(r, a.scale().max(b.scale())))
}

pub fn sub(a: &Decimal, b: &Decimal) -> Result<Decimal> {
    let r = a.checked_sub(*b).ok_or_else(overflow)?;
    Ok(with_scale(r, a.scale().max(b.scale())))
}

pub fn mul(a: &Decimal, b: &Decimal) -> Result<Decimal> {
    let r = a.checked_mul(*b).ok_or_else(overflow)?;
    Ok(with_scale(r, a.scale() + b.scale()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn dec(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    fn parse(s: &str) -> String {
        parse_numeric(s).unwrap().to_string()
    }

    #[test]
    fn text_input_keeps_postgres_scale() {
        assert_eq!(parse(" 1.5e3 "), "1500");
        assert_eq!(parse("1e-3"), "0.001");
        assert_eq!(parse("1.50e1"), "15.0");
        assert_eq!(parse("-0.00"), "0.00");
        assert_eq!(parse(".5"), "0.5");
        assert_eq!(parse("5."), "5");
        assert_eq!(parse("+.5e+2"), "50");
        assert_eq!(parse("1.50"), "1.50");
        assert_eq!(parse("-12345678901234567890.5"), "-12345678901234567890.5");
        assert_eq!(
            parse("79228162514264337593543950335"),
            "79228162514264337593543950335"
        );
        assert_eq!(
            parse("0.0000000000000000000000000001"),
            "0.0000000000000000000000000001"
        );
        // more fractional digits than fit: rounded half away from zero
        assert_eq!(
            parse("0.00000000000000000000000000005"),
            "0.0000000000000000000000000001"
        );
        assert_eq!(
            parse("1.23456789012345678901234567891"),
            "1.2345678901234567890123456789"
        );
    }

    #[test]
    fn text_input_errors() {
        for bad in ["", "1e", "e5", ".", "abc", "1.2.3", "1 2", "--1", "nan x"] {
            let e = parse_numeric(bad).unwrap_err();
            assert_eq!(e.code.0, "22P02", "{bad:?}");
            assert_eq!(
                e.message,
                format!("invalid input syntax for type numeric: \"{bad}\"")
            );
        }
        assert_eq!(parse_numeric("NaN").unwrap_err().code.0, "0A000");
        assert_eq!(parse_numeric(" -Infinity ").unwrap_err().code.0, "0A000");
        let e = parse_numeric("79228162514264337593543950336").unwrap_err();
        assert_eq!(
            (e.code.0, e.message.as_str()),
            ("22003", "value overflows numeric format")
        );
        assert_eq!(parse_numeric("1e100").unwrap_err().code.0, "22003");
        assert_eq!(parse_numeric("1e99999999999").unwrap_err().code.0, "22003");
    }

    #[test]
    fn typmod_rounds_and_checks_precision() {
        let t = |s: &str, p, sc| apply_typmod(dec(s), p, sc).map(|d| d.to_string());
        assert_eq!(t("1.5", 1, 0).unwrap(), "2");
        assert_eq!(t("0.5", 1, 0).unwrap(), "1");
        assert_eq!(t("-2.5", 2, 0).unwrap(), "-3");
        assert_eq!(t("12.345", 4, 2).unwrap(), "12.35");
        assert_eq!(t("1.5", 5, 2).unwrap(), "1.50");
        assert_eq!(t("-0.001", 5, 2).unwrap(), "0.00");
        assert_eq!(t("999.994", 5, 2).unwrap(), "999.99");
        let e = t("999.995", 5, 2).unwrap_err();
        assert_eq!(e.code.0, "22003");
        assert_eq!(e.message, "numeric field overflow");
        assert_eq!(
            e.detail.as_deref(),
            Some(
                "A field with precision 5, scale 2 must round to an absolute value less than 10^3."
            )
        );
        let e = t("1", 2, 2).unwrap_err();
        assert_eq!(
            e.detail.as_deref(),
            Some("A field with precision 2, scale 2 must round to an absolute value less than 1.")
        );
        assert_eq!(t("0.99", 2, 2).unwrap(), "0.99");
    }

    #[test]
    fn binary_format_matches_postgres() {
        let enc = |s: &str| {
            let mut out = Vec::new();
            encode_numeric_binary(&dec(s), &mut out);
            out
        };
        // 1234.5678: ndigits 2, weight 0, sign +, dscale 4, digits 1234 5678
        assert_eq!(
            enc("1234.5678"),
            [0, 2, 0, 0, 0, 0, 0, 4, 0x04, 0xD2, 0x16, 0x2E]
        );
        // -0.01: ndigits 1, weight -1, sign -, dscale 2, digit 100
        assert_eq!(enc("-0.01"), [0, 1, 0xFF, 0xFF, 0x40, 0, 0, 2, 0, 100]);
        // 0.00: no digits, dscale 2
        assert_eq!(enc("0.00"), [0, 0, 0, 0, 0, 0, 0, 2]);
        // 10000: one digit 1 with weight 1
        assert_eq!(enc("10000"), [0, 1, 0, 1, 0, 0, 0, 0, 0, 1]);
        for s in [
            "1234.5678",
            "-0.01",
            "0.00",
            "10000",
            "1.50",
            "79228162514264337593543950335",
            "-0.0000000000000000000000000001",
        ] {
            let d = decode_numeric_binary(&enc(s)).unwrap();
            assert_eq!(d.to_string(), s);
        }
    }

    #[test]
    fn binary_input_validation() {
        let code = |b: &[u8]| decode_numeric_binary(b).unwrap_err().code.0;
        assert_eq!(code(&[0, 1, 0, 0]), "22P03");
        assert_eq!(code(&[0, 1, 0, 0, 0, 0, 0, 0]), "22P03");
        assert_eq!(code(&[0, 1, 0, 0, 0, 0, 0, 0, 0x27, 0x10]), "22P03"); // digit 10000
        assert_eq!(code(&[0, 0, 0, 0, 0x12, 0x34, 0, 0]), "22P03"); // bad sign
        assert_eq!(code(&[0, 0, 0, 0, 0, 0, 0xC0, 0]), "22P03"); // bad dscale
        assert_eq!(code(&[0, 0, 0, 0, 0, 0, 0, 0, 0]), "22P03"); // trailing byte
        assert_eq!(code(&[0, 0, 0, 0, 0xC0, 0, 0, 0]), "0A000");
        // 1.2345 sent with dscale 2 is truncated to 1.23
        let d = decode_numeric_binary(&[0, 2, 0, 0, 0, 0, 0, 2, 0, 1, 0x09, 0x29]).unwrap();
        assert_eq!(d.to_string(), "1.23");
        // weight far too large: overflow, not a panic
        assert_eq!(code(&[0, 1, 0x7F, 0xFF, 0, 0, 0, 0, 0, 1]), "22003");
        // tiny weight: rounds to zero at the largest representable scale
        let d = decode_numeric_binary(&[0, 1, 0x80, 0, 0, 0, 0x3F, 0xFF, 0, 1]).unwrap();
        assert!(d.is_zero());
    }

    #[test]
    fn arithmetic_scales_match_postgres() {
        let d = |a: &str, b: &str| div(&dec(a), &dec(b)).unwrap().to_string();
        assert_eq!(d("1", "3"), "0.33333333333333333333");
        assert_eq!(d("10", "4"), "2.5000000000000000");
        assert_eq!(d("2", "3"), "0.66666666666666666667");
        assert_eq!(d("1.000", "3"), "0.33333333333333333333");
        assert_eq!(d("100000", "3"), "33333.333333333333");
        assert_eq!(d("0.0001", "3"), "0.000033333333333333333333");
        assert_eq!(d("-7", "2"), "-3.5000000000000000");
        assert_eq!(d("0", "5"), "0.00000000000000000000");
        assert_eq!(div(&dec("1"), &dec("0.00")).unwrap_err().code.0, "22012");
        let r = |a: &str, b: &str| rem(&dec(a), &dec(b)).unwrap().to_string();
        assert_eq!(r("7.5", "2"), "1.5");
        assert_eq!(r("-7.5", "2"), "-1.5");
        assert_eq!(r("7", "2.25"), "0.25");
        assert_eq!(rem(&dec("1"), &dec("0")).unwrap_err().code.0, "22012");
        assert_eq!(mul(&dec("1.50"), &dec("2.0")).unwrap().to_string(), "3.000");
        assert_eq!(add(&dec("1.5"), &dec("2.25")).unwrap().to_string(), "3.75");
        assert_eq!(sub(&dec("1.50"), &dec("1.5")).unwrap().to_string(), "0.00");
        assert_eq!(mul(&dec("-1"), &dec("0.0")).unwrap().to_string(), "0.0");
        let max = Decimal::MAX;
        assert_eq!(add(&max, &Decimal::ONE).unwrap_err().code.0, "22003");
    }

    #[test]
    fn conversions() {
        assert_eq!(numeric_to_f64(&dec("0.1")), 0.1);
        assert_eq!(
            numeric_to_f64(&dec("1.2345678901234567890123")),
            1.2345678901234567
        );
        assert_eq!(numeric_to_f32(&dec("0.1")), 0.1f32);
        let f = |v: f64, sig| float_to_numeric(v, sig).unwrap().to_string();
        assert_eq!(f(1.5, 15), "1.5");
        assert_eq!(f(0.1f32 as f64, 6), "0.1");
        assert_eq!(f(1e20, 15), "100000000000000000000");
        assert_eq!(f(1.234_567_890_123_456_7, 15), "1.23456789012346");
        assert_eq!(f(1e-20, 15), "0.00000000000000000001");
        assert_eq!(f(-0.0, 15), "0");
        assert_eq!(float_to_numeric(f64::NAN, 15).unwrap_err().code.0, "0A000");
        assert_eq!(float_to_numeric(1e30, 15).unwrap_err().code.0, "22003");
        assert_eq!(round_to_integer(&dec("2.5")), 3);
        assert_eq!(round_to_integer(&dec("-2.5")), -3);
        assert_eq!(round_to_integer(&dec("2.49")), 2);
        assert_eq!(round_to_integer(&dec("-0.4")), 0);
    }
}
