//! Grouping and DISTINCT past their memory limit: a hash table while it fits, then the
//! rest of the input sorted on disk.
//!
//! GROUP BY keeps one entry per group (its key and its aggregates' running states) in a
//! hash table. While the table's estimated size is under its limit (`hash_mem_bytes`:
//! twice `work_mem`, PostgreSQL's default `hash_mem_multiplier`), a row of a new group
//! adds an entry. Past it, the table is frozen: a row of a group already in it still
//! updates that group, and a row of any other group goes, with its group key, to an
//! external sort ([`super::sort`]). At the end the table's groups are finished, then the
//! sorted rows are read back one group at a time (a run of equal keys) and aggregated
//! with fresh states. DISTINCT does the same with the output rows, the table holding the
//! rows seen so far and the sort the others, read back with repeats dropped.
//!
//! # Invariants
//!
//! - **A group is whole in one place.** Once the table is frozen no group enters it, so
//!   every row of a group that was not in it at that moment went to the spill: no group
//!   is finished twice, and each sees every one of its rows.
//! - **Equality is the table's**: the spill is read back in the order of
//!   [`super::compare_sort_keys`], under which values equal for the hash table (`Value`'s
//!   `Eq`, NULLs equal) are adjacent, and a run ends where that equality fails.
//! - **Bounded**: the table holds at most its limit plus one group; the spill's memory is
//!   the sort's (`work_mem`); reading back holds one group's states.
//! - **The same answer either way**: which groups are in memory changes only the order
//!   of rows without ORDER BY, never their values (tests compare both with PostgreSQL).
//!
//! Left out: an aggregate's state that grows with its input (`array_agg`,
//! `string_agg`, `agg(DISTINCT x)`, ordered aggregates) is counted at its size when its
//! group was created; such a group's growth is not bounded (nor is it in PostgreSQL).

use std::path::PathBuf;

use rustc_hash::{FxHashMap, FxHashSet};

use super::sort::{value_bytes, Check, ExternalSort};
use super::{check_cancel, truthy, AggState, Executor};
use crate::error::Result;
use crate::sql::expr::Expr;
use crate::sql::plan::{Aggregation, OrderKey};
use crate::types::Value;

/// Estimated memory of one group's entry besides its key's values: the table's slot,
/// the key's two copies' vectors and each aggregate's state.
const GROUP_ENTRY_BYTES: usize = 96;
const AGG_STATE_BYTES: usize = 64;

/// Rows read back from a spill between two interrupt checks.
const CHECK_EVERY_ROWS: usize = 1024;

/// Where a grouping or DISTINCT may spill: its table's limit and the sort's directory
/// and memory.
#[derive(Clone)]
pub struct SpillTo {
    pub hash_mem_bytes: usize,
    pub sort_mem_bytes: usize,
    pub temp_dir: PathBuf,
}

/// Ascending keys with NULLs last: the order a spill is read back in.
fn key_order(width: usize) -> Vec<OrderKey> {
    (0..width)
        .map(|_| OrderKey {
            expr: Expr::Const(Value::Null),
            desc: false,
            nulls_first: false,
        })
        .collect()
}

fn key_bytes(key: &[Value]) -> usize {
    key.iter().map(value_bytes).sum()
}

/// The groups of a GROUP BY (or of aggregates without one) being built.
pub(super) struct Groups<'p> {
    agg: &'p Aggregation,
    index: FxHashMap<Vec<Value>, usize>,
    states: Vec<(Vec<Value>, Vec<AggState>)>,
    bytes: usize,
    /// Where rows of groups not in the table go once it is full; None: never full.
    spill: Option<(SpillTo, Option<ExternalSort>)>,
}

impl<'p> Groups<'p> {
    /// Groups held in memory whatever their number.
    pub(super) fn in_memory(agg: &'p Aggregation) -> Groups<'p> {
        Groups {
            agg,
            index: FxHashMap::default(),
            states: Vec::new(),
            bytes: 0,
            spill: None,
        }
    }

    /// Groups held in memory up to `to.hash_mem_bytes`, the rest sorted on disk.
    pub(super) fn spilling(agg: &'p Aggregation, to: SpillTo) -> Groups<'p> {
        Groups {
            spill: Some((to, None)),
            ..Groups::in_memory(agg)
        }
    }

    fn full(&self) -> bool {
        self.spill
            .as_ref()
            .is_some_and(|(to, _)| self.bytes >= to.hash_mem_bytes)
    }

    /// The index of a new group for `key`.
    fn add(&mut self, key: Vec<Value>) -> usize {
        self.bytes +=
            GROUP_ENTRY_BYTES + 2 * key_bytes(&key) + AGG_STATE_BYTES * self.agg.aggs.len();
        let states = self.agg.aggs.iter().map(AggState::new).collect();
        self.states.push((key.clone(), states));
        self.index.insert(key, self.states.len() - 1);
        self.states.len() - 1
    }
}

/// The output rows of a SELECT DISTINCT seen so far, held in memory up to a limit; the
/// rest sorted on disk and read back without repeats.
pub(super) struct Distinct {
    seen: FxHashSet<Vec<Value>>,
    bytes: usize,
    to: SpillTo,
    spilled: Option<ExternalSort>,
    /// The rows' width (all have the same).
    width: usize,
}

impl Distinct {
    pub(super) fn new(to: SpillTo) -> Distinct {
        Distinct {
            seen: FxHashSet::default(),
            bytes: 0,
            to,
            spilled: None,
            width: 0,
        }
    }

    /// Whether `row` (an output row, with its ORDER BY keys) is to be returned now: it
    /// is new and the table had room for it. A row seen before is dropped; any other is
    /// kept on disk for [`Distinct::finish`].
    pub(super) fn admit(
        &mut self,
        row: &[Value],
        order_keys: &[Value],
        check: &Check,
    ) -> Result<bool> {
        if self.seen.contains(row) {
            return Ok(false);
        }
        if self.bytes < self.to.hash_mem_bytes {
            self.bytes += GROUP_ENTRY_BYTES + key_bytes(row);
            self.seen.insert(row.to_vec());
            return Ok(true);
        }
        self.width = row.len();
        let order = key_order(row.len());
        let to = &self.to;
        self.spilled
            .get_or_insert_with(|| ExternalSort::new(to.sort_mem_bytes, None, to.temp_dir.clone()))
            .push(&order, (row.to_vec(), order_keys.to_vec()), check)?;
        Ok(false)
    }

    /// The rows kept on disk, each once, with their ORDER BY keys, to `pass`.
    pub(super) fn finish(
        self,
        check: &Check,
        mut pass: impl FnMut(Vec<Value>, Vec<Value>) -> Result<()>,
    ) -> Result<()> {
        let Some(spilled) = self.spilled else {
            return Ok(());
        };
        let order = key_order(self.width);
        let mut sorted = spilled.finish(&order, check)?;
        let mut previous: Option<Vec<Value>> = None;
        let mut read = 0usize;
        while let Some((row, order_keys)) = sorted.next_sort_row(&order)? {
            read += 1;
            if read.is_multiple_of(CHECK_EVERY_ROWS) {
                check()?;
            }
            if previous.as_ref() == Some(&row) {
                continue;
            }
            previous = Some(row.clone());
            pass(order_keys, row)?;
        }
        Ok(())
    }
}

impl Executor<'_> {
    /// Give one input row to its group's aggregates: in memory if its group is there or
    /// there is room for it, else to the spill.
    pub(super) fn group_row(&self, groups: &mut Groups, row: &[Value]) -> Result<()> {
        let key = groups
            .agg
            .keys
            .iter()
            .map(|k| self.eval(k, row))
            .collect::<Result<Vec<_>>>()?;
        let index = match groups.index.get(&key) {
            Some(&i) => i,
            None if !groups.full() => groups.add(key),
            None => {
                let Some((to, spilled)) = &mut groups.spill else {
                    return Ok(());
                };
                let order = key_order(key.len());
                return spilled
                    .get_or_insert_with(|| {
                        ExternalSort::new(to.sort_mem_bytes, None, to.temp_dir.clone())
                    })
                    .push(&order, (key, row.to_vec()), &|| check_cancel(self.slot));
            }
        };
        self.aggregate_row(groups.agg, &mut groups.states[index].1, row)
    }

    /// Give one input row to a group's aggregates.
    pub(super) fn aggregate_row(
        &self,
        agg: &Aggregation,
        states: &mut [AggState],
        row: &[Value],
    ) -> Result<()> {
        for (state, call) in states.iter_mut().zip(&agg.aggs) {
            if let Some(filter) = &call.filter {
                if !matches!(self.eval(filter, row)?, Value::Bool(true)) {
                    continue;
                }
            }
            let v = match &call.arg {
                Some(e) => Some(self.eval(e, row)?),
                None => None,
            };
            let d = match &call.delimiter {
                Some(d) => Some(self.eval(d, row)?),
                None => None,
            };
            let keys = || {
                call.order_by
                    .iter()
                    .map(|k| self.eval(&k.expr, row))
                    .collect::<Result<Vec<_>>>()
            };
            state.input(keys, v, d)?;
        }
        Ok(())
    }

    /// Each group's row (its key, then its aggregates) that passes HAVING, to `emit`
    /// until it returns false: the groups in memory, then those spilled, read back in
    /// key order one group at a time. Aggregates without GROUP BY over no rows give one
    /// row.
    pub(super) fn finish_groups(
        &self,
        mut groups: Groups,
        emit: &mut dyn FnMut(&[Value]) -> Result<bool>,
    ) -> Result<()> {
        let agg = groups.agg;
        if groups.states.is_empty() && agg.keys.is_empty() {
            groups.add(Vec::new());
        }
        for (key, states) in std::mem::take(&mut groups.states) {
            if !self.finish_group(agg, key, states, emit)? {
                return Ok(());
            }
        }
        let Some((_, Some(spilled))) = groups.spill else {
            return Ok(());
        };
        let check = || check_cancel(self.slot);
        let order = key_order(agg.keys.len());
        let mut sorted = spilled.finish(&order, &check)?;
        let mut group: Option<(Vec<Value>, Vec<AggState>)> = None;
        let mut read = 0usize;
        while let Some((key, row)) = sorted.next_sort_row(&order)? {
            read += 1;
            if read.is_multiple_of(CHECK_EVERY_ROWS) {
                check()?;
            }
            if group.as_ref().is_some_and(|(k, _)| *k != key) {
                if let Some((k, states)) = group.take() {
                    if !self.finish_group(agg, k, states, emit)? {
                        return Ok(());
                    }
                }
            }
            let (_, states) =
                group.get_or_insert_with(|| (key, agg.aggs.iter().map(AggState::new).collect()));
            self.aggregate_row(agg, states, &row)?;
        }
        if let Some((k, states)) = group {
            self.finish_group(agg, k, states, emit)?;
        }
        Ok(())
    }

    /// A group's row, to `emit` if it passes HAVING; what `emit` returns (true if it
    /// did not pass).
    fn finish_group(
        &self,
        agg: &Aggregation,
        key: Vec<Value>,
        states: Vec<AggState>,
        emit: &mut dyn FnMut(&[Value]) -> Result<bool>,
    ) -> Result<bool> {
        let mut row = key;
        for s in states {
            row.push(s.finish()?);
        }
        if let Some(h) = &agg.having {
            if !truthy(&self.eval(h, &row)?) {
                return Ok(true);
            }
        }
        emit(&row)
    }
}
