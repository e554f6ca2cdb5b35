//! `jsonb`: a JSON document held as a tree, as PostgreSQL's jsonb holds it.
//!
//! Invariants, on every [`Jsonb`] value however it was made (parsed, built, changed):
//! - an object's keys are unique and in jsonb's storage order: shorter keys first, keys of
//!   one length by their bytes (a duplicate key in the input keeps its last value);
//! - numbers are `numeric` values (`1.50` keeps its scale; `1e2` is `100`);
//! - no string holds U+0000 (PostgreSQL's text cannot);
//! - nesting is at most [`MAX_DEPTH`] containers deep, so every walk over a document is
//!   bounded, and every document can be written out and read back.
//!
//! Ordering is PostgreSQL's jsonb btree order (`compareJsonbContainers`): by kind
//! (null < string < number < boolean < array < object, containers after scalars), arrays
//! by length and then element by element, objects by their number of pairs and then pair
//! by pair in storage order. A scalar at the top of a document is PostgreSQL's
//! one-element "raw scalar" array: so `'[]'` sorts before `'null'` at the top level.

use std::cmp::Ordering;

use rust_decimal::Decimal;

use super::numeric::{fix_zero, parse_numeric};
use crate::err;
use crate::error::{Error, Result};

/// The most containers one document may nest. Documents are parsed with this limit, and
/// functions that make deeper documents fail with 54001, so recursion over a document
/// is bounded.
pub const MAX_DEPTH: usize = 100;

#[derive(Clone, Debug)]
pub enum Jsonb {
    Null,
    Bool(bool),
    Number(Decimal),
    String(String),
    Array(Vec<Jsonb>),
    /// Pairs in storage order, keys unique (see the module comment).
    Object(Vec<(String, Jsonb)>),
}

impl PartialEq for Jsonb {
    fn eq(&self, other: &Self) -> bool {
        compare(self, other) == Ordering::Equal
    }
}

/// jsonb's key order: shorter first, then by bytes.
pub fn key_order(a: &str, b: &str) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

fn too_deep() -> Error {
    err!(STATEMENT_TOO_COMPLEX, "stack depth limit exceeded").with_hint(format!(
        "A jsonb value may nest at most {MAX_DEPTH} arrays and objects."
    ))
}

impl Jsonb {
    /// An object from pairs in any order; a repeated key keeps its last value.
    pub fn object(mut pairs: Vec<(String, Jsonb)>) -> Jsonb {
        // A stable sort keeps repeated keys in input order; the last one wins.
        pairs.sort_by(|a, b| key_order(&a.0, &b.0));
        let mut out: Vec<(String, Jsonb)> = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            match out.last_mut() {
                Some(last) if last.0 == k => last.1 = v,
                _ => out.push((k, v)),
            }
        }
        Jsonb::Object(out)
    }

    /// How many containers nest in this value (0 for a scalar).
    pub fn depth(&self) -> usize {
        // Iterative: a value being checked may be deeper than the limit.
        let mut deepest = 0;
        let mut stack: Vec<(&Jsonb, usize)> = vec![(self, 0)];
        while let Some((v, d)) = stack.pop() {
            match v {
                Jsonb::Array(items) => {
                    deepest = deepest.max(d + 1);
                    stack.extend(items.iter().map(|i| (i, d + 1)));
                }
                Jsonb::Object(pairs) => {
                    deepest = deepest.max(d + 1);
                    stack.extend(pairs.iter().map(|(_, i)| (i, d + 1)));
                }
                _ => {}
            }
        }
        deepest
    }

    /// This value, if it nests no deeper than [`MAX_DEPTH`] (54001 otherwise).
    pub fn checked(self) -> Result<Jsonb> {
        if self.depth() > MAX_DEPTH {
            return Err(too_deep());
        }
        Ok(self)
    }

    pub fn is_scalar(&self) -> bool {
        !matches!(self, Jsonb::Array(_) | Jsonb::Object(_))
    }

    /// `jsonb_typeof`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Jsonb::Null => "null",
            Jsonb::Bool(_) => "boolean",
            Jsonb::Number(_) => "number",
            Jsonb::String(_) => "string",
            Jsonb::Array(_) => "array",
            Jsonb::Object(_) => "object",
        }
    }

    /// The value of `key` in an object.
    pub fn get(&self, key: &str) -> Option<&Jsonb> {
        let Jsonb::Object(pairs) = self else {
            return None;
        };
        pairs
            .binary_search_by(|(k, _)| key_order(k, key))
            .ok()
            .map(|i| &pairs[i].1)
    }

    /// The elements of an array; a scalar at the top is a one-element array (as in
    /// PostgreSQL, whose `'1'::jsonb -> 0` is `1`).
    pub fn top_elements(&self) -> Option<&[Jsonb]> {
        match self {
            Jsonb::Array(items) => Some(items),
            Jsonb::Object(_) => None,
            scalar => Some(std::slice::from_ref(scalar)),
        }
    }

    /// Element `i` of an array (negative from the end).
    pub fn element(&self, i: i64) -> Option<&Jsonb> {
        let items = self.top_elements()?;
        index(items.len(), i).map(|i| &items[i])
    }

    /// The value at `path` (`#>`): keys into objects, integers into arrays.
    pub fn at_path<S: AsRef<str>>(&self, path: &[S]) -> Option<&Jsonb> {
        let mut v = self;
        for step in path {
            let step = step.as_ref();
            v = match v {
                Jsonb::Object(_) => v.get(step)?,
                Jsonb::Array(_) => v.element(parse_index(step)?)?,
                // Nothing is inside a scalar (even at the top, unlike `->`).
                _ => return None,
            };
        }
        Some(v)
    }

    /// The value as text, as `->>` and `jsonb_each_text` give it: a string's contents,
    /// another value's JSON text, JSON null as SQL NULL.
    pub fn as_text(&self) -> Option<String> {
        match self {
            Jsonb::Null => None,
            Jsonb::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        }
    }

    /// `?`: `key` is a key of the object, or a string element of the array.
    pub fn has_key(&self, key: &str) -> bool {
        match self {
            Jsonb::Object(_) => self.get(key).is_some(),
            _ => self.top_elements().is_some_and(|items| {
                items
                    .iter()
                    .any(|i| matches!(i, Jsonb::String(s) if s == key))
            }),
        }
    }

    /// `jsonb_pretty`: four spaces an indent, one value a line (an empty container's
    /// brackets too, on lines of their own, as PostgreSQL writes them).
    pub fn pretty(&self) -> String {
        let mut out = String::new();
        self.write_pretty(0, &mut out);
        out
    }

    fn write_pretty(&self, indent: usize, out: &mut String) {
        let pad = |n: usize, out: &mut String| out.extend(std::iter::repeat_n(' ', n * 4));
        match self {
            Jsonb::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    out.push_str(if i == 0 { "\n" } else { ",\n" });
                    pad(indent + 1, out);
                    item.write_pretty(indent + 1, out);
                }
                out.push('\n');
                pad(indent, out);
                out.push(']');
            }
            Jsonb::Object(pairs) => {
                out.push('{');
                for (i, (k, v)) in pairs.iter().enumerate() {
                    out.push_str(if i == 0 { "\n" } else { ",\n" });
                    pad(indent + 1, out);
                    write_string(k, out);
                    out.push_str(": ");
                    v.write_pretty(indent + 1, out);
                }
                out.push('\n');
                pad(indent, out);
                out.push('}');
            }
            other => other.write(out),
        }
    }

    /// The compact text form PostgreSQL's `jsonb_out` writes.
    pub fn write(&self, out: &mut String) {
        match self {
            Jsonb::Null => out.push_str("null"),
            Jsonb::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Jsonb::Number(d) => out.push_str(&fix_zero(*d).to_string()),
            Jsonb::String(s) => write_string(s, out),
            Jsonb::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Jsonb::Object(pairs) => {
                out.push('{');
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_string(k, out);
                    out.push_str(": ");
                    v.write(out);
                }
                out.push('}');
            }
        }
    }

    /// `jsonb_strip_nulls`: object fields whose value is null removed, at every level.
    pub fn strip_nulls(&self) -> Jsonb {
        match self {
            Jsonb::Array(items) => Jsonb::Array(items.iter().map(Jsonb::strip_nulls).collect()),
            Jsonb::Object(pairs) => Jsonb::Object(
                pairs
                    .iter()
                    .filter(|(_, v)| !matches!(v, Jsonb::Null))
                    .map(|(k, v)| (k.clone(), v.strip_nulls()))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

impl std::fmt::Display for Jsonb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = String::new();
        self.write(&mut s);
        f.write_str(&s)
    }
}

impl std::hash::Hash for Jsonb {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            Jsonb::Null => {}
            Jsonb::Bool(b) => b.hash(state),
            // Equal numbers of different scales hash alike.
            Jsonb::Number(d) => d.normalize().hash(state),
            Jsonb::String(s) => s.hash(state),
            Jsonb::Array(items) => items.hash(state),
            Jsonb::Object(pairs) => pairs.hash(state),
        }
    }
}

/// A JSON string literal: `"`, `\` and control characters escaped as PostgreSQL's
/// `escape_json` does.
pub fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// An array position: `i` from the start, or from the end when negative.
fn index(len: usize, i: i64) -> Option<usize> {
    let i = if i < 0 { len as i64 + i } else { i };
    (0..len as i64).contains(&i).then_some(i as usize)
}

/// A path step used on an array: an integer (an int4, as PostgreSQL's), or nothing.
fn parse_index(step: &str) -> Option<i64> {
    step.trim_start().parse::<i32>().ok().map(i64::from)
}

/// A NULL in a path, reached at its 1-based `position`.
fn path_null(position: usize) -> Error {
    err!(
        NULL_VALUE_NOT_ALLOWED,
        "path element at position {} is null",
        position
    )
}

// ---------------------------------------------------------------------------------------
// Input

/// `jsonb_in`: parse JSON text (22P02 with PostgreSQL's message on bad input).
pub fn parse(text: &str) -> Result<Jsonb> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(syntax_error)?;
    from_serde(value, 0)
}

fn syntax_error(e: serde_json::Error) -> Error {
    if e.to_string().starts_with("recursion limit exceeded") {
        return too_deep();
    }
    let detail = if e.is_eof() {
        "The input string ended unexpectedly.".to_string()
    } else {
        // serde's message names the problem and its place: "expected value at line 1
        // column 2" reads as PostgreSQL's "Token ... is invalid" does.
        let msg = e.to_string();
        let mut chars = msg.chars();
        // (serde's messages start in lower case.)
        match chars.next() {
            Some(c) => format!("{}{}.", c.to_uppercase(), chars.as_str()),
            None => msg,
        }
    };
    err!(
        INVALID_TEXT_REPRESENTATION,
        "invalid input syntax for type json"
    )
    .with_detail(detail)
}

fn from_serde(v: serde_json::Value, depth: usize) -> Result<Jsonb> {
    use serde_json::Value as S;
    Ok(match v {
        S::Null => Jsonb::Null,
        S::Bool(b) => Jsonb::Bool(b),
        S::Number(n) => Jsonb::Number(parse_numeric(&n.to_string())?),
        S::String(s) => Jsonb::String(checked_text(s)?),
        S::Array(items) => {
            if depth >= MAX_DEPTH {
                return Err(too_deep());
            }
            Jsonb::Array(
                items
                    .into_iter()
                    .map(|i| from_serde(i, depth + 1))
                    .collect::<Result<_>>()?,
            )
        }
        S::Object(map) => {
            if depth >= MAX_DEPTH {
                return Err(too_deep());
            }
            // serde's map keeps the last of repeated keys, as jsonb does.
            let mut pairs = Vec::with_capacity(map.len());
            for (k, v) in map {
                pairs.push((checked_text(k)?, from_serde(v, depth + 1)?));
            }
            Jsonb::object(pairs)
        }
    })
}

/// A string from JSON input: PostgreSQL's text cannot hold U+0000.
fn checked_text(s: String) -> Result<String> {
    if s.contains('\0') {
        return Err(err!(
            UNTRANSLATABLE_CHARACTER,
            "unsupported Unicode escape sequence"
        )
        .with_detail("\\u0000 cannot be converted to text."));
    }
    Ok(s)
}

// ---------------------------------------------------------------------------------------
// Ordering

/// The kinds' order in PostgreSQL's `JsonbValue` type numbers.
fn kind_rank(v: &Jsonb) -> u8 {
    match v {
        Jsonb::Null => 0,
        Jsonb::String(_) => 1,
        Jsonb::Number(_) => 2,
        Jsonb::Bool(_) => 3,
        Jsonb::Array(_) => 4,
        Jsonb::Object(_) => 5,
    }
}

/// jsonb's btree order of two documents (see the module comment).
pub fn compare(a: &Jsonb, b: &Jsonb) -> Ordering {
    // At the top, a scalar is a one-element "raw scalar" array: by length first, then
    // a raw scalar before a real array, then element by element.
    match (a.is_scalar(), b.is_scalar()) {
        (false, false) | (true, true) => compare_nested(a, b),
        (true, false) => match b {
            Jsonb::Array(items) => 1usize.cmp(&items.len()).then(Ordering::Less),
            _ => Ordering::Less,
        },
        (false, true) => compare(b, a).reverse(),
    }
}

fn compare_nested(a: &Jsonb, b: &Jsonb) -> Ordering {
    let by_kind = kind_rank(a).cmp(&kind_rank(b));
    if by_kind != Ordering::Equal {
        return by_kind;
    }
    match (a, b) {
        (Jsonb::Null, Jsonb::Null) => Ordering::Equal,
        (Jsonb::String(x), Jsonb::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Jsonb::Number(x), Jsonb::Number(y)) => x.cmp(y),
        (Jsonb::Bool(x), Jsonb::Bool(y)) => x.cmp(y),
        (Jsonb::Array(x), Jsonb::Array(y)) => x.len().cmp(&y.len()).then_with(|| {
            x.iter()
                .zip(y)
                .map(|(a, b)| compare_nested(a, b))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        }),
        (Jsonb::Object(x), Jsonb::Object(y)) => x.len().cmp(&y.len()).then_with(|| {
            x.iter()
                .zip(y)
                .map(|((ka, va), (kb, vb))| {
                    ka.as_bytes()
                        .cmp(kb.as_bytes())
                        .then_with(|| compare_nested(va, vb))
                })
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        }),
        _ => Ordering::Equal,
    }
}

/// The order-preserving key bytes of a document (for indexes, keys, sorting by bytes):
/// byte order of two documents' keys is [`compare`]'s order.
pub fn encode_key(v: &Jsonb, numeric_key: fn(&Decimal, &mut Vec<u8>), out: &mut Vec<u8>) {
    if v.is_scalar() {
        // The raw-scalar array of one: count 1, raw before real arrays.
        out.push(4);
        out.extend_from_slice(&1u32.to_be_bytes());
        out.push(0);
        encode_key_nested(v, numeric_key, out);
    } else {
        encode_key_nested(v, numeric_key, out);
    }
}

fn encode_key_nested(v: &Jsonb, numeric_key: fn(&Decimal, &mut Vec<u8>), out: &mut Vec<u8>) {
    out.push(kind_rank(v));
    match v {
        Jsonb::Null => {}
        Jsonb::String(s) => escape_key_string(s, out),
        Jsonb::Number(d) => numeric_key(d, out),
        Jsonb::Bool(b) => out.push(*b as u8),
        Jsonb::Array(items) => {
            out.extend_from_slice(&(items.len() as u32).to_be_bytes());
            out.push(1);
            for i in items {
                encode_key_nested(i, numeric_key, out);
            }
        }
        Jsonb::Object(pairs) => {
            out.extend_from_slice(&(pairs.len() as u32).to_be_bytes());
            for (k, v) in pairs {
                escape_key_string(k, out);
                encode_key_nested(v, numeric_key, out);
            }
        }
    }
}

/// A string's bytes, `0x00` as `0x00 0xFF`, ended by `0x00 0x00`: prefix-free and in
/// byte order.
fn escape_key_string(s: &str, out: &mut Vec<u8>) {
    for &b in s.as_bytes() {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

// ---------------------------------------------------------------------------------------
// Containment

/// `a @> b`: PostgreSQL's `JsonbDeepContains` at the top level.
pub fn contains(a: &Jsonb, b: &Jsonb) -> bool {
    match (a, b) {
        (Jsonb::Object(_), Jsonb::Object(_)) => contains_nested(a, b),
        (Jsonb::Object(_), _) | (_, Jsonb::Object(_)) => false,
        // A raw scalar contains only a raw scalar; an array may contain a raw scalar.
        _ if a.is_scalar() && !b.is_scalar() => false,
        _ => {
            let (Some(x), Some(y)) = (a.top_elements(), b.top_elements()) else {
                return false;
            };
            array_contains(x, y)
        }
    }
}

fn contains_nested(a: &Jsonb, b: &Jsonb) -> bool {
    match (a, b) {
        (Jsonb::Object(_), Jsonb::Object(want)) => want.iter().all(|(k, wv)| match a.get(k) {
            Some(av) if av.is_scalar() && wv.is_scalar() => compare_nested(av, wv).is_eq(),
            Some(av) => kind_rank(av) == kind_rank(wv) && contains_nested(av, wv),
            None => false,
        }),
        (Jsonb::Array(x), Jsonb::Array(y)) => array_contains(x, y),
        _ => false,
    }
}

/// Every element of `want` is in `have`: a scalar equal to one of `have`'s, a container
/// contained in one of `have`'s containers of its kind.
fn array_contains(have: &[Jsonb], want: &[Jsonb]) -> bool {
    want.iter().all(|w| {
        if w.is_scalar() {
            have.iter()
                .any(|h| h.is_scalar() && compare_nested(h, w).is_eq())
        } else {
            have.iter()
                .any(|h| kind_rank(h) == kind_rank(w) && contains_nested(h, w))
        }
    })
}

// ---------------------------------------------------------------------------------------
// Changes

/// `a || b`: objects merge (b's values win), otherwise the arrays (a scalar is an
/// array of one, an object an element) are joined.
pub fn concat(a: &Jsonb, b: &Jsonb) -> Result<Jsonb> {
    let out = match (a, b) {
        (Jsonb::Object(x), Jsonb::Object(y)) => {
            let mut pairs = x.clone();
            pairs.extend(y.iter().cloned());
            Jsonb::object(pairs)
        }
        _ => {
            let as_items = |v: &Jsonb| match v {
                Jsonb::Array(items) => items.clone(),
                other => vec![other.clone()],
            };
            let mut items = as_items(a);
            items.extend(as_items(b));
            Jsonb::Array(items)
        }
    };
    out.checked()
}

fn delete_from_scalar() -> Error {
    err!(INVALID_PARAMETER_VALUE, "cannot delete from scalar")
}

/// `a - key`: the object without the key, or the array without string elements equal
/// to it.
pub fn delete_key(a: &Jsonb, key: &str) -> Result<Jsonb> {
    delete_keys(a, &[key])
}

/// `a - keys`.
pub fn delete_keys<S: AsRef<str>>(a: &Jsonb, keys: &[S]) -> Result<Jsonb> {
    let gone = |k: &str| keys.iter().any(|g| g.as_ref() == k);
    Ok(match a {
        Jsonb::Object(pairs) => {
            Jsonb::Object(pairs.iter().filter(|(k, _)| !gone(k)).cloned().collect())
        }
        Jsonb::Array(items) => Jsonb::Array(
            items
                .iter()
                .filter(|i| !matches!(i, Jsonb::String(s) if gone(s)))
                .cloned()
                .collect(),
        ),
        _ => return Err(delete_from_scalar()),
    })
}

/// `a - i`: the array without element `i` (negative from the end).
pub fn delete_index(a: &Jsonb, i: i64) -> Result<Jsonb> {
    match a {
        Jsonb::Array(items) => {
            let mut items = items.clone();
            if let Some(i) = index(items.len(), i) {
                items.remove(i);
            }
            Ok(Jsonb::Array(items))
        }
        Jsonb::Object(_) => Err(err!(
            INVALID_PARAMETER_VALUE,
            "cannot delete from object using integer index"
        )),
        _ => Err(delete_from_scalar()),
    }
}

fn path_not_integer(position: usize, step: &str) -> Error {
    err!(
        INVALID_TEXT_REPRESENTATION,
        "path element at position {} is not an integer: \"{}\"",
        position,
        step
    )
}

/// `a #- path`: the document without the value at `path` (a NULL step is an error
/// only where the walk reaches it, as in PostgreSQL).
pub fn delete_path<S: AsRef<str>>(a: &Jsonb, path: &[Option<S>]) -> Result<Jsonb> {
    if a.is_scalar() {
        return Err(err!(
            INVALID_PARAMETER_VALUE,
            "cannot delete path in scalar"
        ));
    }
    let mut out = a.clone();
    if !path.is_empty() && !is_empty_container(a) {
        remove_at(&mut out, path, 1)?;
    }
    Ok(out)
}

fn is_empty_container(v: &Jsonb) -> bool {
    match v {
        Jsonb::Array(items) => items.is_empty(),
        Jsonb::Object(pairs) => pairs.is_empty(),
        _ => false,
    }
}

fn remove_at<S: AsRef<str>>(v: &mut Jsonb, path: &[Option<S>], position: usize) -> Result<()> {
    let Some(step) = path[0].as_ref().map(AsRef::as_ref) else {
        return Err(path_null(position));
    };
    let last = path.len() == 1;
    match v {
        Jsonb::Object(pairs) => {
            if let Ok(i) = pairs.binary_search_by(|(k, _)| key_order(k, step)) {
                if last {
                    pairs.remove(i);
                } else {
                    remove_at(&mut pairs[i].1, &path[1..], position + 1)?;
                }
            }
        }
        Jsonb::Array(items) => {
            let Some(i) = parse_index(step) else {
                return Err(path_not_integer(position, step));
            };
            if let Some(i) = index(items.len(), i) {
                if last {
                    items.remove(i);
                } else {
                    remove_at(&mut items[i], &path[1..], position + 1)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Where `jsonb_set` and `jsonb_insert` put the new value.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum SetMode {
    /// `jsonb_set`: replace what is there; add a missing last step when asked.
    Replace { create_missing: bool },
    /// `jsonb_insert`: add before (or after) the array element; add a missing key.
    Insert { after: bool },
}

/// `jsonb_set(a, path, new, create_missing)` and `jsonb_insert(a, path, new, after)`.
pub fn set_path<S: AsRef<str>>(
    a: &Jsonb,
    path: &[Option<S>],
    new: &Jsonb,
    mode: SetMode,
) -> Result<Jsonb> {
    if a.is_scalar() {
        return Err(err!(INVALID_PARAMETER_VALUE, "cannot set path in scalar"));
    }
    let mut out = a.clone();
    let unchanged = is_empty_container(a)
        && mode
            == (SetMode::Replace {
                create_missing: false,
            });
    if !path.is_empty() && !unchanged {
        set_at(&mut out, path, new, mode, 1)?;
    }
    out.checked()
}

fn set_at<S: AsRef<str>>(
    v: &mut Jsonb,
    path: &[Option<S>],
    new: &Jsonb,
    mode: SetMode,
    position: usize,
) -> Result<()> {
    let Some(step) = path[0].as_ref().map(AsRef::as_ref) else {
        return Err(path_null(position));
    };
    let last = path.len() == 1;
    match v {
        Jsonb::Object(pairs) => match pairs.binary_search_by(|(k, _)| key_order(k, step)) {
            Ok(i) if last => match mode {
                SetMode::Replace { .. } => pairs[i].1 = new.clone(),
                SetMode::Insert { .. } => {
                    return Err(err!(INVALID_PARAMETER_VALUE, "cannot replace existing key")
                        .with_hint("Try using the function jsonb_set to replace key value."))
                }
            },
            Ok(i) => set_at(&mut pairs[i].1, &path[1..], new, mode, position + 1)?,
            Err(i)
                if last
                    && mode
                        != (SetMode::Replace {
                            create_missing: false,
                        }) =>
            {
                pairs.insert(i, (step.to_string(), new.clone()))
            }
            Err(_) => {}
        },
        Jsonb::Array(items) => {
            let Some(i) = parse_index(step) else {
                return Err(path_not_integer(position, step));
            };
            let len = items.len() as i64;
            match index(items.len(), i) {
                Some(at) if last => match mode {
                    SetMode::Replace { .. } => items[at] = new.clone(),
                    SetMode::Insert { after } => items.insert(at + after as usize, new.clone()),
                },
                Some(at) => set_at(&mut items[at], &path[1..], new, mode, position + 1)?,
                // Past either end: added at that end.
                None if last
                    && mode
                        != (SetMode::Replace {
                            create_missing: false,
                        }) =>
                {
                    if i < 0 && i < -len {
                        items.insert(0, new.clone())
                    } else {
                        items.push(new.clone())
                    }
                }
                None => {}
            }
        }
        _ => {}
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Casts to SQL types

/// The name `jsonb` casts use for a value's kind ("cannot cast jsonb string to ...").
pub fn cast_kind(v: &Jsonb) -> &'static str {
    match v {
        Jsonb::Null => "null",
        Jsonb::Bool(_) => "boolean",
        Jsonb::Number(_) => "numeric",
        Jsonb::String(_) => "string",
        Jsonb::Array(_) => "array",
        Jsonb::Object(_) => "object",
    }
}

/// The error of a cast of `v` to `type_name` that its kind does not allow.
pub fn cast_error(v: &Jsonb, type_name: &str) -> Error {
    err!(
        INVALID_PARAMETER_VALUE,
        "cannot cast jsonb {} to type {}",
        cast_kind(v),
        type_name
    )
}
