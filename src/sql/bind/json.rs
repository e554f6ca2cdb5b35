//! Binding jsonb's operators, functions and aggregates: which [`JsonbFunc`] an operator
//! or call is, chosen by its operands' types as PostgreSQL's operator resolution would
//! (`-> 1` is an element, `-> 'a'` a field; an untyped literal beside a jsonb operand is
//! jsonb, text or text[] as the operator takes it).

use sqlparser::ast;

use super::{Binder, Scope, Typed};
use crate::error::{Error, Result, SqlState};
use crate::sql::expr::{Expr, Func};
use crate::sql::json_functions::JsonbFunc;
use crate::types::DataType;

static TEXT: DataType = DataType::Text;
const TEXT_ARRAY: DataType = DataType::Array(&TEXT);

fn no_operator(l: DataType, op: &ast::BinaryOperator, r: DataType) -> Error {
    Error::new(
        SqlState::UNDEFINED_FUNCTION,
        format!("operator does not exist: {} {op} {}", l.name(), r.name()),
    )
    .with_hint(
        "No operator matches the given name and argument types. You might need to add explicit type casts.",
    )
}

pub(super) fn no_function(name: &str, args: &[DataType]) -> Error {
    let types: Vec<String> = args.iter().map(|t| t.name()).collect();
    Error::new(
        SqlState::UNDEFINED_FUNCTION,
        format!("function {name}({}) does not exist", types.join(", ")),
    )
    .with_hint(
        "No function matches the given name and argument types. You might need to add explicit type casts.",
    )
}

fn call(f: JsonbFunc, args: Vec<Expr>) -> Expr {
    Expr::Func(Func::Jsonb(f), args)
}

/// Whether `op` is one of the operators only jsonb has here.
pub(super) fn is_jsonb_operator(op: &ast::BinaryOperator) -> bool {
    use ast::BinaryOperator as B;
    matches!(
        op,
        B::Arrow
            | B::LongArrow
            | B::HashArrow
            | B::HashLongArrow
            | B::AtArrow
            | B::ArrowAt
            | B::Question
            | B::QuestionAnd
            | B::QuestionPipe
            | B::HashMinus
    )
}

/// Whether `l || r` is jsonb's concatenation (both jsonb, or one an untyped literal).
pub(super) fn is_jsonb_concat(l: DataType, r: DataType) -> bool {
    matches!(
        (l, r),
        (DataType::Jsonb, DataType::Jsonb | DataType::Unknown)
            | (DataType::Unknown, DataType::Jsonb)
    )
}

impl Binder<'_> {
    /// `l op r` with a jsonb operand: jsonb's operators, `||` of two documents, and `-`
    /// (deletion) on a document.
    pub(super) fn bind_jsonb_operator(
        &mut self,
        op: &ast::BinaryOperator,
        l: Typed,
        r: Typed,
    ) -> Result<Typed> {
        use ast::BinaryOperator as B;
        if l.1 == DataType::Json {
            return self.bind_json_operator(op, l, r);
        }
        let (lt, rt) = (l.1, r.1);
        // Both containment operators also take arrays in PostgreSQL.
        if matches!(op, B::AtArrow | B::ArrowAt)
            && (lt.element().is_some() || rt.element().is_some())
        {
            return Err(Error::unsupported(format!(
                "operator {op} on arrays is not supported yet"
            )));
        }
        if lt == DataType::Unknown && !matches!(op, B::AtArrow | B::ArrowAt | B::StringConcat) {
            return Err(Error::new(
                SqlState::AMBIGUOUS_FUNCTION,
                format!("operator is not unique: unknown {op} {}", rt.name()),
            )
            .with_hint("Could not choose a best candidate operator. You might need to add explicit type casts."));
        }
        let doc = |b: &mut Self, t: Typed| -> Result<Expr> {
            match t.1 {
                DataType::Jsonb => Ok(t.0),
                DataType::Unknown => b.coerce(t, DataType::Jsonb),
                other => Err(no_operator(lt, op, other)),
            }
        };
        let text_key = |b: &mut Self, t: Typed| -> Result<Expr> {
            match t.1 {
                DataType::Unknown => b.coerce(t, DataType::Text),
                DataType::Char(_) => Ok(Expr::Func(Func::BpcharToText, vec![t.0])),
                ty if ty.is_string() => Ok(t.0),
                other => Err(no_operator(lt, op, other)),
            }
        };
        let text_array = |b: &mut Self, t: Typed| -> Result<Expr> {
            match t.1 {
                DataType::Unknown => b.coerce(t, TEXT_ARRAY),
                DataType::Array(e) if e.is_string() => Ok(t.0),
                other => Err(no_operator(lt, op, other)),
            }
        };
        if lt != DataType::Jsonb && !matches!(op, B::AtArrow | B::ArrowAt | B::StringConcat) {
            return Err(no_operator(lt, op, rt));
        }
        let (f, ty, right) = match op {
            B::Arrow | B::LongArrow => {
                let text = *op == B::LongArrow;
                let out = if text {
                    DataType::Text
                } else {
                    DataType::Jsonb
                };
                if rt.is_integer() {
                    let i = self.coerce(r, DataType::Int4)?;
                    let f = if text {
                        JsonbFunc::ElementText
                    } else {
                        JsonbFunc::Element
                    };
                    (f, out, i)
                } else {
                    let f = if text {
                        JsonbFunc::FieldText
                    } else {
                        JsonbFunc::Field
                    };
                    (f, out, text_key(self, r)?)
                }
            }
            B::HashArrow => (JsonbFunc::Path, DataType::Jsonb, text_array(self, r)?),
            B::HashLongArrow => (JsonbFunc::PathText, DataType::Text, text_array(self, r)?),
            B::AtArrow | B::ArrowAt => {
                let f = if *op == B::AtArrow {
                    JsonbFunc::Contains
                } else {
                    JsonbFunc::ContainedBy
                };
                let l = doc(self, l)?;
                let r = doc(self, r)?;
                return Ok((call(f, vec![l, r]), DataType::Bool));
            }
            B::Question => (JsonbFunc::Exists, DataType::Bool, text_key(self, r)?),
            B::QuestionPipe => (JsonbFunc::ExistsAny, DataType::Bool, text_array(self, r)?),
            B::QuestionAnd => (JsonbFunc::ExistsAll, DataType::Bool, text_array(self, r)?),
            B::StringConcat => {
                let l = doc(self, l)?;
                let r = doc(self, r)?;
                return Ok((call(JsonbFunc::Concat, vec![l, r]), DataType::Jsonb));
            }
            B::Minus => match rt {
                t if t.is_integer() => {
                    let i = self.coerce(r, DataType::Int4)?;
                    (JsonbFunc::DeleteIndex, DataType::Jsonb, i)
                }
                DataType::Array(_) => {
                    (JsonbFunc::DeleteKeys, DataType::Jsonb, text_array(self, r)?)
                }
                _ => (JsonbFunc::DeleteKey, DataType::Jsonb, text_key(self, r)?),
            },
            B::HashMinus => (JsonbFunc::DeletePath, DataType::Jsonb, text_array(self, r)?),
            other => return Err(no_operator(lt, other, rt)),
        };
        Ok((call(f, vec![l.0, right]), ty))
    }

    /// `->`, `->>`, `#>` and `#>>` of a `json` value (its other operators are jsonb's).
    fn bind_json_operator(
        &mut self,
        op: &ast::BinaryOperator,
        l: Typed,
        r: Typed,
    ) -> Result<Typed> {
        use crate::sql::json_functions::JsonStep;
        use ast::BinaryOperator as B;
        let (lt, rt) = (l.1, r.1);
        let (step, text) = match op {
            B::Arrow if rt.is_integer() => (JsonStep::Element, false),
            B::LongArrow if rt.is_integer() => (JsonStep::Element, true),
            B::Arrow => (JsonStep::Field, false),
            B::LongArrow => (JsonStep::Field, true),
            B::HashArrow => (JsonStep::Path, false),
            B::HashLongArrow => (JsonStep::Path, true),
            _ => {
                return Err(Error::unsupported(format!(
                    "operator {op} on json values is not supported; cast the value to jsonb"
                )))
            }
        };
        let right = match (step, rt) {
            (JsonStep::Element, _) => self.coerce(r, DataType::Int4)?,
            (JsonStep::Path, DataType::Unknown) => self.coerce(r, TEXT_ARRAY)?,
            (JsonStep::Path, DataType::Array(e)) if e.is_string() => r.0,
            (JsonStep::Field, DataType::Unknown) => self.coerce(r, DataType::Text)?,
            (JsonStep::Field, DataType::Char(_)) => Expr::Func(Func::BpcharToText, vec![r.0]),
            (JsonStep::Field, t) if t.is_string() => r.0,
            _ => return Err(no_operator(lt, op, rt)),
        };
        let ty = if text { DataType::Text } else { DataType::Json };
        Ok((call(JsonbFunc::Json { step, text }, vec![l.0, right]), ty))
    }

    /// The one argument of a jsonb set-returning function, as a document; None when
    /// there is not one argument of type jsonb (or an untyped literal).
    pub(in crate::sql) fn jsonb_document(&mut self, args: Vec<Typed>) -> Option<Result<Expr>> {
        let [a]: [Typed; 1] = args.try_into().ok()?;
        if !matches!(a.1, DataType::Jsonb | DataType::Unknown) {
            return None;
        }
        Some(self.coerce(a, DataType::Jsonb))
    }

    /// A value made jsonb for a builder or an aggregate: jsonb as it is, json parsed,
    /// others converted as `to_jsonb` does (an untyped literal is text).
    pub(super) fn jsonb_value(&mut self, t: Typed) -> Result<Expr> {
        Ok(match t.1 {
            DataType::Jsonb => t.0,
            DataType::Json => Expr::Cast(Box::new(t.0), DataType::Jsonb),
            DataType::Unknown => {
                let e = self.coerce(t, DataType::Text)?;
                call(JsonbFunc::ToJsonb, vec![e])
            }
            DataType::Char(_) => call(
                JsonbFunc::ToJsonb,
                vec![Expr::Func(Func::BpcharToText, vec![t.0])],
            ),
            _ => call(JsonbFunc::ToJsonb, vec![t.0]),
        })
    }

    /// A jsonb function's call, if `name` is one (None otherwise).
    pub(super) fn bind_jsonb_function(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        scope: &Scope,
    ) -> Result<Option<Typed>> {
        let known = matches!(
            name,
            "to_jsonb"
                | "jsonb_build_object"
                | "jsonb_build_array"
                | "jsonb_typeof"
                | "json_typeof"
                | "jsonb_array_length"
                | "json_array_length"
                | "jsonb_strip_nulls"
                | "jsonb_pretty"
                | "jsonb_set"
                | "jsonb_insert"
                | "jsonb_extract_path"
                | "jsonb_extract_path_text"
        );
        if !known {
            return Ok(None);
        }
        let bound = args
            .iter()
            .map(|a| self.bind(a, scope))
            .collect::<Result<Vec<Typed>>>()?;
        let types: Vec<DataType> = bound.iter().map(|t| t.1).collect();
        let missing = || no_function(name, &types);
        let mut bound = bound.into_iter();
        let doc = |b: &mut Self, t: Option<Typed>| -> Result<Expr> {
            match t {
                Some(t) if t.1 == DataType::Jsonb => Ok(t.0),
                Some(t) if t.1 == DataType::Unknown => b.coerce(t, DataType::Jsonb),
                _ => Err(missing()),
            }
        };
        let (f, ty, exprs) = match name {
            "to_jsonb" => {
                let (Some(t), 1) = (bound.next(), args.len()) else {
                    return Err(missing());
                };
                if t.1 == DataType::Unknown {
                    return Err(Error::new(
                        SqlState::DATATYPE_MISMATCH,
                        "could not determine polymorphic type because input has type unknown",
                    ));
                }
                return Ok(Some((self.jsonb_value(t)?, DataType::Jsonb)));
            }
            "jsonb_build_object" | "jsonb_build_array" => {
                let object = name == "jsonb_build_object";
                let mut exprs = Vec::with_capacity(args.len());
                for (i, t) in bound.enumerate() {
                    exprs.push(if object && i % 2 == 0 {
                        self.as_text(t)?
                    } else {
                        self.jsonb_value(t)?
                    });
                }
                let f = if object {
                    JsonbFunc::BuildObject
                } else {
                    JsonbFunc::BuildArray
                };
                (f, DataType::Jsonb, exprs)
            }
            // json's are jsonb's of the document read as jsonb.
            "json_typeof" | "json_array_length" => {
                let d = match (bound.next(), args.len()) {
                    (Some(t), 1) if matches!(t.1, DataType::Json | DataType::Unknown) => {
                        Expr::Cast(Box::new(self.coerce(t, DataType::Json)?), DataType::Jsonb)
                    }
                    _ => return Err(missing()),
                };
                let (f, ty) = match name {
                    "json_typeof" => (JsonbFunc::Typeof, DataType::Text),
                    _ => (JsonbFunc::ArrayLength, DataType::Int4),
                };
                (f, ty, vec![d])
            }
            "jsonb_typeof" | "jsonb_array_length" | "jsonb_strip_nulls" | "jsonb_pretty" => {
                if args.len() != 1 {
                    return Err(missing());
                }
                let d = doc(self, bound.next())?;
                let (f, ty) = match name {
                    "jsonb_typeof" => (JsonbFunc::Typeof, DataType::Text),
                    "jsonb_array_length" => (JsonbFunc::ArrayLength, DataType::Int4),
                    "jsonb_strip_nulls" => (JsonbFunc::StripNulls, DataType::Jsonb),
                    _ => (JsonbFunc::Pretty, DataType::Text),
                };
                (f, ty, vec![d])
            }
            "jsonb_set" | "jsonb_insert" => {
                if !(3..=4).contains(&args.len()) {
                    return Err(missing());
                }
                let target = doc(self, bound.next())?;
                let path = match bound.next() {
                    Some(t) if t.1 == DataType::Unknown => self.coerce(t, TEXT_ARRAY)?,
                    Some(t) if t.1 == TEXT_ARRAY => t.0,
                    _ => return Err(missing()),
                };
                let new = doc(self, bound.next())?;
                let mut exprs = vec![target, path, new];
                if let Some(flag) = bound.next() {
                    exprs.push(match flag.1 {
                        DataType::Bool => flag.0,
                        DataType::Unknown => self.coerce(flag, DataType::Bool)?,
                        _ => return Err(missing()),
                    });
                }
                let f = if name == "jsonb_set" {
                    JsonbFunc::Set
                } else {
                    JsonbFunc::Insert
                };
                (f, DataType::Jsonb, exprs)
            }
            _ => {
                // jsonb_extract_path[_text](from_json, VARIADIC path_elems text[]).
                let d = doc(self, bound.next())?;
                let mut steps = Vec::new();
                for t in bound {
                    steps.push(match t.1 {
                        DataType::Unknown => self.coerce(t, DataType::Text)?,
                        ty if ty.is_string() => t.0,
                        _ => return Err(missing()),
                    });
                }
                let (f, ty) = if name == "jsonb_extract_path" {
                    (JsonbFunc::Path, DataType::Jsonb)
                } else {
                    (JsonbFunc::PathText, DataType::Text)
                };
                (f, ty, vec![d, Expr::Array(&TEXT, steps)])
            }
        };
        Ok(Some((call(f, exprs), ty)))
    }
}
