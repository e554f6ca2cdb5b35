//! Binding the everyday scalar functions of `scalar_functions.rs`: the overload each
//! call resolves to, chosen as PostgreSQL's function resolution would. A math function
//! of an integer or an untyped literal takes double precision (its preferred numeric
//! type), of a numeric takes numeric; a string function takes text; `to_char` reads a
//! date as a timestamptz. A call no overload accepts answers 42883 naming the argument
//! types; an overload SteadyDB lacks answers 0A000.

use sqlparser::ast;

use super::json::no_function;
use super::{Binder, Scope, Typed};
use crate::error::{Error, Result, SqlState};
use crate::sql::expr::{Expr, Func};
use crate::sql::scalar_functions::{ScalarFunc, TrimSide};
use crate::types::{ArithOp, DataType};

fn call(f: ScalarFunc, args: Vec<Expr>) -> Expr {
    Expr::Func(Func::Scalar(f), args)
}

fn ambiguous(name: &str, types: &[DataType]) -> Error {
    let types: Vec<String> = types.iter().map(|t| t.name()).collect();
    Error::new(
        SqlState::AMBIGUOUS_FUNCTION,
        format!("function {name}({}) is not unique", types.join(", ")),
    )
    .with_hint(
        "Could not choose a best candidate function. You might need to add explicit type casts.",
    )
}

/// Which overload of a math function with float8 and numeric versions a type takes.
fn float_or_numeric(t: DataType) -> Option<DataType> {
    match t {
        DataType::Numeric(_) => Some(DataType::Numeric(None)),
        DataType::Unknown | DataType::Float4 | DataType::Float8 => Some(DataType::Float8),
        t if t.is_integer() => Some(DataType::Float8),
        _ => None,
    }
}

static TEXT: DataType = DataType::Text;

/// The functions whose arguments are all text: how many they take, and their result.
fn text_signature(f: ScalarFunc) -> Option<(std::ops::RangeInclusive<usize>, DataType)> {
    use ScalarFunc as S;
    Some(match f {
        S::ParseTimestamp => (2..=2, DataType::TimestampTz),
        S::ParseDate => (2..=2, DataType::Date),
        S::Replace | S::Translate => (3..=3, DataType::Text),
        S::Trim(_) => (1..=2, DataType::Text),
        S::Strpos => (2..=2, DataType::Int4),
        S::StartsWith => (2..=2, DataType::Bool),
        S::Initcap | S::Reverse => (1..=1, DataType::Text),
        S::Ascii => (1..=1, DataType::Int4),
        S::StringToArray => (2..=3, DataType::Array(&TEXT)),
        S::Decode => (2..=2, DataType::Bytea),
        S::RegexpSplitToArray => (2..=3, DataType::Array(&TEXT)),
        S::BitLength => (1..=1, DataType::Int4),
        _ => return None,
    })
}

impl Binder<'_> {
    /// `regexp_matches` and `regexp_split_to_table` (set-returning, in FROM or a select
    /// list): their kind, text arguments and column type; None if `name` is neither.
    pub fn regexp_set_function(
        &mut self,
        name: &str,
        bound: Vec<Typed>,
    ) -> Result<Option<(crate::sql::plan::TableFunctionKind, Vec<Expr>, DataType)>> {
        use crate::sql::plan::TableFunctionKind as K;
        let (kind, ty) = match name {
            "regexp_matches" => (K::RegexpMatches, DataType::Array(&TEXT)),
            "regexp_split_to_table" => (K::RegexpSplitToTable, DataType::Text),
            _ => return Ok(None),
        };
        if !(2..=3).contains(&bound.len()) {
            let types: Vec<DataType> = bound.iter().map(|t| t.1).collect();
            return Err(no_function(name, &types));
        }
        Ok(Some((kind, self.text_args(name, bound)?, ty)))
    }

    fn bind_args(&mut self, args: &[ast::Expr], scope: &Scope) -> Result<Vec<Typed>> {
        args.iter().map(|a| self.bind(a, scope)).collect()
    }

    /// The bound arguments as text, for a function whose parameters are all text.
    fn text_args(&mut self, name: &str, args: Vec<Typed>) -> Result<Vec<Expr>> {
        if args
            .iter()
            .any(|t| !(t.1.is_string() || t.1 == DataType::Unknown))
        {
            let types: Vec<DataType> = args.iter().map(|t| t.1).collect();
            return Err(no_function(name, &types));
        }
        args.into_iter().map(|t| self.text_of_typed(t)).collect()
    }

    /// `t` converted to `to` (a literal read as one, another type cast).
    fn convert(&mut self, t: Typed, to: DataType) -> Result<Expr> {
        if t.1 == to {
            return Ok(t.0);
        }
        self.cast_or_coerce(t, to)
    }

    /// The functions of `scalar_functions.rs`; None when `name` is not one of them.
    pub(super) fn bind_scalar_function(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        scope: &Scope,
    ) -> Result<Option<Typed>> {
        use ScalarFunc as S;
        let f = match name {
            "round" => S::Round,
            "trunc" => S::Trunc,
            "ceil" | "ceiling" => S::Ceil,
            "floor" => S::Floor,
            "mod" => S::Mod,
            "power" | "pow" => S::Power,
            "sqrt" => S::Sqrt,
            "cbrt" => S::Cbrt,
            "exp" => S::Exp,
            "ln" => S::Ln,
            "log" if args.len() == 2 => S::Log,
            "log" | "log10" => S::Log10,
            "pi" => S::Pi,
            "sign" => S::Sign,
            "degrees" => S::Degrees,
            "radians" => S::Radians,
            "concat" => S::Concat,
            "concat_ws" => S::ConcatWs,
            "replace" => S::Replace,
            "btrim" => S::Trim(TrimSide::Both),
            "ltrim" => S::Trim(TrimSide::Leading),
            "rtrim" => S::Trim(TrimSide::Trailing),
            "strpos" => S::Strpos,
            "initcap" => S::Initcap,
            "reverse" => S::Reverse,
            "chr" => S::Chr,
            "ascii" => S::Ascii,
            "starts_with" => S::StartsWith,
            "translate" => S::Translate,
            "regexp_replace" => S::RegexpReplace,
            "format" => S::Format,
            "to_char" => S::ToChar,
            "to_timestamp" if args.len() == 2 => S::ParseTimestamp,
            "to_timestamp" => S::ToTimestamp,
            "to_date" => S::ParseDate,
            "pg_sleep" => S::PgSleep,
            "array_append" | "array_prepend" | "array_cat" => {
                return self.bind_array_concat(name, args, scope).map(Some)
            }
            "array_position" => S::ArrayPosition,
            "string_to_array" => S::StringToArray,
            "encode" => S::Encode,
            "decode" => S::Decode,
            "sha224" => S::Sha(224),
            "sha256" => S::Sha(256),
            "sha384" => S::Sha(384),
            "sha512" => S::Sha(512),
            "to_hex" => S::ToHex,
            "div" => S::Div,
            "gcd" => S::Gcd,
            "lcm" => S::Lcm,
            "num_nulls" => S::NumNulls,
            "num_nonnulls" => S::NumNonNulls,
            "quote_nullable" => S::QuoteNullable,
            "make_date" => S::MakeDate,
            "isfinite" => S::IsFinite,
            "age" => S::Age,
            "regexp_split_to_array" => S::RegexpSplitToArray,
            "bit_length" => S::BitLength,
            "justify_days" => S::JustifyDays,
            "justify_hours" => S::JustifyHours,
            "justify_interval" => S::JustifyInterval,
            "date_bin" => S::DateBin,
            "make_timestamp" => S::MakeTimestamp,
            "make_timestamptz" => S::MakeTimestampTz,
            "make_interval" => S::MakeInterval,
            "width_bucket" => S::WidthBucket,
            "array_replace" => S::ArrayReplace,
            "timezone" if args.len() == 2 => {
                return self.bind_at_time_zone(&args[1], &args[0], scope).map(Some)
            }
            _ => return Ok(None),
        };
        let typed = self.bind_args(args, scope)?;
        let types: Vec<DataType> = typed.iter().map(|t| t.1).collect();
        let arity = |range: std::ops::RangeInclusive<usize>| -> Result<()> {
            if range.contains(&typed.len()) {
                Ok(())
            } else {
                Err(no_function(name, &types))
            }
        };
        if let Some((arities, result)) = text_signature(f) {
            arity(arities)?;
            return Ok(Some((call(f, self.text_args(name, typed)?), result)));
        }
        let bound = match f {
            S::Round | S::Trunc if typed.len() == 2 => {
                let mut it = typed.into_iter();
                let (x, n) = (it.next(), it.next());
                let (Some(x), Some(n)) = (x, n) else {
                    return Err(no_function(name, &types));
                };
                if !(x.1.is_integer() || matches!(x.1, DataType::Numeric(_) | DataType::Unknown))
                    || !(n.1.is_integer() || n.1 == DataType::Unknown)
                {
                    return Err(no_function(name, &types));
                }
                let numeric = DataType::Numeric(None);
                let args = vec![self.convert(x, numeric)?, self.convert(n, DataType::Int4)?];
                (call(f, args), numeric)
            }
            S::Round
            | S::Trunc
            | S::Ceil
            | S::Floor
            | S::Sqrt
            | S::Exp
            | S::Ln
            | S::Log10
            | S::Sign => {
                arity(1..=1)?;
                let Some(ty) = float_or_numeric(types[0]) else {
                    return Err(no_function(name, &types));
                };
                let args = self.convert_all(typed, ty)?;
                (call(f, args), ty)
            }
            S::Cbrt | S::Degrees | S::Radians | S::ToTimestamp | S::PgSleep => {
                arity(1..=1)?;
                if !types[0].is_numeric() && types[0] != DataType::Unknown {
                    return Err(no_function(name, &types));
                }
                let args = self.convert_all(typed, DataType::Float8)?;
                let ty = match f {
                    S::ToTimestamp => DataType::TimestampTz,
                    S::PgSleep => DataType::Void,
                    _ => DataType::Float8,
                };
                (call(f, args), ty)
            }
            // Only numeric has a two-argument log, and div.
            S::Log | S::Div => {
                arity(2..=2)?;
                if !types.iter().all(|t| {
                    t.is_integer() || matches!(t, DataType::Numeric(_) | DataType::Unknown)
                }) {
                    return Err(no_function(name, &types));
                }
                let numeric = DataType::Numeric(None);
                let args = self.convert_all(typed, numeric)?;
                (call(f, args), numeric)
            }
            S::JustifyDays | S::JustifyHours | S::JustifyInterval => {
                arity(1..=1)?;
                if !matches!(types[0], DataType::Interval | DataType::Unknown) {
                    return Err(no_function(name, &types));
                }
                (
                    call(f, self.convert_all(typed, DataType::Interval)?),
                    DataType::Interval,
                )
            }
            S::DateBin => {
                arity(3..=3)?;
                // The timestamps' type: timestamptz for a date or timestamptz.
                let ty = match (types[1], types[2]) {
                    (DataType::Timestamp, DataType::Timestamp | DataType::Unknown)
                    | (DataType::Unknown, DataType::Timestamp) => DataType::Timestamp,
                    (DataType::TimestampTz | DataType::Date, _)
                    | (DataType::Unknown, DataType::TimestampTz | DataType::Date) => {
                        DataType::TimestampTz
                    }
                    (DataType::Unknown, DataType::Unknown) => {
                        return Err(Error::new(
                            SqlState::AMBIGUOUS_FUNCTION,
                            "function date_bin(unknown, unknown, unknown) is not unique",
                        )
                        .with_hint("Could not choose a best candidate function. You might need to add explicit type casts."))
                    }
                    _ => return Err(no_function(name, &types)),
                };
                if !matches!(types[0], DataType::Interval | DataType::Unknown) {
                    return Err(no_function(name, &types));
                }
                let mut it = typed.into_iter();
                let (Some(stride), Some(t), Some(origin)) = (it.next(), it.next(), it.next())
                else {
                    return Err(no_function(name, &types));
                };
                let args = vec![
                    self.convert(stride, DataType::Interval)?,
                    self.convert(t, ty)?,
                    self.convert(origin, ty)?,
                ];
                (call(f, args), ty)
            }
            S::MakeTimestamp | S::MakeTimestampTz | S::MakeInterval => {
                let (arities, result) = match f {
                    S::MakeTimestamp => (6..=6, DataType::Timestamp),
                    S::MakeTimestampTz => (6..=7, DataType::TimestampTz),
                    _ => (0..=7, DataType::Interval),
                };
                arity(arities)?;
                let seconds_at = if f == S::MakeInterval { 6 } else { 5 };
                let mut args = Vec::new();
                for (i, t) in typed.into_iter().enumerate() {
                    let to = match i {
                        _ if i < seconds_at => DataType::Int4,
                        _ if i == seconds_at => DataType::Float8,
                        _ => DataType::Text,
                    };
                    let fits = match to {
                        DataType::Int4 => t.1.is_integer(),
                        DataType::Float8 => t.1.is_numeric(),
                        _ => t.1.is_string(),
                    };
                    if !(fits || t.1 == DataType::Unknown) {
                        return Err(no_function(name, &types));
                    }
                    args.push(self.convert(t, to)?);
                }
                (call(f, args), result)
            }
            S::WidthBucket => {
                arity(4..=4)?;
                if !types[..3]
                    .iter()
                    .all(|t| t.is_numeric() || *t == DataType::Unknown)
                    || !(types[3].is_integer() || types[3] == DataType::Unknown)
                {
                    return Err(no_function(name, &types));
                }
                let ty = if types[..3]
                    .iter()
                    .all(|t| t.is_integer() || matches!(t, DataType::Numeric(_)))
                {
                    DataType::Numeric(None)
                } else {
                    DataType::Float8
                };
                let mut args = Vec::new();
                for (i, t) in typed.into_iter().enumerate() {
                    args.push(self.convert(t, if i < 3 { ty } else { DataType::Int4 })?);
                }
                (call(f, args), DataType::Int4)
            }
            S::ArrayReplace => {
                arity(3..=3)?;
                let Some(element) = types[0].element().filter(|_| !types[0].is_vector()) else {
                    return Err(no_function(name, &types));
                };
                let mut args = Vec::new();
                for (i, t) in typed.into_iter().enumerate() {
                    args.push(if i == 0 {
                        t.0
                    } else {
                        self.convert(t, element)?
                    });
                }
                (call(f, args), types[0])
            }
            // Bound by bind_overlay.
            S::Overlay => return Err(no_function(name, &types)),
            // Bound above: by bind_at_time_zone, or as text functions.
            S::AtTimeZone
            | S::ParseTimestamp
            | S::ParseDate
            | S::Replace
            | S::Translate
            | S::Trim(_)
            | S::Strpos
            | S::StartsWith
            | S::Initcap
            | S::Reverse
            | S::Ascii
            | S::StringToArray
            | S::RegexpSplitToArray
            | S::BitLength
            | S::Decode => return Err(no_function(name, &types)),
            S::ArrayPosition => {
                arity(2..=3)?;
                let mut it = typed.into_iter();
                let (Some(array), Some(element)) = (it.next(), it.next()) else {
                    return Err(no_function(name, &types));
                };
                let DataType::Array(e) = array.1 else {
                    return Err(no_function(name, &types));
                };
                let element = if element.1 == DataType::Unknown || element.1 == *e {
                    self.convert(element, *e)?
                } else if super::comparable(element.1, *e) {
                    self.cast_or_coerce(element, *e)?
                } else {
                    return Err(no_function(name, &types));
                };
                let mut args = vec![array.0, element];
                for start in it {
                    args.push(self.convert(start, DataType::Int4)?);
                }
                (call(f, args), DataType::Int4)
            }
            S::Encode => {
                arity(2..=2)?;
                if !matches!(types[0], DataType::Bytea | DataType::Unknown) {
                    return Err(no_function(name, &types));
                }
                let mut it = typed.into_iter();
                let (Some(bytes), Some(format)) = (it.next(), it.next()) else {
                    return Err(no_function(name, &types));
                };
                let bytes = self.convert(bytes, DataType::Bytea)?;
                let format = self.text_args(name, vec![format])?;
                let mut args = vec![bytes];
                args.extend(format);
                (call(f, args), DataType::Text)
            }
            S::Sha(_) => {
                arity(1..=1)?;
                if !matches!(types[0], DataType::Bytea | DataType::Unknown) {
                    return Err(no_function(name, &types));
                }
                let args = self.convert_all(typed, DataType::Bytea)?;
                (call(f, args), DataType::Bytea)
            }
            S::ToHex => {
                arity(1..=1)?;
                let ty = match types[0] {
                    DataType::Int8 => DataType::Int8,
                    t if t.is_integer() || t == DataType::Unknown => DataType::Int4,
                    _ => return Err(no_function(name, &types)),
                };
                let args = self.convert_all(typed, ty)?;
                (call(f, args), DataType::Text)
            }
            S::Gcd | S::Lcm => {
                arity(2..=2)?;
                let ty = if types.contains(&DataType::Int8) {
                    DataType::Int8
                } else if types
                    .iter()
                    .all(|t| t.is_integer() || *t == DataType::Unknown)
                {
                    DataType::Int4
                } else if types.iter().any(|t| matches!(t, DataType::Numeric(_))) {
                    return Err(Error::unsupported(format!(
                        "{name}(numeric, numeric) is not supported yet"
                    )));
                } else {
                    return Err(no_function(name, &types));
                };
                (call(f, self.convert_all(typed, ty)?), ty)
            }
            S::NumNulls | S::NumNonNulls => {
                if typed.is_empty() {
                    return Err(no_function(name, &types));
                }
                let args = typed.into_iter().map(|t| t.0).collect();
                (call(f, args), DataType::Int4)
            }
            S::QuoteNullable => {
                arity(1..=1)?;
                let args = typed
                    .into_iter()
                    .map(|t| self.coerce(t, DataType::Text))
                    .collect::<Result<Vec<_>>>()?;
                (call(f, args), DataType::Text)
            }
            S::MakeDate => {
                arity(3..=3)?;
                if !types
                    .iter()
                    .all(|t| t.is_integer() || *t == DataType::Unknown)
                {
                    return Err(no_function(name, &types));
                }
                (
                    call(f, self.convert_all(typed, DataType::Int4)?),
                    DataType::Date,
                )
            }
            S::IsFinite => {
                arity(1..=1)?;
                if !matches!(
                    types[0],
                    DataType::Date
                        | DataType::Timestamp
                        | DataType::TimestampTz
                        | DataType::Interval
                ) {
                    return Err(if types[0] == DataType::Unknown {
                        ambiguous(name, &types)
                    } else {
                        no_function(name, &types)
                    });
                }
                (
                    call(f, typed.into_iter().map(|t| t.0).collect()),
                    DataType::Bool,
                )
            }
            S::Age => {
                arity(1..=2)?;
                // Both arguments of one type: timestamptz if either is, else timestamp.
                let ty = if types.contains(&DataType::TimestampTz) {
                    DataType::TimestampTz
                } else if types
                    .iter()
                    .all(|t| matches!(t, DataType::Timestamp | DataType::Date | DataType::Unknown))
                {
                    DataType::Timestamp
                } else {
                    return Err(no_function(name, &types));
                };
                let mut args = self.convert_all(typed, ty)?;
                if args.len() == 1 {
                    // age(t): from today's midnight.
                    let today = Expr::Func(
                        Func::Scalar(S::AtTimeZone),
                        vec![
                            Expr::Func(Func::Now, vec![]),
                            Expr::Const(crate::types::Value::Text("UTC".into())),
                        ],
                    );
                    let midnight = Expr::Func(
                        Func::DateTrunc,
                        vec![Expr::Const(crate::types::Value::Text("day".into())), today],
                    );
                    let midnight = if ty == DataType::TimestampTz {
                        Expr::Cast(Box::new(midnight), DataType::TimestampTz)
                    } else {
                        midnight
                    };
                    args.insert(0, midnight);
                }
                (call(f, args), DataType::Interval)
            }
            S::Pi => {
                arity(0..=0)?;
                (call(f, vec![]), DataType::Float8)
            }
            S::Mod => {
                arity(2..=2)?;
                let ty = match (types[0], types[1]) {
                    (DataType::Unknown, DataType::Unknown) => return Err(ambiguous(name, &types)),
                    (DataType::Unknown, t) | (t, DataType::Unknown) => t,
                    (a, b) => crate::sql::bind::arith_type(ArithOp::Mod, a, b)
                        .map_err(|_| no_function(name, &types))?,
                };
                if !(ty.is_integer() || matches!(ty, DataType::Numeric(_))) {
                    return Err(no_function(name, &types));
                }
                let ty = ty.without_typmod();
                let args = self.convert_all(typed, ty)?;
                (call(f, args), ty)
            }
            S::Power => {
                arity(2..=2)?;
                let kinds: Vec<Option<DataType>> =
                    types.iter().map(|t| float_or_numeric(*t)).collect();
                if kinds.iter().any(Option::is_none) {
                    return Err(no_function(name, &types));
                }
                // numeric where one is numeric and neither a float, else float8.
                let any_float = types
                    .iter()
                    .any(|t| matches!(t, DataType::Float4 | DataType::Float8));
                let ty = if !any_float && types.iter().any(|t| matches!(t, DataType::Numeric(_))) {
                    DataType::Numeric(None)
                } else {
                    DataType::Float8
                };
                let args = self.convert_all(typed, ty)?;
                (call(f, args), ty)
            }
            S::Concat | S::ConcatWs | S::Format => {
                if typed.is_empty() || (f == S::ConcatWs && typed.len() < 2) {
                    return Err(no_function(name, &types));
                }
                // Each value is written by its type's output function (`t` for true),
                // as the functions' `any` parameters take it.
                let args = typed
                    .into_iter()
                    .map(|t| self.coerce(t, DataType::Text))
                    .collect::<Result<Vec<_>>>()?;
                (call(f, args), DataType::Text)
            }
            S::Chr => {
                arity(1..=1)?;
                if !(types[0].is_integer() || types[0] == DataType::Unknown) {
                    return Err(no_function(name, &types));
                }
                let args = self.convert_all(typed, DataType::Int4)?;
                (call(f, args), DataType::Text)
            }
            S::RegexpReplace => {
                arity(3..=4)?;
                if types.get(3).is_some_and(|t| t.is_integer()) {
                    return Err(Error::unsupported(
                        "regexp_replace with a start position is not supported yet",
                    ));
                }
                (call(f, self.text_args(name, typed)?), DataType::Text)
            }
            S::ToChar => {
                arity(2..=2)?;
                let mut it = typed.into_iter();
                let (Some(value), Some(template)) = (it.next(), it.next()) else {
                    return Err(no_function(name, &types));
                };
                let value = match value.1 {
                    DataType::Date => self.convert(value, DataType::TimestampTz)?,
                    DataType::Timestamp
                    | DataType::TimestampTz
                    | DataType::Interval
                    | DataType::Int4
                    | DataType::Int8
                    | DataType::Float4
                    | DataType::Float8
                    | DataType::Numeric(_) => value.0,
                    DataType::Int2 => self.convert(value, DataType::Int4)?,
                    DataType::Unknown => return Err(ambiguous(name, &types)),
                    _ => return Err(no_function(name, &types)),
                };
                let template = self.text_args(name, vec![template])?;
                let mut args = vec![value];
                args.extend(template);
                (call(f, args), DataType::Text)
            }
        };
        Ok(Some(bound))
    }

    fn convert_all(&mut self, typed: Vec<Typed>, to: DataType) -> Result<Vec<Expr>> {
        typed.into_iter().map(|t| self.convert(t, to)).collect()
    }

    /// `trim([both | leading | trailing] [characters] from text)` and `trim(text)`.
    pub(super) fn bind_trim(
        &mut self,
        expr: &ast::Expr,
        trim_where: Option<&ast::TrimWhereField>,
        trim_what: Option<&ast::Expr>,
        scope: &Scope,
    ) -> Result<Typed> {
        let side = match trim_where {
            Some(ast::TrimWhereField::Leading) => TrimSide::Leading,
            Some(ast::TrimWhereField::Trailing) => TrimSide::Trailing,
            _ => TrimSide::Both,
        };
        let name = match side {
            TrimSide::Both => "btrim",
            TrimSide::Leading => "ltrim",
            TrimSide::Trailing => "rtrim",
        };
        let mut typed = vec![self.bind(expr, scope)?];
        if let Some(what) = trim_what {
            typed.push(self.bind(what, scope)?);
        }
        let args = self.text_args(name, typed)?;
        Ok((call(ScalarFunc::Trim(side), args), DataType::Text))
    }

    /// `t AT TIME ZONE zone`: a timestamptz as the zone's local time (a timestamp), or
    /// a timestamp read as the zone's local time (a timestamptz). A date or an untyped
    /// literal is a timestamptz, as PostgreSQL resolves it.
    /// `overlay(s PLACING r FROM start [FOR count])`.
    pub(super) fn bind_overlay(
        &mut self,
        parts: [&ast::Expr; 3],
        count: Option<&ast::Expr>,
        scope: &Scope,
    ) -> Result<Typed> {
        let mut args = Vec::new();
        let mut types = Vec::new();
        for (i, e) in parts.into_iter().chain(count).enumerate() {
            let t = self.bind(e, scope)?;
            types.push(t.1);
            let to = if i < 2 {
                DataType::Text
            } else {
                DataType::Int4
            };
            let fits = if i < 2 {
                t.1.is_string()
            } else {
                t.1.is_integer()
            };
            if !(fits || t.1 == DataType::Unknown) {
                return Err(no_function("overlay", &types));
            }
            args.push(self.convert(t, to)?);
        }
        Ok((call(ScalarFunc::Overlay, args), DataType::Text))
    }

    pub(super) fn bind_at_time_zone(
        &mut self,
        t: &ast::Expr,
        zone: &ast::Expr,
        scope: &Scope,
    ) -> Result<Typed> {
        let t = self.bind(t, scope)?;
        let zone = self.bind(zone, scope)?;
        let types = [zone.1, t.1];
        let (value, result) = match t.1 {
            DataType::Timestamp => (t.0, DataType::TimestampTz),
            DataType::TimestampTz => (t.0, DataType::Timestamp),
            DataType::Date | DataType::Unknown => {
                (self.convert(t, DataType::TimestampTz)?, DataType::Timestamp)
            }
            _ => return Err(no_function("timezone", &types)),
        };
        let zone = match zone.1 {
            DataType::Interval => zone.0,
            t if t.is_string() || t == DataType::Unknown => self.text_of_typed(zone)?,
            _ => return Err(no_function("timezone", &types)),
        };
        Ok((call(ScalarFunc::AtTimeZone, vec![value, zone]), result))
    }

    /// array_append(array, element), array_prepend(element, array), array_cat(array,
    /// array): `||` by another name.
    fn bind_array_concat(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        scope: &Scope,
    ) -> Result<Typed> {
        let typed = self.bind_args(args, scope)?;
        let types: Vec<DataType> = typed.iter().map(|t| t.1).collect();
        let array_at = match name {
            "array_prepend" => 1,
            _ => 0,
        };
        let array_type = match types.get(array_at) {
            Some(t @ DataType::Array(_)) if typed.len() == 2 => *t,
            _ => return Err(no_function(name, &types)),
        };
        if name == "array_cat" && !matches!(types[1], DataType::Array(_) | DataType::Unknown) {
            return Err(no_function(name, &types));
        }
        if name != "array_cat" && matches!(types[1 - array_at], DataType::Array(_)) {
            return Err(no_function(name, &types));
        }
        let mut typed = typed;
        let element_at = 1 - array_at;
        if name != "array_cat" && types[element_at] == DataType::Unknown {
            // An untyped literal is the element, not an array.
            let element = array_type.element().unwrap_or(DataType::Text);
            let t = typed.remove(element_at);
            let e = self.convert(t, element)?;
            typed.insert(element_at, (e, element));
        }
        let mut it = typed.into_iter();
        let (Some(l), Some(r)) = (it.next(), it.next()) else {
            return Err(no_function(name, &types));
        };
        self.array_concat(l, r, array_type)
    }

    /// has_table_privilege([role,] object, privileges) and its relatives: the role and
    /// object by name (text) or OID; no role is the current one.
    pub(super) fn bind_has_privilege(
        &mut self,
        of: crate::sql::catalog_functions::PrivilegeOf,
        name: &str,
        args: &[ast::Expr],
        scope: &Scope,
    ) -> Result<Typed> {
        let typed = self.bind_args(args, scope)?;
        let types: Vec<DataType> = typed.iter().map(|t| t.1).collect();
        if !(2..=3).contains(&typed.len()) {
            return Err(no_function(name, &types));
        }
        let mut bound = Vec::new();
        if typed.len() == 2 {
            bound.push(Expr::Const(crate::types::Value::Null));
        }
        let last = typed.len() - 1;
        for (i, t) in typed.into_iter().enumerate() {
            let e = match t.1 {
                _ if i == last => self.text_args(name, vec![t])?.remove(0),
                DataType::Unknown => self.text_of_typed(t)?,
                ty if ty.is_string() => self.text_of_typed(t)?,
                ty if ty.is_integer() || matches!(ty, DataType::Oid | DataType::RegClass) => {
                    self.cast_or_coerce(t, DataType::Oid)?
                }
                _ => return Err(no_function(name, &types)),
            };
            bound.push(e);
        }
        Ok((Expr::Func(Func::HasPrivilege(of), bound), DataType::Bool))
    }

    /// `position(substring in text)`: strpos with its arguments swapped.
    pub(super) fn bind_position(
        &mut self,
        substring: &ast::Expr,
        text: &ast::Expr,
        scope: &Scope,
    ) -> Result<Typed> {
        let typed = vec![self.bind(text, scope)?, self.bind(substring, scope)?];
        let args = self.text_args("strpos", typed)?;
        Ok((call(ScalarFunc::Strpos, args), DataType::Int4))
    }

    /// `ceil(x)` and `floor(x)`, which the parser reads apart from other calls.
    pub(super) fn bind_ceil_floor(
        &mut self,
        expr: &ast::Expr,
        field: &ast::CeilFloorKind,
        ceil: bool,
        scope: &Scope,
    ) -> Result<Typed> {
        let name = if ceil { "ceil" } else { "floor" };
        if !matches!(
            field,
            ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime)
        ) {
            return Err(Error::syntax(format!(
                "syntax error in the arguments of {name}()"
            )));
        }
        let t = self.bind(expr, scope)?;
        let Some(ty) = float_or_numeric(t.1) else {
            return Err(no_function(name, &[t.1]));
        };
        let arg = self.convert(t, ty)?;
        let f = if ceil {
            ScalarFunc::Ceil
        } else {
            ScalarFunc::Floor
        };
        Ok((call(f, vec![arg]), ty))
    }
}
