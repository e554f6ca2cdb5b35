//! Row values: `ROW(a, b)` and `(a, b)` make a record (fields `f1`, `f2`, ...); a FROM
//! item's name alone is its whole row (fields named as its columns; a column of that
//! name at any query level comes first); and rows compare as PostgreSQL compares them
//! (`Func::RowCompare`): `=` and `<>` over every pair, the orderings by the first pair
//! that is unequal or has a NULL. Each item is evaluated once.

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

/// A whole row: its row type and its columns in the scope.
type WholeRow = (&'static [(&'static str, DataType)], Vec<usize>);

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

    /// A FROM item's whole row, named by its qualifier alone: its row type and its
    /// columns in `scope`; None when no FROM item has that name.
    pub(super) fn whole_row_columns(name: &str, scope: &Scope) -> Result<Option<WholeRow>> {
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
        Ok(Some((record_shape(fields)?, columns)))
    }

    /// The whole-row value over `columns` (as read where it is used): NULL when every
    /// column is NULL, which is how a row an outer join null-extended reads (a stored
    /// row of NULLs only reads so too, where PostgreSQL has a row of NULL fields).
    pub(super) fn whole_row_value(
        shape: &'static [(&'static str, DataType)],
        columns: Vec<Expr>,
    ) -> Typed {
        let all_null = columns
            .iter()
            .map(|c| Expr::IsNull(Box::new(c.clone()), false))
            .reduce(|a, b| Expr::And(Box::new(a), Box::new(b)));
        let row = Expr::Func(Func::Row(shape), columns);
        let value = match all_null {
            Some(test) => Expr::Case {
                operand: None,
                whens: vec![(test, Expr::Const(crate::types::Value::Null))],
                otherwise: Some(Box::new(row)),
            },
            None => row,
        };
        (value, DataType::Record(shape))
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
        let Some(cmp) = super::cmp_op(op) else {
            return Err(Error::internal("a row comparison without a comparison"));
        };
        // Each pair bound once, as `=` binds it (the operands made one type).
        let mut operands = Vec::with_capacity(2 * left.len());
        for (l, r) in left.iter().zip(right) {
            match self.bind_binary(l, &B::Eq, r, scope)?.0 {
                Expr::Cmp(_, a, b) => {
                    operands.push(*a);
                    operands.push(*b);
                }
                _ => {
                    return Err(Error::unsupported(
                        "comparison of rows of these types is not supported",
                    ))
                }
            }
        }
        Ok((Expr::Func(Func::RowCompare(cmp), operands), DataType::Bool))
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
