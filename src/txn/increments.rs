//! Rows as a table takes them, and deferred increments applied to them: the checks an
//! UPDATE's new row passes (types, NOT NULL), shared by statements and by the commit that
//! turns a transaction's deferred increments into after-images.

use std::cmp::Ordering;

use super::Increment;
use crate::error::{Error, Result, SqlState};
use crate::storage::{Row, Table, TableDef};
use crate::types::{self, Value};

/// Cast every value to its column type and check NOT NULL.
pub fn check_row(def: &TableDef, mut row: Vec<Value>) -> Result<Vec<Value>> {
    for (v, col) in row.iter_mut().zip(&def.columns) {
        if !v.is_null() {
            *v = types::cast_assign(std::mem::replace(v, Value::Null), &col.data_type)?;
        }
    }
    if let Some(i) = def
        .columns
        .iter()
        .zip(&row)
        .position(|(c, v)| c.not_null && v.is_null())
    {
        let shown = failing_row(def, &row);
        return Err(Error::new(
            SqlState::NOT_NULL_VIOLATION,
            format!(
                "null value in column \"{}\" of relation \"{}\" violates not-null constraint",
                def.columns[i].name, def.name
            ),
        )
        .with_detail(format!("Failing row contains ({shown})."))
        .with_table(def.name.clone())
        .with_column(def.columns[i].name.clone()));
    }
    Ok(row)
}

/// A row of a table `def` describes as a constraint violation's detail shows it:
/// `1, null, text` (its dropped columns left out).
pub fn failing_row(def: &TableDef, row: &[Value]) -> String {
    row.iter()
        .enumerate()
        .filter(|(i, _)| !def.columns.get(*i).is_some_and(|c| c.dropped))
        .map(|(_, x)| {
            let mut out = Vec::new();
            match x {
                Value::Null => return "null".to_string(),
                Value::Text(s) => return s.clone(),
                other => types::encode_text(other, &mut out),
            }
            String::from_utf8(out).unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Apply deferred increments to the latest version of a row, checked as an UPDATE's new
/// row is. The row exists: its holders keep it.
pub fn apply_increments(table: &Table, key: &[u8], incs: &[Increment]) -> Result<Vec<Value>> {
    let Some(current) = table.latest(key)?.and_then(|v| v.row) else {
        // Deleted by an owner that went first while this increment waited to
        // materialize behind it.
        return Err(Error::new(
            SqlState::SERIALIZATION_FAILURE,
            "could not serialize access due to concurrent delete",
        ));
    };
    with_increments(&table.def(), &current, incs)
}

/// `current` with `incs` applied, checked as an UPDATE's new row is.
pub fn with_increments(def: &TableDef, current: &Row, incs: &[Increment]) -> Result<Vec<Value>> {
    let mut new = current.to_vec();
    for inc in incs {
        let value = &new[inc.column];
        new[inc.column] = if inc.operand_first {
            types::arith(inc.op, &inc.operand, value)?
        } else {
            types::arith(inc.op, value, &inc.operand)?
        };
    }
    check_row(def, new)
}

/// Whether `own` increments keep `current` in range (and NOT NULL) whichever subset of
/// `others` is applied too: the extremes are all the others that raise the column and all
/// that lower it, each on top of `own`.
pub fn admit_increments(
    def: &TableDef,
    current: &Row,
    own: &[Increment],
    others: &[Increment],
) -> Result<()> {
    with_increments(def, current, own)?;
    if others.is_empty() {
        return Ok(());
    }
    let (mut raising, mut lowering) = (own.to_vec(), own.to_vec());
    for inc in others {
        let now = &current[inc.column];
        let after = if inc.operand_first {
            types::arith(inc.op, &inc.operand, now)?
        } else {
            types::arith(inc.op, now, &inc.operand)?
        };
        match types::compare(&after, now) {
            Some(Ordering::Greater) => raising.push(inc.clone()),
            Some(Ordering::Less) => lowering.push(inc.clone()),
            // A NULL stays NULL; a zero changes nothing.
            _ => {}
        }
    }
    with_increments(def, current, &raising)?;
    with_increments(def, current, &lowering)?;
    Ok(())
}
