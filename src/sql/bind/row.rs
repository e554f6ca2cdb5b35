//! Row values: `ROW(a, b)` and `(a, b)` make a record (fields `f1`, `f2`, ...); a table's
//! name alone is its whole row (fields named as its columns); and rows compare as
//! PostgreSQL compares them, pair by pair from the left — written here as the
//! comparisons of the pairs (`(a, b) < (c, d)` is `a < c OR (a = c AND b < d)`), which
//! gives PostgreSQL's NULL results too.

use sqlparser::ast;

use super::{Binder, Scope, Typed};
use crate::error::{Error, Result, SqlState};
use crate::sql::expr::{Expr, Func};
use crate::types::{record_shape, DataType};

/// The items of a row written `ROW(...)` or `(a, b, ...)`.
pub(super) fn row_items(e: &ast::Expr) -> Option<Vec<&ast::Expr>> {
    match e {
        ast::Expr::Nested(inner) => row_items(inner),
        ast::Expr::Tuple(items) => Some(items.iter().collect()),
        ast::Expr::Function(f) if super::function_name(f) == "row" => match &f.args {
            ast::FunctionArguments::List(l) => l
                .args
                .iter()
                .map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e),
                    _ => None,
                })
                .collect(),
            ast::FunctionArguments::None => Some(Vec::new()),
            _ => None,
        },
        _ => None,
    }
}

fn unequal_rows() -> Error {
    Error::new(
        SqlState::SYNTAX_ERROR,
        "unequal number of entries in row expressions",
    )
}

impl Binder<'_> {
    /// A row constructor's value: a record of its items (untyped literals as text).
    pub(super) fn bind_row(&mut self, items: &[&ast::Expr], scope: &Scope) -> Result<Typed> {
        let mut exprs = Vec::with_capacity(items.len());
        let mut fields = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let t = self.bind(item, scope)?;
            let ty = match t.1 {
                DataType::Unknown => DataType::Text,
                ty => ty,
            };
            exprs.push(self.coerce(t, ty)?);
            fields.push((format!("f{}", i + 1), ty));
        }
        let shape = record_shape(fields)?;
        Ok((Expr::Func(Func::Row(shape), exprs), DataType::Record(shape)))
    }

    /// A table's (or FROM item's) whole row, named by its qualifier alone: None when no
    /// FROM item has that name.
    pub(super) fn whole_row(&self, name: &str, scope: &Scope) -> Result<Option<Typed>> {
        let columns: Vec<usize> = (0..scope.columns.len())
            .filter(|&i| {
                scope.columns[i]
                    .qualifiers
                    .first()
                    .is_some_and(|q| q == name)
            })
            .collect();
        if columns.is_empty() {
            return Ok(None);
        }
        let fields = columns
            .iter()
            .map(|&i| (scope.columns[i].name.clone(), scope.columns[i].data_type))
            .collect();
        let shape = record_shape(fields)?;
        let exprs = columns.into_iter().map(Expr::Column).collect();
        Ok(Some((
            Expr::Func(Func::Row(shape), exprs),
            DataType::Record(shape),
        )))
    }

    /// `left op right` of two rows: the pairs' comparisons.
    pub(super) fn compare_rows(
        &mut self,
        left: &[&ast::Expr],
        op: &ast::BinaryOperator,
        right: &[&ast::Expr],
        scope: &Scope,
    ) -> Result<Typed> {
        use ast::BinaryOperator as B;
        if left.len() != right.len() {
            return Err(unequal_rows());
        }
        if left.is_empty() {
            return Err(Error::unsupported(
                "comparison of empty rows is not supported",
            ));
        }
        // Before the last pair, `<=` and `>=` decide by their strict forms.
        let strict = match op {
            B::LtEq => B::Lt,
            B::GtEq => B::Gt,
            other => other.clone(),
        };
        let last = left.len() - 1;
        let mut pairs = Vec::with_capacity(left.len());
        for (i, (l, r)) in left.iter().zip(right).enumerate() {
            let eq = self.bind_binary(l, &B::Eq, r, scope)?.0;
            let this = self
                .bind_binary(l, if i == last { op } else { &strict }, r, scope)?
                .0;
            pairs.push((eq, this));
        }
        let and = |a: Expr, b: Expr| Expr::And(Box::new(a), Box::new(b));
        let or = |a: Expr, b: Expr| Expr::Or(Box::new(a), Box::new(b));
        let expr = match op {
            B::Eq => pairs
                .into_iter()
                .map(|(_, c)| c)
                .reduce(and)
                .ok_or_else(unequal_rows)?,
            B::NotEq => pairs
                .into_iter()
                .map(|(_, c)| c)
                .reduce(or)
                .ok_or_else(unequal_rows)?,
            // Lexicographic, built from the right: `a1 < b1 OR (a1 = b1 AND rest)`.
            _ => pairs
                .into_iter()
                .rev()
                .fold(None, |rest, (eq, this)| {
                    Some(match rest {
                        None => this,
                        Some(r) => or(this, and(eq, r)),
                    })
                })
                .ok_or_else(unequal_rows)?,
        };
        Ok((expr, DataType::Bool))
    }

    /// `row [NOT] IN (row, ...)`: equal to one of them.
    pub(super) fn row_in_list(
        &mut self,
        left: &[&ast::Expr],
        list: &[ast::Expr],
        negated: bool,
        scope: &Scope,
    ) -> Result<Typed> {
        let mut any: Option<Expr> = None;
        for item in list {
            let Some(right) = row_items(item) else {
                return Err(unequal_rows());
            };
            let eq = self
                .compare_rows(left, &ast::BinaryOperator::Eq, &right, scope)?
                .0;
            any = Some(match any {
                None => eq,
                Some(a) => Expr::Or(Box::new(a), Box::new(eq)),
            });
        }
        let any = any.ok_or_else(unequal_rows)?;
        Ok((
            if negated {
                Expr::Not(Box::new(any))
            } else {
                any
            },
            DataType::Bool,
        ))
    }
}
