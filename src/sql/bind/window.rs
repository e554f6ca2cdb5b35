//! Window function calls: `f(...) OVER (PARTITION BY ... ORDER BY ... frame)`. The
//! ranking functions, the value functions (`lag`, `lead`, `first_value`, `last_value`,
//! `nth_value`), `ntile`, `percent_rank`, `cume_dist`, and aggregates over the frame.
//! Frames are PostgreSQL's: ROWS, GROUPS and RANGE (an offset of its one ORDER BY key's
//! type, an interval for dates and times); the default is RANGE UNBOUNDED PRECEDING to
//! CURRENT ROW, which without ORDER BY is the whole partition.

use sqlparser::ast;

use super::{AggFunc, Binder, Scope, Typed, WindowCall, WindowFunc};
use crate::error::{Error, Result, SqlState};
use crate::sql::expr::Expr;
use crate::types::DataType;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameUnits {
    Rows,
    Range,
    Groups,
}

#[derive(Clone, Debug)]
pub enum FrameBound {
    UnboundedPreceding,
    /// `n PRECEDING` (a bigint without the row's columns).
    Preceding(Expr),
    CurrentRow,
    Following(Expr),
    UnboundedFollowing,
}

#[derive(Clone, Debug)]
pub struct Frame {
    pub units: FrameUnits,
    pub start: FrameBound,
    pub end: FrameBound,
}

impl Frame {
    /// RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW.
    pub fn default_frame() -> Frame {
        Frame {
            units: FrameUnits::Range,
            start: FrameBound::UnboundedPreceding,
            end: FrameBound::CurrentRow,
        }
    }
}

/// What a window call computes, its value argument and the others (offset and default,
/// n), the argument's type and the result's.
type BoundWindowFunction = (WindowFunc, Option<Expr>, Vec<Expr>, DataType, DataType);

fn windowing(message: &str) -> Error {
    Error::new(SqlState::WINDOWING_ERROR, message)
}

fn no_function(name: &str, n: usize) -> Error {
    Error::new(
        SqlState::UNDEFINED_FUNCTION,
        format!("function {name} with {n} arguments does not exist"),
    )
}

impl Binder<'_> {
    /// A frame clause; `order_types` are the window's ORDER BY keys' types (a RANGE
    /// offset is of its one key's type, an interval for dates and times).
    fn bind_frame(
        &mut self,
        f: &ast::WindowFrame,
        order_types: &[DataType],
        scope: &Scope,
    ) -> Result<Frame> {
        let units = match f.units {
            ast::WindowFrameUnits::Rows => FrameUnits::Rows,
            ast::WindowFrameUnits::Range => FrameUnits::Range,
            ast::WindowFrameUnits::Groups => FrameUnits::Groups,
        };
        let mut bound = |b: &ast::WindowFrameBound| -> Result<FrameBound> {
            let offset = |binder: &mut Self, e: &ast::Expr| -> Result<Expr> {
                let t = binder.bind(e, scope)?;
                let unit = match units {
                    FrameUnits::Rows => "ROWS",
                    FrameUnits::Range => "RANGE",
                    FrameUnits::Groups => "GROUPS",
                };
                if !t.0.is_row_independent() {
                    return Err(windowing(&format!(
                        "argument of {unit} must not contain variables"
                    )));
                }
                if units == FrameUnits::Range {
                    let [key] = order_types else {
                        return Err(windowing(
                            "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column",
                        ));
                    };
                    let offset_type = match key {
                        k if k.is_integer() => DataType::Int8,
                        DataType::Numeric(_) => DataType::Numeric(None),
                        DataType::Float4 | DataType::Float8 => DataType::Float8,
                        DataType::Date
                        | DataType::Timestamp
                        | DataType::TimestampTz
                        | DataType::Interval => DataType::Interval,
                        other => {
                            return Err(Error::unsupported(format!(
                                "RANGE with offset PRECEDING/FOLLOWING is not supported for column type {}",
                                other.name()
                            )))
                        }
                    };
                    return binder.cast_or_coerce(t, offset_type);
                }
                if !(t.1.is_integer() || t.1 == DataType::Unknown) {
                    return Err(Error::new(
                        SqlState::DATATYPE_MISMATCH,
                        format!(
                            "argument of {unit} must be type bigint, not type {}",
                            t.1.name()
                        ),
                    ));
                }
                binder.cast_or_coerce(t, DataType::Int8)
            };
            Ok(match b {
                ast::WindowFrameBound::CurrentRow => FrameBound::CurrentRow,
                ast::WindowFrameBound::Preceding(None) => FrameBound::UnboundedPreceding,
                ast::WindowFrameBound::Following(None) => FrameBound::UnboundedFollowing,
                ast::WindowFrameBound::Preceding(Some(e)) => {
                    FrameBound::Preceding(offset(self, e)?)
                }
                ast::WindowFrameBound::Following(Some(e)) => {
                    FrameBound::Following(offset(self, e)?)
                }
            })
        };
        let start = bound(&f.start_bound)?;
        let end = match &f.end_bound {
            Some(b) => bound(b)?,
            None => FrameBound::CurrentRow,
        };
        use FrameBound as B;
        match (&start, &end) {
            (B::UnboundedFollowing, _) => {
                return Err(windowing("frame start cannot be UNBOUNDED FOLLOWING"))
            }
            (_, B::UnboundedPreceding) => {
                return Err(windowing("frame end cannot be UNBOUNDED PRECEDING"))
            }
            (B::CurrentRow, B::Preceding(_)) => {
                return Err(windowing(
                    "frame starting from current row cannot have preceding rows",
                ))
            }
            (B::Following(_), B::Preceding(_) | B::CurrentRow) => {
                return Err(windowing(
                    "frame starting from following row cannot have preceding rows",
                ))
            }
            _ => {}
        }
        Ok(Frame { units, start, end })
    }

    /// The function of a window call.
    fn bind_window_function(
        &mut self,
        name: &str,
        args: &[&ast::Expr],
        star: bool,
        scope: &Scope,
    ) -> Result<BoundWindowFunction> {
        let n = args.len();
        let no_args = |func, ty| -> Result<_> {
            if n != 0 || star {
                return Err(no_function(name, n));
            }
            Ok((func, None, Vec::new(), DataType::Int8, ty))
        };
        let value = |b: &mut Self, e: &ast::Expr| -> Result<(Expr, DataType)> {
            let t = b.bind(e, scope)?;
            let ty = match t.1 {
                DataType::Unknown => DataType::Text,
                ty => ty,
            };
            Ok((b.coerce(t, ty)?, ty))
        };
        match name {
            "row_number" => no_args(WindowFunc::RowNumber, DataType::Int8),
            "rank" => no_args(WindowFunc::Rank, DataType::Int8),
            "dense_rank" => no_args(WindowFunc::DenseRank, DataType::Int8),
            "percent_rank" => no_args(WindowFunc::PercentRank, DataType::Float8),
            "cume_dist" => no_args(WindowFunc::CumeDist, DataType::Float8),
            "ntile" => {
                let [count] = args else {
                    return Err(no_function(name, n));
                };
                let t = self.bind(count, scope)?;
                let count = self.cast_or_coerce(t, DataType::Int4)?;
                Ok((
                    WindowFunc::Ntile,
                    None,
                    vec![count],
                    DataType::Int4,
                    DataType::Int4,
                ))
            }
            "lag" | "lead" => {
                if !(1..=3).contains(&n) {
                    return Err(no_function(name, n));
                }
                let (v, ty) = value(self, args[0])?;
                let mut extra = Vec::new();
                if let Some(off) = args.get(1) {
                    let t = self.bind(off, scope)?;
                    extra.push(self.cast_or_coerce(t, DataType::Int4)?);
                } else {
                    extra.push(Expr::Const(crate::types::Value::Int4(1)));
                }
                if let Some(d) = args.get(2) {
                    let t = self.bind(d, scope)?;
                    extra.push(self.cast_or_coerce(t, ty)?);
                }
                let func = if name == "lag" {
                    WindowFunc::Lag
                } else {
                    WindowFunc::Lead
                };
                Ok((func, Some(v), extra, ty, ty))
            }
            "first_value" | "last_value" => {
                let [arg] = args else {
                    return Err(no_function(name, n));
                };
                let (v, ty) = value(self, arg)?;
                let func = if name == "first_value" {
                    WindowFunc::FirstValue
                } else {
                    WindowFunc::LastValue
                };
                Ok((func, Some(v), Vec::new(), ty, ty))
            }
            "nth_value" => {
                let [arg, nth] = args else {
                    return Err(no_function(name, n));
                };
                let (v, ty) = value(self, arg)?;
                let t = self.bind(nth, scope)?;
                let nth = self.cast_or_coerce(t, DataType::Int4)?;
                Ok((WindowFunc::NthValue, Some(v), vec![nth], ty, ty))
            }
            _ => {
                let windowable = |a: &AggFunc| {
                    matches!(
                        a,
                        AggFunc::Count
                            | AggFunc::Sum
                            | AggFunc::Min
                            | AggFunc::Max
                            | AggFunc::Avg
                            | AggFunc::ArrayAgg
                            | AggFunc::BoolAnd
                            | AggFunc::BoolOr
                            | AggFunc::JsonbAgg
                    )
                };
                let Some(agg) = AggFunc::from_name(name).filter(windowable) else {
                    return Err(Error::unsupported(format!(
                        "{name}() as a window function is not supported yet"
                    )));
                };
                if star {
                    if agg != AggFunc::Count {
                        return Err(Error::syntax(format!(
                            "{name}(*) is not valid; only count(*) takes *"
                        )));
                    }
                    return Ok((
                        WindowFunc::Aggregate(agg),
                        None,
                        Vec::new(),
                        DataType::Int8,
                        DataType::Int8,
                    ));
                }
                let [arg] = args else {
                    return Err(no_function(name, n));
                };
                if agg == AggFunc::JsonbAgg {
                    let t = self.bind(arg, scope)?;
                    let e = self.jsonb_value(t)?;
                    let ty = DataType::Jsonb;
                    return Ok((WindowFunc::Aggregate(agg), Some(e), Vec::new(), ty, ty));
                }
                let (e, ty) = value(self, arg)?;
                let fits = match agg {
                    AggFunc::Sum | AggFunc::Avg => ty.is_numeric() || ty == DataType::Interval,
                    AggFunc::BoolAnd | AggFunc::BoolOr => ty == DataType::Bool,
                    AggFunc::ArrayAgg => crate::types::array_of(ty).is_some(),
                    _ => true,
                };
                if !fits {
                    return Err(Error::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("function {name}({}) does not exist", ty.name()),
                    ));
                }
                Ok((
                    WindowFunc::Aggregate(agg),
                    Some(e),
                    Vec::new(),
                    ty,
                    agg.result_type(ty),
                ))
            }
        }
    }

    /// The window the WINDOW clause names `name`.
    fn named_window(&self, name: &str, depth: usize) -> Result<ast::WindowSpec> {
        if depth > self.named_windows.len() {
            return Err(windowing(&format!(
                "window \"{name}\" is defined by itself"
            )));
        }
        let mut name = name.to_string();
        // A window defined as another (`WINDOW b AS a`), at most as deep as there are.
        for _ in 0..=self.named_windows.len() {
            let Some(def) = self.named_windows.iter().find(|d| d.0.value == name) else {
                break;
            };
            match &def.1 {
                ast::NamedWindowExpr::WindowSpec(spec) => match &spec.window_name {
                    None => return Ok(spec.clone()),
                    Some(base) => return self.refine_window(&base.value, spec, depth + 1),
                },
                ast::NamedWindowExpr::NamedWindow(other) => name = other.value.clone(),
            }
        }
        Err(windowing(&format!("window \"{name}\" does not exist")))
    }

    /// `OVER (name ORDER BY ... frame)`: the named window with more of its clauses, as
    /// PostgreSQL allows (no PARTITION BY; ORDER BY only if it has none; not a window
    /// with a frame).
    fn refine_window(
        &self,
        name: &str,
        spec: &ast::WindowSpec,
        depth: usize,
    ) -> Result<ast::WindowSpec> {
        let base = self.named_window(name, depth)?;
        if !spec.partition_by.is_empty() {
            return Err(windowing(&format!(
                "cannot override PARTITION BY clause of window \"{name}\""
            )));
        }
        if !spec.order_by.is_empty() && !base.order_by.is_empty() {
            return Err(windowing(&format!(
                "cannot override ORDER BY clause of window \"{name}\""
            )));
        }
        if base.window_frame.is_some() {
            return Err(windowing(&format!(
                "cannot copy window \"{name}\" because it has a frame clause"
            )));
        }
        Ok(ast::WindowSpec {
            window_name: None,
            partition_by: base.partition_by,
            order_by: if spec.order_by.is_empty() {
                base.order_by
            } else {
                spec.order_by.clone()
            },
            window_frame: spec.window_frame.clone(),
        })
    }

    /// A window function call (`f(...) OVER (PARTITION BY ... ORDER BY ... frame)`).
    pub(super) fn bind_window(
        &mut self,
        f: &ast::Function,
        name: &str,
        over: &ast::WindowType,
        scope: &Scope,
    ) -> Result<Typed> {
        if self.no_aggregates == Some("aggregate function calls") {
            return Err(Error::new(
                SqlState::GROUPING_ERROR,
                "aggregate function calls cannot contain window function calls",
            ));
        }
        let Some((_, base)) = &self.windows else {
            return Err(Error::new(
                SqlState::WINDOWING_ERROR,
                match self.no_aggregates.or(self.no_windows) {
                    Some(clause) => format!("window functions are not allowed in {clause}"),
                    None => "window functions are not allowed here".to_string(),
                },
            ));
        };
        let base = *base;
        let spec = match over {
            ast::WindowType::WindowSpec(spec) => match &spec.window_name {
                None => spec.clone(),
                Some(name) => self.refine_window(&name.value, spec, 0)?,
            },
            ast::WindowType::NamedWindow(name) => self.named_window(&name.value, 0)?,
        };
        let spec = &spec;
        if f.filter.is_some() && AggFunc::from_name(name).is_none() {
            return Err(Error::unsupported(
                "FILTER is not implemented for non-aggregate window functions",
            ));
        }
        let (args, star) = match &f.args {
            ast::FunctionArguments::None => (Vec::new(), false),
            ast::FunctionArguments::List(l)
                if l.clauses.is_empty() && l.duplicate_treatment.is_none() =>
            {
                let mut args = Vec::new();
                let mut star = false;
                for a in &l.args {
                    match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => args.push(e),
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => star = true,
                        _ => {
                            return Err(Error::unsupported(format!(
                                "argument form not supported in {name}()"
                            )))
                        }
                    }
                }
                (args, star)
            }
            _ => {
                return Err(Error::unsupported(format!(
                    "this call of {name}() over a window is not supported yet"
                )))
            }
        };
        if matches!(&spec.window_frame, Some(f) if f.units == ast::WindowFrameUnits::Groups)
            && spec.order_by.is_empty()
        {
            return Err(windowing("GROUPS mode requires an ORDER BY clause"));
        }
        // The arguments and the window are over input rows, where no window call nests
        // and no set-returning function may be.
        let windows = self.windows.take();
        let parts = self.without_set_returning("window function calls", |b| {
            let bound = b.bind_window_function(name, &args, star, scope)?;
            let frame = match &spec.window_frame {
                Some(f) => {
                    let order_types = spec
                        .order_by
                        .iter()
                        .map(|o| Ok(b.bind(&o.expr, scope)?.1))
                        .collect::<Result<Vec<_>>>()?;
                    b.bind_frame(f, &order_types, scope)?
                }
                None => Frame::default_frame(),
            };
            let partition = spec
                .partition_by
                .iter()
                .map(|p| {
                    let t = b.bind(p, scope)?;
                    b.coerce(t, DataType::Text)
                })
                .collect::<Result<Vec<Expr>>>()?;
            let order = spec
                .order_by
                .iter()
                .map(|o| {
                    let t = b.bind(&o.expr, scope)?;
                    let expr = b.coerce(t, DataType::Text)?;
                    let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
                    Ok(crate::sql::plan::OrderKey {
                        expr,
                        desc,
                        nulls_first: o.options.nulls_first.unwrap_or(desc),
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let filter = match &f.filter {
                Some(cond) => {
                    let outer = b.no_aggregates.replace("FILTER");
                    let cond = b.bind_bool(cond, scope, "FILTER");
                    b.no_aggregates = outer;
                    Some(cond?)
                }
                None => None,
            };
            Ok((bound, frame, partition, order, filter))
        });
        self.windows = windows;
        let (bound, frame, partition, order, filter) = parts?;
        let (func, arg, extra, arg_type, result) = bound;
        let call = WindowCall {
            func,
            arg,
            extra,
            arg_type,
            partition_by: partition,
            order_by: order,
            frame,
            filter,
        };
        let Some((calls, _)) = self.windows.as_mut() else {
            return Err(Error::internal("window calls"));
        };
        calls.push(call);
        Ok((Expr::Column(base + calls.len() - 1), result))
    }
}
