//! float4/float8 text input and output, matching PostgreSQL's `float4in`/`float8in` and
//! the shortest-exact output used when `extra_float_digits > 0`.

use super::shortest::{shortest_f32, shortest_f64};
use crate::err;
use crate::error::Result;

/// C `isspace` in the "C" locale, which PostgreSQL's input functions use.
pub(crate) fn is_pg_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// Strip leading and trailing `isspace` characters.
pub(crate) fn trim_pg(s: &str) -> &str {
    s.trim_matches(is_pg_space)
}

/// The parts of a decimal floating-point literal after whitespace trimming, or `None` when
/// it is not one. Returns whether any mantissa digit is non-zero (to detect underflow).
fn float_literal_nonzero(s: &str) -> Option<bool> {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let rest = &s[i..];
    let lower = rest.to_ascii_lowercase();
    if matches!(lower.as_str(), "inf" | "infinity" | "nan") {
        return Some(false);
    }
    let (mut digits, mut nonzero, mut seen_point) = (0usize, false, false);
    while i < b.len() {
        match b[i] {
            b'0'..=b'9' => {
                digits += 1;
                nonzero |= b[i] != b'0';
            }
            b'.' if !seen_point => seen_point = true,
            _ => break,
        }
        i += 1;
    }
    if digits == 0 {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
    }
    (i == b.len()).then_some(nonzero)
}

/// `float8in`: parse a double precision value (22P02 on bad syntax, 22003 when out of range).
pub fn parse_f64(text: &str) -> Result<f64> {
    let s = trim_pg(text);
    let nonzero = float_literal_nonzero(s).ok_or_else(|| {
        err!(
            INVALID_TEXT_REPRESENTATION,
            "invalid input syntax for type double precision: \"{text}\""
        )
    })?;
    let v: f64 = s.parse().map_err(|_| {
        err!(
            INVALID_TEXT_REPRESENTATION,
            "invalid input syntax for type double precision: \"{text}\""
        )
    })?;
    let literal_inf = s.to_ascii_lowercase().contains("inf");
    if (v.is_infinite() && !literal_inf) || (v == 0.0 && nonzero) {
        return Err(err!(
            NUMERIC_VALUE_OUT_OF_RANGE,
            "\"{text}\" is out of range for type double precision"
        ));
    }
    Ok(v)
}

/// `float4in`: parse a real value, rounding the decimal input directly to single precision.
pub fn parse_f32(text: &str) -> Result<f32> {
    let s = trim_pg(text);
    let nonzero = float_literal_nonzero(s).ok_or_else(|| {
        err!(
            INVALID_TEXT_REPRESENTATION,
            "invalid input syntax for type real: \"{text}\""
        )
    })?;
    let v: f32 = s.parse().map_err(|_| {
        err!(
            INVALID_TEXT_REPRESENTATION,
            "invalid input syntax for type real: \"{text}\""
        )
    })?;
    let literal_inf = s.to_ascii_lowercase().contains("inf");
    if (v.is_infinite() && !literal_inf) || (v == 0.0 && nonzero) {
        return Err(err!(
            NUMERIC_VALUE_OUT_OF_RANGE,
            "\"{text}\" is out of range for type real"
        ));
    }
    Ok(v)
}

/// Write digits `d1d2...` (value `d1.d2... * 10^exp`) in PostgreSQL's layout: fixed
/// notation when the decimal exponent is in `[-4, fixed_limit)`, otherwise `d.ddde+XX`.
fn write_digits(digits: &[u8], exp: i32, negative: bool, fixed_limit: i32, out: &mut String) {
    let digits: String = digits.iter().map(|d| (b'0' + d) as char).collect();
    if negative {
        out.push('-');
    }
    if (-4..fixed_limit).contains(&exp) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', int_len - digits.len()));
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.unsigned_abs()));
    }
}

fn write_special(v: f64, out: &mut String) -> bool {
    if v.is_nan() {
        out.push_str("NaN");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "Infinity" } else { "-Infinity" });
    } else if v == 0.0 {
        out.push_str(if v.is_sign_negative() { "-0" } else { "0" });
    } else {
        return false;
    }
    true
}

/// `float8out` with `extra_float_digits = 1`.
pub fn format_f64(v: f64, out: &mut String) {
    if !write_special(v, out) {
        let (digits, exp) = shortest_f64(v);
        write_digits(&digits, exp, v < 0.0, 15, out);
    }
}

/// `float4out` with `extra_float_digits = 1`.
pub fn format_f32(v: f32, out: &mut String) {
    if !write_special(v as f64, out) {
        let (digits, exp) = shortest_f32(v);
        write_digits(&digits, exp, v < 0.0, 6, out);
    }
}

/// `v` rounded to `sig` significant digits as C's `%.{sig}g` prints it, returned as
/// `(negative, digits without trailing zeros, exp10)` with `|v| ≈ digits * 10^exp10`.
/// Float → numeric casts go through `%.15g` (float8) or `%.6g` (float4) in PostgreSQL.
pub(crate) fn rounded_digits(v: f64, sig: usize) -> (bool, Vec<u8>, i64) {
    let s = format!("{:.*e}", sig.saturating_sub(1), v.abs());
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let mut digits: Vec<u8> = mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|d| d - b'0')
        .collect();
    while digits.len() > 1 && digits.last() == Some(&0) {
        digits.pop();
    }
    // value = d1.d2d3... * 10^exp = digits * 10^(exp - (len - 1))
    let exp10 = exp - (digits.len() as i64 - 1);
    (v.is_sign_negative() && v != 0.0, digits, exp10)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f8(v: f64) -> String {
        let mut s = String::new();
        format_f64(v, &mut s);
        s
    }

    fn f4(v: f32) -> String {
        let mut s = String::new();
        format_f32(v, &mut s);
        s
    }

    #[test]
    fn float8_output_matches_postgres() {
        let cases = [
            (1.5, "1.5"),
            (100.0, "100"),
            (1e15, "1e+15"),
            (1e16, "1e+16"),
            (1e14, "100000000000000"),
            (123456789012345.0, "123456789012345"),
            (1234567890123456.0, "1.234567890123456e+15"),
            (0.0001, "0.0001"),
            (0.00012345, "0.00012345"),
            (1e-5, "1e-05"),
            (1.2345678901234568e17, "1.2345678901234568e+17"),
            (0.1, "0.1"),
            (-2.5, "-2.5"),
            (1e100, "1e+100"),
            (1e-310, "1e-310"),
            (f64::MAX, "1.7976931348623157e+308"),
            (0.1 + 0.2, "0.30000000000000004"),
            (0.0, "0"),
            (-0.0, "-0"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (v, want) in cases {
            assert_eq!(f8(v), want, "float8 {v:e}");
        }
    }

    #[test]
    fn float4_output_matches_postgres() {
        let cases = [
            (1e6f32, "1e+06"),
            (123456.0, "123456"),
            (1234567.0, "1.234567e+06"),
            (0.1, "0.1"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (3.4028235e38, "3.4028235e+38"),
            (-1.5, "-1.5"),
            (-0.0, "-0"),
            (f32::NAN, "NaN"),
            (351_691.62, "351691.62"),
            (2_887_380.2, "2.8873802e+06"),
            (-99653984.0, "-9.9653984e+07"),
            (16777215.0, "1.6777215e+07"),
            (1e-45, "1e-45"),
        ];
        for (v, want) in cases {
            assert_eq!(f4(v), want, "float4 {v:e}");
        }
    }

    #[test]
    fn float_input() {
        assert_eq!(parse_f64(" 1.5e3 ").unwrap(), 1500.0);
        assert_eq!(parse_f64("-inf").unwrap(), f64::NEG_INFINITY);
        assert_eq!(parse_f64("+Infinity").unwrap(), f64::INFINITY);
        assert!(parse_f64("NaN").unwrap().is_nan());
        assert_eq!(parse_f64(".5").unwrap(), 0.5);
        assert_eq!(parse_f64("5.").unwrap(), 5.0);
        assert_eq!(parse_f64("1e-310").unwrap(), 1e-310);
        assert_eq!(parse_f64("-0").unwrap().to_bits(), (-0.0f64).to_bits());
        for bad in [
            "", " ", "abc", "1e", "e5", ".", "1.5x", "1 2", "infinit", "--1",
        ] {
            let e = parse_f64(bad).unwrap_err();
            assert_eq!(e.code.0, "22P02", "{bad:?}");
            assert_eq!(
                e.message,
                format!("invalid input syntax for type double precision: \"{bad}\"")
            );
        }
        for big in ["1e400", "-1e400", "1e-400"] {
            let e = parse_f64(big).unwrap_err();
            assert_eq!(e.code.0, "22003");
            assert_eq!(
                e.message,
                format!("\"{big}\" is out of range for type double precision")
            );
        }
        assert_eq!(parse_f32("0.1").unwrap(), 0.1f32);
        assert_eq!(
            parse_f32("1e39").unwrap_err().message,
            "\"1e39\" is out of range for type real"
        );
        assert_eq!(parse_f32("1e-50").unwrap_err().code.0, "22003");
        assert_eq!(
            parse_f32("x").unwrap_err().message,
            "invalid input syntax for type real: \"x\""
        );
    }

    #[test]
    fn rounded_digits_like_printf_g() {
        assert_eq!(rounded_digits(1.5, 15), (false, vec![1, 5], -1));
        assert_eq!(rounded_digits(100.0, 15), (false, vec![1], 2));
        assert_eq!(rounded_digits(0.1f32 as f64, 6), (false, vec![1], -1));
        assert_eq!(
            rounded_digits(1.234_567_890_123_456_7, 15),
            (
                false,
                vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 6],
                -14
            )
        );
        assert_eq!(rounded_digits(-2.0, 15), (true, vec![2], 0));
        assert_eq!(rounded_digits(0.0, 15), (false, vec![0], 0));
    }
}
