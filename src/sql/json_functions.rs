//! The jsonb operators and functions, over [`crate::types::Jsonb`] documents. The binder
//! (`bind/json.rs`) chooses among them by the operands' types; here they are evaluated.
//! All are strict (NULL in, NULL out) but the builders, which make JSON nulls of NULLs.

use std::sync::Arc;

use crate::error::{Error, Result, SqlState};
use crate::types::jsonb::{self, Jsonb, SetMode};
use crate::types::Value;
use serde_json::value::RawValue;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonbFunc {
    /// `j -> text`.
    Field,
    /// `j ->> text`.
    FieldText,
    /// `j -> int`.
    Element,
    /// `j ->> int`.
    ElementText,
    /// `j #> text[]`, `jsonb_extract_path(j, VARIADIC text[])`.
    Path,
    /// `j #>> text[]`, `jsonb_extract_path_text`.
    PathText,
    /// `a @> b`.
    Contains,
    /// `a <@ b`.
    ContainedBy,
    /// `j ? text`.
    Exists,
    /// `j ?| text[]`.
    ExistsAny,
    /// `j ?& text[]`.
    ExistsAll,
    /// `a || b`.
    Concat,
    /// `j - text`.
    DeleteKey,
    /// `j - text[]`.
    DeleteKeys,
    /// `j - int`.
    DeleteIndex,
    /// `j #- text[]`.
    DeletePath,
    Typeof,
    ArrayLength,
    /// `jsonb_set(target, path, new[, create_missing])`.
    Set,
    /// `jsonb_insert(target, path, new[, insert_after])`.
    Insert,
    StripNulls,
    Pretty,
    /// `jsonb_build_object(key, value, ...)`: values already jsonb (not strict).
    BuildObject,
    /// `jsonb_build_array(value, ...)`: values already jsonb (not strict).
    BuildArray,
    /// `to_jsonb(value)`, and any value made jsonb for a builder or an aggregate.
    ToJsonb,
    /// `->`, `->>`, `#>` and `#>>` of a `json` value (its text): what they reach, as it
    /// was written.
    Json {
        step: JsonStep,
        text: bool,
    },
}

/// How a json operator steps into a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonStep {
    Field,
    Element,
    Path,
}

impl JsonbFunc {
    /// Whether a NULL argument makes the result NULL without a call.
    pub fn strict(self) -> bool {
        !matches!(self, JsonbFunc::BuildObject | JsonbFunc::BuildArray)
    }
}

fn doc(v: &Value) -> Result<&Jsonb> {
    match v {
        Value::Jsonb(j) => Ok(j),
        other => Err(Error::internal(format!("jsonb expected, got {other:?}"))),
    }
}

fn made(j: Jsonb) -> Value {
    Value::Jsonb(Arc::new(j))
}

fn text(v: &Value) -> String {
    super::expr::text_of(v)
}

/// A `text[]` path's steps, NULL ones None.
fn path_steps(v: &Value) -> Vec<Option<String>> {
    match v {
        Value::Array(_, items) => items
            .iter()
            .map(|i| (!i.is_null()).then(|| text(i)))
            .collect(),
        _ => Vec::new(),
    }
}

/// A `text[]` argument's non-NULL elements, and the (1-based) position of its first
/// NULL element if it has one.
fn text_items(v: &Value) -> (Vec<String>, Option<usize>) {
    let Value::Array(_, items) = v else {
        return (Vec::new(), None);
    };
    let null = items.iter().position(Value::is_null).map(|i| i + 1);
    (
        items.iter().filter(|i| !i.is_null()).map(text).collect(),
        null,
    )
}

fn found(v: Option<&Jsonb>) -> Value {
    v.map_or(Value::Null, |j| made(j.clone()))
}

fn found_text(v: Option<&Jsonb>) -> Value {
    v.and_then(Jsonb::as_text).map_or(Value::Null, Value::Text)
}

/// Evaluate `f` over its arguments (NULLs already answered for strict ones).
pub fn eval(f: JsonbFunc, vals: &[Value]) -> Result<Value> {
    use JsonbFunc as F;
    Ok(match f {
        F::Field => found(doc(&vals[0])?.get(&text(&vals[1]))),
        F::FieldText => found_text(doc(&vals[0])?.get(&text(&vals[1]))),
        F::Element | F::ElementText => {
            let i = vals[1].as_i64().unwrap_or(0);
            let j = doc(&vals[0])?;
            // An object has no elements.
            let v = if matches!(j, Jsonb::Object(_)) {
                None
            } else {
                j.element(i)
            };
            if f == F::Element {
                found(v)
            } else {
                found_text(v)
            }
        }
        F::Path | F::PathText => {
            let (path, null) = text_items(&vals[1]);
            if null.is_some() {
                return Ok(Value::Null);
            }
            let v = doc(&vals[0])?.at_path(&path);
            if f == F::Path {
                found(v)
            } else {
                found_text(v)
            }
        }
        F::Contains => Value::Bool(jsonb::contains(doc(&vals[0])?, doc(&vals[1])?)),
        F::ContainedBy => Value::Bool(jsonb::contains(doc(&vals[1])?, doc(&vals[0])?)),
        F::Exists => Value::Bool(doc(&vals[0])?.has_key(&text(&vals[1]))),
        F::ExistsAny | F::ExistsAll => {
            let j = doc(&vals[0])?;
            let (keys, _) = text_items(&vals[1]);
            Value::Bool(if f == F::ExistsAny {
                keys.iter().any(|k| j.has_key(k))
            } else {
                keys.iter().all(|k| j.has_key(k))
            })
        }
        F::Concat => made(jsonb::concat(doc(&vals[0])?, doc(&vals[1])?)?),
        F::DeleteKey => made(jsonb::delete_key(doc(&vals[0])?, &text(&vals[1]))?),
        F::DeleteKeys => made(jsonb::delete_keys(doc(&vals[0])?, &text_items(&vals[1]).0)?),
        F::DeleteIndex => made(jsonb::delete_index(
            doc(&vals[0])?,
            vals[1].as_i64().unwrap_or(0),
        )?),
        F::DeletePath => made(jsonb::delete_path(doc(&vals[0])?, &path_steps(&vals[1]))?),
        F::Typeof => Value::Text(doc(&vals[0])?.type_name().to_string()),
        F::ArrayLength => match doc(&vals[0])? {
            Jsonb::Array(items) => Value::Int4(items.len() as i32),
            Jsonb::Object(_) => {
                return Err(invalid("cannot get array length of a non-array"));
            }
            _ => return Err(invalid("cannot get array length of a scalar")),
        },
        F::Set | F::Insert => {
            let path = path_steps(&vals[1]);
            let flag = matches!(vals.get(3), Some(Value::Bool(true)));
            let mode = match f {
                F::Set => SetMode::Replace {
                    create_missing: vals.get(3).is_none() || flag,
                },
                _ => SetMode::Insert { after: flag },
            };
            made(jsonb::set_path(
                doc(&vals[0])?,
                &path,
                doc(&vals[2])?,
                mode,
            )?)
        }
        F::StripNulls => made(doc(&vals[0])?.strip_nulls()),
        F::Pretty => Value::Text(doc(&vals[0])?.pretty()),
        F::BuildArray => {
            made(Jsonb::Array(vals.iter().map(element_of).collect::<Result<_>>()?).checked()?)
        }
        F::BuildObject => build_object(vals)?,
        F::ToJsonb => made(to_jsonb(&vals[0])?),
        F::Json {
            step,
            text: as_text,
        } => {
            let doc = text(&vals[0]);
            let steps: Vec<String> = match step {
                JsonStep::Path => {
                    let (path, null) = text_items(&vals[1]);
                    if null.is_some() {
                        return Ok(Value::Null);
                    }
                    path
                }
                _ => vec![text(&vals[1])],
            };
            let mut at: &RawValue = serde_json::from_str(&doc).map_err(json_corrupt)?;
            for s in &steps {
                match json_step(at, s, step == JsonStep::Element)? {
                    Some(next) => at = next,
                    None => return Ok(Value::Null),
                }
            }
            match (as_text, at.get()) {
                (true, "null") => Value::Null,
                (true, raw) if raw.starts_with('"') => {
                    Value::Text(serde_json::from_str::<String>(raw).map_err(json_corrupt)?)
                }
                (_, raw) => Value::Text(raw.to_string()),
            }
        }
    })
}

fn json_corrupt(e: serde_json::Error) -> Error {
    Error::internal(format!("a json value did not parse: {e}"))
}

/// One step into a json value: an object's field (the last of a repeated key, as
/// PostgreSQL finds it), or an array's element (by an integer, negative from the end).
fn json_step<'a>(at: &'a RawValue, step: &str, element: bool) -> Result<Option<&'a RawValue>> {
    let raw = at.get();
    if raw.starts_with('{') && !element {
        // A map keeps the last of repeated keys.
        let fields: std::collections::BTreeMap<String, &RawValue> =
            serde_json::from_str(raw).map_err(json_corrupt)?;
        return Ok(fields.get(step).copied());
    }
    if raw.starts_with('[') {
        let Ok(i) = step.trim_start().parse::<i64>() else {
            return Ok(None);
        };
        let items: Vec<&RawValue> = serde_json::from_str(raw).map_err(json_corrupt)?;
        let i = if i < 0 { items.len() as i64 + i } else { i };
        return Ok(usize::try_from(i).ok().and_then(|i| items.get(i).copied()));
    }
    Ok(None)
}

fn invalid(message: &str) -> Error {
    Error::new(SqlState::INVALID_PARAMETER_VALUE, message)
}

/// A builder's argument: already jsonb, a NULL a JSON null.
fn element_of(v: &Value) -> Result<Jsonb> {
    match v {
        Value::Null => Ok(Jsonb::Null),
        v => Ok(doc(v)?.clone()),
    }
}

fn build_object(vals: &[Value]) -> Result<Value> {
    if !vals.len().is_multiple_of(2) {
        return Err(invalid("argument list must have even number of elements").with_hint(
            "The arguments of jsonb_build_object() must consist of alternating keys and values.",
        ));
    }
    let mut pairs = Vec::with_capacity(vals.len() / 2);
    for (i, pair) in vals.chunks(2).enumerate() {
        if pair[0].is_null() {
            return Err(invalid(&format!(
                "argument {}: key must not be null",
                i * 2 + 1
            )));
        }
        pairs.push((text(&pair[0]), element_of(&pair[1])?));
    }
    Ok(made(Jsonb::object(pairs).checked()?))
}

/// `to_jsonb`: a SQL value as a JSON document, as PostgreSQL converts it (numbers as
/// numbers, non-finite floats and dates and times as strings, arrays as arrays).
pub fn to_jsonb(v: &Value) -> Result<Jsonb> {
    match v {
        Value::Null => Ok(Jsonb::Null),
        Value::Jsonb(j) => Ok((**j).clone()),
        Value::Bool(b) => Ok(Jsonb::Bool(*b)),
        Value::Text(s) => Ok(Jsonb::String(s.clone())),
        other => {
            let mut out = String::new();
            super::catalog_functions::to_json(other, &mut out);
            jsonb::parse(&out)?.checked()
        }
    }
}

/// An aggregate's state: `jsonb_agg`'s elements, or `jsonb_object_agg`'s pairs.
#[derive(Clone, Debug, Default)]
pub struct JsonbAggState {
    items: Vec<Jsonb>,
    pairs: Vec<(String, Jsonb)>,
    any: bool,
}

impl JsonbAggState {
    /// `jsonb_agg`'s input (already jsonb; NULL is a JSON null).
    pub fn add(&mut self, v: &Value) -> Result<()> {
        self.any = true;
        self.items.push(element_of(v)?);
        Ok(())
    }

    /// `jsonb_object_agg`'s input.
    pub fn add_pair(&mut self, key: &Value, v: &Value) -> Result<()> {
        if key.is_null() {
            return Err(invalid("field name must not be null"));
        }
        self.any = true;
        self.pairs.push((text(key), element_of(v)?));
        Ok(())
    }

    pub fn finish(self, object: bool) -> Result<Value> {
        if !self.any {
            return Ok(Value::Null);
        }
        let j = if object {
            Jsonb::object(self.pairs)
        } else {
            Jsonb::Array(self.items)
        };
        Ok(made(j.checked()?))
    }
}

/// `json_agg`'s and `json_object_agg`'s state: the text so far, spaced as PostgreSQL
/// spaces it (`[1, 2]`, a new line before each array or row after the first;
/// `{ "k" : v, ... }`).
#[derive(Clone, Debug, Default)]
pub struct JsonAggState {
    out: String,
    count: usize,
}

impl JsonAggState {
    /// One value; `json` when it is already JSON text, `structured` for arrays and rows.
    pub fn add(&mut self, v: &Value, json: bool, structured: bool) {
        if self.count == 0 {
            self.out.push('[');
        } else {
            self.out.push_str(", ");
            if structured && !v.is_null() {
                self.out.push_str("\n ");
            }
        }
        self.count += 1;
        write_json(v, json, &mut self.out);
    }

    pub fn add_pair(&mut self, key: &Value, v: &Value, json: bool) -> Result<()> {
        if key.is_null() {
            return Err(invalid("field name must not be null"));
        }
        self.out.push_str(if self.count == 0 { "{ " } else { ", " });
        self.count += 1;
        jsonb::write_string(&text(key), &mut self.out);
        self.out.push_str(" : ");
        write_json(v, json, &mut self.out);
        Ok(())
    }

    pub fn finish(mut self, object: bool) -> Value {
        if self.count == 0 {
            return Value::Null;
        }
        self.out.push_str(if object { " }" } else { "]" });
        Value::Text(self.out)
    }
}

fn write_json(v: &Value, json: bool, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Text(s) if json => out.push_str(s),
        v => super::catalog_functions::to_json(v, out),
    }
}

/// The rows of jsonb's set-returning functions: `jsonb_each[_text]` (key, value) and
/// `jsonb_object_keys` (key) of an object, `jsonb_array_elements[_text]` (value) of an
/// array.
pub fn set_rows(kind: JsonbSet, arg: &Value) -> Result<Vec<Vec<Value>>> {
    let j = match arg {
        Value::Null => return Ok(Vec::new()),
        v => doc(v)?,
    };
    let value = |v: &Jsonb, as_text: bool| {
        if as_text {
            v.as_text().map_or(Value::Null, Value::Text)
        } else {
            made(v.clone())
        }
    };
    match (kind, j) {
        (JsonbSet::Each { text }, Jsonb::Object(pairs)) => Ok(pairs
            .iter()
            .map(|(k, v)| vec![Value::Text(k.clone()), value(v, text)])
            .collect()),
        (JsonbSet::ObjectKeys, Jsonb::Object(pairs)) => Ok(pairs
            .iter()
            .map(|(k, _)| vec![Value::Text(k.clone())])
            .collect()),
        (JsonbSet::ArrayElements { text }, Jsonb::Array(items)) => {
            Ok(items.iter().map(|v| vec![value(v, text)]).collect())
        }
        (JsonbSet::Each { text }, _) => Err(invalid(&format!(
            "cannot call {} on a non-object",
            if text {
                "jsonb_each_text"
            } else {
                "jsonb_each"
            }
        ))),
        (JsonbSet::ObjectKeys, other) => Err(invalid(&format!(
            "cannot call jsonb_object_keys on {}",
            if matches!(other, Jsonb::Array(_)) {
                "an array"
            } else {
                "a scalar"
            }
        ))),
        (JsonbSet::ArrayElements { .. }, other) => Err(invalid(&format!(
            "cannot extract elements from {}",
            if matches!(other, Jsonb::Object(_)) {
                "an object"
            } else {
                "a scalar"
            }
        ))),
    }
}

/// jsonb's set-returning functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonbSet {
    /// `jsonb_each` (values jsonb) or `jsonb_each_text`.
    Each {
        text: bool,
    },
    ObjectKeys,
    /// `jsonb_array_elements` or `jsonb_array_elements_text`.
    ArrayElements {
        text: bool,
    },
}

impl JsonbSet {
    pub fn by_name(name: &str) -> Option<JsonbSet> {
        Some(match name {
            "jsonb_each" => JsonbSet::Each { text: false },
            "jsonb_each_text" => JsonbSet::Each { text: true },
            "jsonb_object_keys" => JsonbSet::ObjectKeys,
            "jsonb_array_elements" => JsonbSet::ArrayElements { text: false },
            "jsonb_array_elements_text" => JsonbSet::ArrayElements { text: true },
            _ => return None,
        })
    }

    /// Its result columns, named as PostgreSQL's OUT parameters.
    pub fn columns(self) -> &'static [(&'static str, crate::types::DataType)] {
        use crate::types::DataType as T;
        match self {
            JsonbSet::Each { text: false } => &[("key", T::Text), ("value", T::Jsonb)],
            JsonbSet::Each { text: true } => &[("key", T::Text), ("value", T::Text)],
            JsonbSet::ObjectKeys => &[("jsonb_object_keys", T::Text)],
            JsonbSet::ArrayElements { text: false } => &[("value", T::Jsonb)],
            JsonbSet::ArrayElements { text: true } => &[("value", T::Text)],
        }
    }
}
