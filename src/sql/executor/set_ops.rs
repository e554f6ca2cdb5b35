//! UNION, INTERSECT and EXCEPT past their memory limit: both sides sorted on disk.
//!
//! UNION ALL holds nothing: the left side's rows are passed on, then the right's. The
//! other operations need every row of both sides before they can answer: they are held in
//! memory while their estimated size is under `hash_mem_bytes` (twice `work_mem`), and
//! combined there with hash tables, as before. Past it, every row so far and every later
//! one goes to an external sort ([`super::sort`]) with its side as a last key. The sorted
//! rows are read back one group of equal rows at a time, with how many times each side
//! has it (m left, n right), and the group is answered as SQL's multiset rules say:
//! UNION once; INTERSECT once if m and n are not 0, INTERSECT ALL min(m, n) times; EXCEPT
//! once if m is not 0 and n is, EXCEPT ALL max(m - n, 0) times.
//!
//! # Invariants
//!
//! - **Equality is the hash table's**: a group is a run of rows equal as `Value`s (NULLs
//!   equal), which the sort (`compare_sort_keys`) keeps adjacent, so the spilled answer
//!   has the rows the in-memory one has; only their order differs (SQL leaves it
//!   unspecified without ORDER BY; spilled, the rows come sorted).
//! - **Bounded**: memory holds the limit's rows or the sort's (`work_mem`), and one
//!   group's representative row while it is read back.

use std::path::PathBuf;

use super::sort::{value_bytes, Check, ExternalSort, Sorted};
use super::SpillTo;
use crate::error::Result;
use crate::sql::expr::Expr;
use crate::sql::plan::OrderKey;
use crate::types::Value;

/// Which side of the operation a row is from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Left = 0,
    Right = 1,
}

/// Both sides' rows, as they arrive.
pub(super) struct SetRows {
    limit_bytes: usize,
    sort_bytes: usize,
    dir: PathBuf,
    bytes: usize,
    left: Vec<Vec<Value>>,
    right: Vec<Vec<Value>>,
    /// Past the limit: every row, its side its last key.
    sorter: Option<(ExternalSort, Vec<OrderKey>)>,
}

/// What [`SetRows`] collected.
pub(super) enum Collected {
    InMemory {
        left: Vec<Vec<Value>>,
        right: Vec<Vec<Value>>,
    },
    Sorted {
        rows: Sorted,
        order: Vec<OrderKey>,
    },
}

/// Ascending order on every column and then the side.
fn order_of(width: usize) -> Vec<OrderKey> {
    (0..width)
        .map(|i| OrderKey {
            expr: Expr::Column(i),
            desc: false,
            nulls_first: false,
        })
        .collect()
}

fn row_bytes(row: &[Value]) -> usize {
    std::mem::size_of::<Vec<Value>>() + row.iter().map(value_bytes).sum::<usize>()
}

fn keyed(mut row: Vec<Value>, side: Side) -> (Vec<Value>, Vec<Value>) {
    row.push(Value::Int4(side as i32));
    (row, Vec::new())
}

impl SetRows {
    pub fn new(to: &SpillTo) -> SetRows {
        SetRows {
            limit_bytes: to.hash_mem_bytes,
            sort_bytes: to.sort_mem_bytes,
            dir: to.temp_dir.clone(),
            bytes: 0,
            left: Vec::new(),
            right: Vec::new(),
            sorter: None,
        }
    }

    pub fn push(&mut self, side: Side, row: Vec<Value>, check: &Check) -> Result<()> {
        if let Some((sorter, order)) = &mut self.sorter {
            return sorter.push(order, keyed(row, side), check);
        }
        self.bytes += row_bytes(&row);
        match side {
            Side::Left => self.left.push(row),
            Side::Right => self.right.push(row),
        }
        if self.bytes > self.limit_bytes {
            self.spill(check)?;
        }
        Ok(())
    }

    /// Move the rows held into an external sort, which takes the rest.
    fn spill(&mut self, check: &Check) -> Result<()> {
        let width = self.left.first().or(self.right.first()).map_or(0, Vec::len);
        let order = order_of(width + 1);
        let mut sorter = ExternalSort::new(self.sort_bytes, None, self.dir.clone());
        for row in std::mem::take(&mut self.left) {
            sorter.push(&order, keyed(row, Side::Left), check)?;
        }
        for row in std::mem::take(&mut self.right) {
            sorter.push(&order, keyed(row, Side::Right), check)?;
        }
        self.sorter = Some((sorter, order));
        Ok(())
    }

    pub fn finish(self, check: &Check) -> Result<Collected> {
        Ok(match self.sorter {
            None => Collected::InMemory {
                left: self.left,
                right: self.right,
            },
            Some((sorter, order)) => Collected::Sorted {
                rows: sorter.finish(&order, check)?,
                order,
            },
        })
    }
}

/// How many times a group of equal rows, `m` of the left side and `n` of the right, is in
/// the answer.
pub(super) fn times(op: SetKind, all: bool, m: usize, n: usize) -> usize {
    match (op, all) {
        (SetKind::Union, _) => 1,
        (SetKind::Intersect, false) => usize::from(m > 0 && n > 0),
        (SetKind::Intersect, true) => m.min(n),
        (SetKind::Except, false) => usize::from(m > 0 && n == 0),
        (SetKind::Except, true) => m.saturating_sub(n),
    }
}

/// The operations answered by groups (UNION ALL is not).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum SetKind {
    Union,
    Intersect,
    Except,
}

/// Read sorted rows back a group at a time and pass each row of the answer to `visit`
/// (false from it stops).
pub(super) fn merge(
    op: SetKind,
    all: bool,
    mut rows: Sorted,
    order: &[OrderKey],
    visit: &mut dyn FnMut(&[Value]) -> Result<bool>,
) -> Result<()> {
    let width = order.len() - 1;
    let mut group: Option<(Vec<Value>, usize, usize)> = None;
    let mut emit = |(row, m, n): (Vec<Value>, usize, usize)| -> Result<bool> {
        for _ in 0..times(op, all, m, n) {
            if !visit(&row)? {
                return Ok(false);
            }
        }
        Ok(true)
    };
    while let Some((mut keys, _)) = rows.next_sort_row(order)? {
        let side = keys.pop();
        keys.truncate(width);
        let left = side == Some(Value::Int4(Side::Left as i32));
        match &mut group {
            Some((row, m, n)) if *row == keys => {
                if left {
                    *m += 1;
                } else {
                    *n += 1;
                }
            }
            _ => {
                let next = (keys, usize::from(left), usize::from(!left));
                if let Some(done) = group.replace(next) {
                    if !emit(done)? {
                        return Ok(());
                    }
                }
            }
        }
    }
    if let Some(done) = group {
        emit(done)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_answered_by_the_multiset_rules() {
        use SetKind::*;
        assert_eq!(times(Union, false, 3, 0), 1);
        assert_eq!(times(Intersect, false, 3, 2), 1);
        assert_eq!(times(Intersect, false, 3, 0), 0);
        assert_eq!(times(Intersect, true, 3, 2), 2);
        assert_eq!(times(Except, false, 3, 0), 1);
        assert_eq!(times(Except, false, 3, 1), 0);
        assert_eq!(times(Except, true, 3, 1), 2);
        assert_eq!(times(Except, true, 1, 3), 0);
    }

    #[test]
    fn spilled_rows_merge_into_the_in_memory_answer() {
        let dir = std::env::temp_dir().join(format!("steadydb-setops-{}", std::process::id()));
        let to = SpillTo {
            hash_mem_bytes: 256,
            sort_mem_bytes: 256,
            temp_dir: dir.clone(),
        };
        let check = || Ok(());
        let mut rows = SetRows::new(&to);
        let left = [1, 2, 2, 3, 3, 3];
        let right = [2, 3, 3, 4];
        for v in left {
            rows.push(Side::Left, vec![Value::Int4(v), Value::Null], &check)
                .unwrap();
        }
        for v in right {
            rows.push(Side::Right, vec![Value::Int4(v), Value::Null], &check)
                .unwrap();
        }
        let Collected::Sorted { rows, order } = rows.finish(&check).unwrap() else {
            panic!("the rows should have gone to disk");
        };
        let mut got = Vec::new();
        merge(SetKind::Except, true, rows, &order, &mut |row| {
            got.push(row.to_vec());
            Ok(true)
        })
        .unwrap();
        // EXCEPT ALL: 1 once, 2 once (2 - 1), 3 once (3 - 2).
        let want: Vec<Vec<Value>> = [1, 2, 3]
            .iter()
            .map(|&v| vec![Value::Int4(v), Value::Null])
            .collect();
        assert_eq!(got, want);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
