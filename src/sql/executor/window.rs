//! Window function values: the rows sorted by partition and the window's ORDER BY, then
//! per partition, per row, what the function gives over its peers, its partition or
//! its frame. An aggregate whose frame starts at the partition's start is accumulated
//! as the frame's end moves forward; other frames are aggregated afresh per row.
//!
//! The rows are held while their estimated size is under `hash_mem_bytes` (twice
//! `work_mem`). Past it, when every window of the query has a PARTITION BY, the windows
//! are taken a group at a time, a group being the windows of one PARTITION BY (in the
//! order each first appears). The rows, with a place kept for every window's value, go
//! with the group's partition keys to an external sort ([`super::sort`]), which keeps
//! the rows of a partition in their order of arrival, and are read back one partition at
//! a time: the group's values are computed over that partition alone, which is what
//! they would be with every row held, and put in their places; then the rows go on to
//! the next group's sort, and after the last to the query. Memory then holds one
//! partition. The rows come out by the last group's partition (SQL leaves their order
//! unspecified without ORDER BY). A window without PARTITION BY is over every row, so a
//! query with one holds them all (at most [`WINDOW_MAX_ROWS`]).
//!
//! In a grouped query the windows are over its groups (after HAVING): their arguments,
//! PARTITION BY and ORDER BY are expressions of the grouped row, aggregates included,
//! as in PostgreSQL.

use super::sort::{value_bytes, ExternalSort};
use super::{check_cancel, sort_by_keys, AggState, Executor, CANCEL_CHECK_ROWS};
use crate::error::{Error, Result, SqlState};
use crate::sql::bind::{Frame, FrameBound, FrameUnits, WindowCall, WindowFunc};
use crate::sql::expr::Expr;
use crate::sql::plan::{OrderKey, SelectPlan};
use crate::types::Value;

/// The most rows a query with window functions holds (when they cannot go to disk).
pub(super) const WINDOW_MAX_ROWS: usize = 10_000_000;

/// Where rows go, one at a time: false from it stops.
type RowSink<'a> = dyn FnMut(&[Value]) -> Result<bool> + 'a;

/// What gives a windowed query its rows (FROM's, or a grouped query's groups): it sends
/// each to the sink it is handed.
type RowSource<'a> = dyn FnMut(&mut RowSink<'_>) -> Result<()> + 'a;

/// The windows of one PARTITION BY: it, and their positions in the query's list.
struct WindowGroup<'p> {
    partition: &'p [Expr],
    windows: Vec<usize>,
    /// The partition keys as sort keys (ascending, NULLs last: any order groups them).
    order: Vec<OrderKey>,
}

/// Sort keys of `exprs`, ascending with NULLs last (any order groups a partition's rows).
fn ascending(exprs: &[Expr]) -> impl Iterator<Item = OrderKey> + '_ {
    exprs.iter().map(|p| OrderKey {
        expr: p.clone(),
        desc: false,
        nulls_first: false,
    })
}

/// `windows` grouped by PARTITION BY (as bound), in the order each first appears; None
/// when one has none (it is over every row).
fn partition_groups(windows: &[WindowCall]) -> Option<Vec<WindowGroup<'_>>> {
    let mut groups: Vec<WindowGroup> = Vec::new();
    for (i, w) in windows.iter().enumerate() {
        if w.partition_by.is_empty() {
            return None;
        }
        // (Compared by their bound form's text, as equal expressions print alike.)
        let shape = format!("{:?}", w.partition_by);
        match groups
            .iter_mut()
            .find(|g| format!("{:?}", g.partition) == shape)
        {
            Some(g) => g.windows.push(i),
            None => groups.push(WindowGroup {
                partition: &w.partition_by,
                windows: vec![i],
                order: ascending(&w.partition_by).collect(),
            }),
        }
    }
    Some(groups)
}

impl Executor<'_> {
    /// The rows of a SELECT with window functions: its FROM's rows (joined, filtered),
    /// each followed by its windows' values, to `visit` (false from it stops).
    pub(super) fn for_each_windowed_row(
        &self,
        plan: &SelectPlan,
        visit: &mut dyn FnMut(&[Value]) -> Result<bool>,
    ) -> Result<()> {
        let mut from_rows = |take: &mut RowSink<'_>| match (&plan.source, &plan.set_op) {
            (None, None) => {
                if self.matches(&plan.filter, &[])? {
                    take(&[])?;
                }
                Ok(())
            }
            _ => self.for_each_source_row(plan, take),
        };
        self.windowed_rows(plan, &mut from_rows, visit)
    }

    /// The rows `input` gives (a grouped query's groups, or FROM's rows), each followed
    /// by its windows' values, to `visit`.
    pub(super) fn windowed_rows(
        &self,
        plan: &SelectPlan,
        input: &mut RowSource<'_>,
        visit: &mut dyn FnMut(&[Value]) -> Result<bool>,
    ) -> Result<()> {
        let groups = partition_groups(&plan.windows);
        let check = || check_cancel(self.slot);
        let limit = self.spill.hash_mem_bytes;
        let mut rows: Vec<Vec<Value>> = Vec::new();
        let mut bytes = 0usize;
        // Past the limit: the first group's sort, which takes each row with a place
        // (NULL until computed) for every window's value.
        let mut sorter: Option<ExternalSort> = None;
        let mut take = |row: &[Value]| -> Result<bool> {
            if let (Some(sorter), Some(groups)) = (&mut sorter, &groups) {
                let mut row = row.to_vec();
                row.resize(row.len() + plan.windows.len(), Value::Null);
                self.push_to_group(&groups[0], sorter, row, &check)?;
                return Ok(true);
            }
            if rows.len() >= WINDOW_MAX_ROWS {
                return Err(Error::new(
                    SqlState::PROGRAM_LIMIT_EXCEEDED,
                    format!("window functions over more than {WINDOW_MAX_ROWS} rows are not supported yet"),
                ));
            }
            bytes += row.iter().map(value_bytes).sum::<usize>();
            rows.push(row.to_vec());
            if let Some(groups) = groups.as_ref().filter(|_| bytes > limit) {
                let mut spill = self.window_sort();
                for mut row in rows.drain(..) {
                    row.resize(row.len() + plan.windows.len(), Value::Null);
                    self.push_to_group(&groups[0], &mut spill, row, &check)?;
                }
                sorter = Some(spill);
            }
            Ok(true)
        };
        input(&mut take)?;
        let (Some(mut spill), Some(groups)) = (sorter, groups) else {
            return self.visit_windowed(plan, rows, visit).map(|_| ());
        };
        for (g, group) in groups.iter().enumerate() {
            let next = groups.get(g + 1);
            let mut next_spill = next.map(|_| self.window_sort());
            let mut to_next = |part: Vec<Vec<Value>>| -> Result<bool> {
                for row in part {
                    match (next, &mut next_spill) {
                        (Some(next), Some(next_spill)) => {
                            self.push_to_group(next, next_spill, row, &check)?
                        }
                        _ => {
                            if !visit(&row)? {
                                return Ok(false);
                            }
                        }
                    }
                }
                Ok(true)
            };
            // One partition (a run of equal keys) at a time.
            let mut sorted = spill.finish(&group.order, &check)?;
            let mut part: Vec<Vec<Value>> = Vec::new();
            let mut part_keys: Option<Vec<Value>> = None;
            while let Some((keys, row)) = sorted.next_sort_row(&group.order)? {
                if part_keys.as_ref().is_some_and(|k| *k != keys) {
                    let done = self.group_values(plan, group, std::mem::take(&mut part))?;
                    if !to_next(done)? {
                        return Ok(());
                    }
                }
                part_keys = Some(keys);
                part.push(row);
            }
            let done = self.group_values(plan, group, part)?;
            if !to_next(done)? {
                return Ok(());
            }
            match next_spill {
                Some(s) => spill = s,
                None => break,
            }
        }
        Ok(())
    }

    /// An external sort for a group's rows, within `work_mem`.
    fn window_sort(&self) -> ExternalSort {
        ExternalSort::new(self.spill.sort_mem_bytes, None, self.spill.temp_dir.clone())
    }

    /// Send `row` (with its places for the windows' values) to `sorter`, under `group`'s
    /// partition keys.
    fn push_to_group(
        &self,
        group: &WindowGroup,
        sorter: &mut ExternalSort,
        row: Vec<Value>,
        check: &dyn Fn() -> Result<()>,
    ) -> Result<()> {
        let keys = group
            .partition
            .iter()
            .map(|p| self.eval(p, &row))
            .collect::<Result<Vec<_>>>()?;
        sorter.push(&group.order, (keys, row), check)
    }

    /// One partition's rows (each with its places for the windows' values after the
    /// query's columns) with `group`'s windows' values put in their places.
    fn group_values(
        &self,
        plan: &SelectPlan,
        group: &WindowGroup,
        mut part: Vec<Vec<Value>>,
    ) -> Result<Vec<Vec<Value>>> {
        let width = part.first().map_or(0, |r| r.len() - plan.windows.len());
        for &w in &group.windows {
            let values = self.window_values(&plan.windows[w], &part)?;
            for (row, v) in part.iter_mut().zip(values) {
                row[width + w] = v;
            }
        }
        Ok(part)
    }

    /// `rows`, each with its windows' values over `rows`, to `visit`; false once it
    /// asked to stop.
    fn visit_windowed(
        &self,
        plan: &SelectPlan,
        rows: Vec<Vec<Value>>,
        visit: &mut dyn FnMut(&[Value]) -> Result<bool>,
    ) -> Result<bool> {
        let columns = plan
            .windows
            .iter()
            .map(|w| self.window_values(w, &rows))
            .collect::<Result<Vec<_>>>()?;
        for (i, mut row) in rows.into_iter().enumerate() {
            row.extend(columns.iter().map(|c| c[i].clone()));
            if !visit(&row)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// A partition's peer groups (rows equal in the window's ORDER BY): each one's
/// positions, and each position's group.
struct Peers {
    groups: Vec<(usize, usize)>,
    group_of: Vec<usize>,
}

impl Peers {
    fn of(part: &[(Vec<Value>, usize)], np: usize) -> Peers {
        let mut groups = Vec::new();
        let mut group_of = Vec::with_capacity(part.len());
        let mut i = 0;
        while i < part.len() {
            let n = part[i..]
                .iter()
                .position(|(k, _)| k[np..] != part[i].0[np..])
                .unwrap_or(part.len() - i);
            groups.push((i, i + n));
            group_of.extend(std::iter::repeat_n(groups.len() - 1, n));
            i += n;
        }
        Peers { groups, group_of }
    }
}

/// A frame's offsets, evaluated once per call: counts of rows or groups, or for RANGE
/// the values the key may differ by.
struct Offsets {
    start: i64,
    end: i64,
    start_value: Value,
    end_value: Value,
}

/// Where a RANGE offset bound falls in a partition sorted on one key (`keys`, its
/// non-NULL ones at `non_null`): the first position past (end) or at (start) the key
/// `key ∓ offset`, in the sort's direction. A target past the type's range is past
/// every key.
#[allow(clippy::too_many_arguments)]
fn range_bound(
    keys: &[&Value],
    non_null: (usize, usize),
    key: &Value,
    offset: &Value,
    preceding: bool,
    start: bool,
    desc: bool,
) -> usize {
    use crate::types::ArithOp;
    // Toward the sort's start: smaller keys ascending, larger descending.
    let toward_start = preceding;
    let op = if toward_start != desc {
        ArithOp::Sub
    } else {
        ArithOp::Add
    };
    let target = match (key.as_i64(), offset.as_i64()) {
        (Some(k), Some(o)) => {
            let t = if op == ArithOp::Sub {
                k as i128 - o as i128
            } else {
                k as i128 + o as i128
            };
            i64::try_from(t).ok().map(Value::Int8)
        }
        _ => crate::types::arith(op, key, offset).ok(),
    };
    let Some(target) = target else {
        return if toward_start { non_null.0 } else { non_null.1 };
    };
    let region = &keys[non_null.0..non_null.1];
    let ord = |k: &Value| crate::types::compare(k, &target).unwrap_or(std::cmp::Ordering::Equal);
    use std::cmp::Ordering::{Greater, Less};
    let before = region.partition_point(|k| match (start, desc) {
        // The first key at or past the target: ascending, keys below it come before.
        (true, false) => ord(k) == Less,
        (true, true) => ord(k) == Greater,
        // The first key past the target.
        (false, false) => ord(k) != Greater,
        (false, true) => ord(k) != Less,
    });
    non_null.0 + before
}

/// The positions `[start, end)` of row `pos`'s frame in a partition of `len` rows.
fn frame_bounds(
    frame: &Frame,
    offsets: &Offsets,
    peers: &Peers,
    pos: usize,
    len: usize,
) -> (usize, usize) {
    let g = peers.group_of[pos];
    let ng = peers.groups.len();
    let clamp = |i: i64| i.clamp(0, len as i64) as usize;
    let group_start = |k: i64| match usize::try_from(k) {
        Ok(k) if k < ng => peers.groups[k].0,
        Ok(_) => len,
        Err(_) => 0,
    };
    let group_end = |k: i64| match usize::try_from(k) {
        Ok(k) if k < ng => peers.groups[k].1,
        Ok(_) => len,
        Err(_) => 0,
    };
    let (p, gi) = (pos as i64, g as i64);
    let start = match (&frame.start, frame.units) {
        (FrameBound::UnboundedPreceding, _) => 0,
        (FrameBound::UnboundedFollowing, _) => len,
        (FrameBound::CurrentRow, FrameUnits::Rows) => pos,
        (FrameBound::CurrentRow, _) => peers.groups[g].0,
        (FrameBound::Preceding(_), FrameUnits::Groups) => {
            group_start(gi.saturating_sub(offsets.start).max(0))
        }
        (FrameBound::Following(_), FrameUnits::Groups) => {
            group_start(gi.saturating_add(offsets.start))
        }
        (FrameBound::Preceding(_), _) => clamp(p.saturating_sub(offsets.start)),
        (FrameBound::Following(_), _) => clamp(p.saturating_add(offsets.start)),
    };
    let end = match (&frame.end, frame.units) {
        (FrameBound::UnboundedFollowing, _) => len,
        (FrameBound::UnboundedPreceding, _) => 0,
        (FrameBound::CurrentRow, FrameUnits::Rows) => pos + 1,
        (FrameBound::CurrentRow, _) => peers.groups[g].1,
        (FrameBound::Preceding(_), FrameUnits::Groups) => group_end(gi.saturating_sub(offsets.end)),
        (FrameBound::Following(_), FrameUnits::Groups) => {
            group_end(gi.saturating_add(offsets.end).min(ng as i64 - 1))
        }
        (FrameBound::Preceding(_), _) => clamp(p.saturating_sub(offsets.end).saturating_add(1)),
        (FrameBound::Following(_), _) => clamp(p.saturating_add(offsets.end).saturating_add(1)),
    };
    (start, end.max(start))
}

/// ntile's bucket (from 1) of position `pos` of `len` rows in `n` buckets: the first
/// `len % n` buckets have one row more.
fn ntile(pos: usize, len: usize, n: usize) -> usize {
    let (q, r) = (len / n, len % n);
    let big = r * (q + 1);
    if pos < big {
        pos / (q + 1) + 1
    } else {
        r + (pos - big) / q.max(1) + 1
    }
}

impl Executor<'_> {
    /// A frame offset: a non-negative bigint (ROWS, GROUPS), or a non-negative value of
    /// the key's offset type (RANGE).
    fn frame_offset(&self, frame: &Frame, bound: &FrameBound, which: &str) -> Result<(i64, Value)> {
        let (FrameBound::Preceding(e) | FrameBound::Following(e)) = bound else {
            return Ok((0, Value::Null));
        };
        let v = self.eval(e, &[])?;
        if v.is_null() {
            return Err(Error::new(
                SqlState::NULL_VALUE_NOT_ALLOWED,
                format!("frame {which} offset must not be null"),
            ));
        }
        if frame.units == FrameUnits::Range {
            let zero = match &v {
                Value::Interval(_) => Value::Interval(crate::types::Interval {
                    months: 0,
                    days: 0,
                    micros: 0,
                }),
                _ => Value::Int4(0),
            };
            if crate::types::compare(&v, &zero) == Some(std::cmp::Ordering::Less) {
                return Err(Error::new(
                    SqlState::INVALID_PRECEDING_OR_FOLLOWING_SIZE,
                    "invalid preceding or following size in window function",
                ));
            }
            return Ok((0, v));
        }
        match v.as_i64() {
            Some(n) if n >= 0 => Ok((n, Value::Null)),
            _ => Err(Error::new(
                SqlState::INVALID_PRECEDING_OR_FOLLOWING_SIZE,
                format!("frame {which} offset must not be negative"),
            )),
        }
    }

    /// A window call's value for each of `rows` (in their order).
    pub(super) fn window_values(&self, w: &WindowCall, rows: &[Vec<Value>]) -> Result<Vec<Value>> {
        // Sort the rows by partition, then by the window's ORDER BY.
        let mut keyed: Vec<(Vec<Value>, usize)> = Vec::with_capacity(rows.len());
        for (i, row) in rows.iter().enumerate() {
            if i % CANCEL_CHECK_ROWS == CANCEL_CHECK_ROWS - 1 {
                check_cancel(self.slot)?;
            }
            let mut key = Vec::with_capacity(w.partition_by.len() + w.order_by.len());
            for p in &w.partition_by {
                key.push(self.eval(p, row)?);
            }
            for o in &w.order_by {
                key.push(self.eval(&o.expr, row)?);
            }
            keyed.push((key, i));
        }
        let np = w.partition_by.len();
        let order: Vec<OrderKey> = ascending(&w.partition_by)
            .chain(w.order_by.iter().cloned())
            .collect();
        sort_by_keys(&order, &mut keyed)?;
        let (start, start_value) = self.frame_offset(&w.frame, &w.frame.start, "starting")?;
        let (end, end_value) = self.frame_offset(&w.frame, &w.frame.end, "ending")?;
        let offsets = Offsets {
            start,
            end,
            start_value,
            end_value,
        };
        let mut values = vec![Value::Null; rows.len()];
        let mut start = 0;
        while start < keyed.len() {
            let end = start
                + keyed[start..]
                    .iter()
                    .position(|(k, _)| k[..np] != keyed[start].0[..np])
                    .unwrap_or(keyed.len() - start);
            self.partition_values(w, rows, &keyed[start..end], np, &offsets, &mut values)?;
            start = end;
        }
        Ok(values)
    }

    /// The values of one partition's rows (`part`: sort keys and row index, in order).
    fn partition_values(
        &self,
        w: &WindowCall,
        rows: &[Vec<Value>],
        part: &[(Vec<Value>, usize)],
        np: usize,
        offsets: &Offsets,
        values: &mut [Value],
    ) -> Result<()> {
        let len = part.len();
        let peers = Peers::of(part, np);
        // A RANGE frame with an offset: its one sort key per position, and where the
        // non-NULL keys are.
        let range_offsets = w.frame.units == FrameUnits::Range
            && [&w.frame.start, &w.frame.end]
                .iter()
                .any(|b| matches!(b, FrameBound::Preceding(_) | FrameBound::Following(_)));
        let keys: Vec<&Value> = match range_offsets {
            true => part.iter().map(|(k, _)| &k[np]).collect(),
            false => Vec::new(),
        };
        let non_null = match keys.iter().position(|k| !k.is_null()) {
            Some(first) => (
                first,
                keys.iter()
                    .rposition(|k| !k.is_null())
                    .map_or(first, |l| l + 1),
            ),
            None => (0, 0),
        };
        let desc = w.order_by.first().is_some_and(|o| o.desc);
        let bounds = |pos: usize| -> (usize, usize) {
            let (fs, fe) = frame_bounds(&w.frame, offsets, &peers, pos, len);
            if !range_offsets {
                return (fs, fe);
            }
            let (group_start, group_end) = peers.groups[peers.group_of[pos]];
            let key = keys[pos];
            let at = |bound: &FrameBound, offset: &Value, start: bool, other: usize| match bound {
                FrameBound::Preceding(_) | FrameBound::Following(_) if key.is_null() => {
                    if start {
                        group_start
                    } else {
                        group_end
                    }
                }
                FrameBound::Preceding(_) | FrameBound::Following(_) => range_bound(
                    &keys,
                    non_null,
                    key,
                    offset,
                    matches!(bound, FrameBound::Preceding(_)),
                    start,
                    desc,
                ),
                _ => other,
            };
            let s = at(&w.frame.start, &offsets.start_value, true, fs);
            let e = at(&w.frame.end, &offsets.end_value, false, fe);
            (s, e.max(s))
        };
        let call = super::w_aggregate_call(w);
        let arg_at = |pos: usize| -> Result<Value> {
            match &w.arg {
                Some(a) => self.eval(a, &rows[part[pos].1]),
                None => Ok(Value::Null),
            }
        };
        // An aggregate over frames that start at the partition's start: (state, rows
        // fed, the value at that many).
        let mut running: Option<(AggState, usize, Option<Value>)> = None;
        for pos in 0..len {
            if pos % CANCEL_CHECK_ROWS == CANCEL_CHECK_ROWS - 1 {
                check_cancel(self.slot)?;
            }
            let row = &rows[part[pos].1];
            let g = peers.group_of[pos];
            let (group_start, group_end) = peers.groups[g];
            let v = match w.func {
                WindowFunc::RowNumber => Value::Int8(pos as i64 + 1),
                WindowFunc::Rank => Value::Int8(group_start as i64 + 1),
                WindowFunc::DenseRank => Value::Int8(g as i64 + 1),
                WindowFunc::PercentRank => Value::Float8(match len {
                    1 => 0.0,
                    _ => group_start as f64 / (len - 1) as f64,
                }),
                WindowFunc::CumeDist => Value::Float8(group_end as f64 / len as f64),
                WindowFunc::Ntile => match self.eval(&w.extra[0], row)?.as_i64() {
                    None => Value::Null,
                    Some(n) if n <= 0 => {
                        return Err(Error::new(
                            SqlState("22014"),
                            "argument of ntile must be greater than zero",
                        ))
                    }
                    Some(n) => Value::Int4(ntile(pos, len, n as usize) as i32),
                },
                WindowFunc::Lag | WindowFunc::Lead => {
                    let Some(offset) = self.eval(&w.extra[0], row)?.as_i64() else {
                        values[part[pos].1] = Value::Null;
                        continue;
                    };
                    let target = match w.func {
                        WindowFunc::Lag => (pos as i64).checked_sub(offset),
                        _ => (pos as i64).checked_add(offset),
                    };
                    match target
                        .and_then(|t| usize::try_from(t).ok())
                        .filter(|&t| t < len)
                    {
                        Some(t) => arg_at(t)?,
                        None => match w.extra.get(1) {
                            Some(d) => self.eval(d, row)?,
                            None => Value::Null,
                        },
                    }
                }
                WindowFunc::FirstValue | WindowFunc::LastValue | WindowFunc::NthValue => {
                    let (fs, fe) = bounds(pos);
                    let at = match w.func {
                        WindowFunc::FirstValue => Some(fs),
                        WindowFunc::LastValue => fe.checked_sub(1),
                        _ => match self.eval(&w.extra[0], row)?.as_i64() {
                            None => {
                                values[part[pos].1] = Value::Null;
                                continue;
                            }
                            Some(n) if n <= 0 => {
                                return Err(Error::new(
                                    SqlState("22016"),
                                    "argument of nth_value must be greater than zero",
                                ))
                            }
                            Some(n) => fs.checked_add(n as usize - 1),
                        },
                    };
                    match at.filter(|&a| a >= fs && a < fe) {
                        Some(a) => arg_at(a)?,
                        None => Value::Null,
                    }
                }
                WindowFunc::Aggregate(_) => {
                    let Some(call) = call.as_ref() else {
                        return Err(Error::internal("a window aggregate without its call"));
                    };
                    let (fs, fe) = bounds(pos);
                    if matches!(w.frame.start, FrameBound::UnboundedPreceding) {
                        let (state, fed, value) =
                            running.get_or_insert_with(|| (AggState::new(call), 0, None));
                        if *fed < fe || value.is_none() {
                            while *fed < fe {
                                let row = &rows[part[*fed].1];
                                if self.matches(&call.filter, row)? {
                                    let input = self.window_arg(call, row)?;
                                    state.input(|| Ok(Vec::new()), input, None)?;
                                }
                                *fed += 1;
                            }
                            *value = Some(state.clone().finish()?);
                        }
                        value.clone().unwrap_or(Value::Null)
                    } else {
                        let mut state = AggState::new(call);
                        for p in fs..fe {
                            let row = &rows[part[p].1];
                            if self.matches(&call.filter, row)? {
                                let input = self.window_arg(call, row)?;
                                state.input(|| Ok(Vec::new()), input, None)?;
                            }
                        }
                        state.finish()?
                    }
                }
            };
            values[part[pos].1] = v;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::expr::Expr;

    #[test]
    fn ntile_gives_the_first_buckets_the_extra_rows() {
        let buckets: Vec<usize> = (0..7).map(|p| ntile(p, 7, 3)).collect();
        assert_eq!(buckets, vec![1, 1, 1, 2, 2, 3, 3]);
        // More buckets than rows: one row each.
        assert_eq!(
            (0..3).map(|p| ntile(p, 3, 5)).collect::<Vec<_>>(),
            vec![1, 2, 3]
        );
    }

    #[test]
    fn frames_are_clamped_to_the_partition() {
        let key = |v: i32| (vec![Value::Int4(v)], 0);
        // Peer groups {0}, {1, 2}, {3}.
        let part = vec![key(1), key(2), key(2), key(3)];
        let peers = Peers::of(&part, 0);
        assert_eq!(peers.groups, vec![(0, 1), (1, 3), (3, 4)]);
        let offsets = Offsets {
            start: 1,
            end: 1,
            start_value: Value::Null,
            end_value: Value::Null,
        };
        let rows = Frame {
            units: FrameUnits::Rows,
            start: FrameBound::Preceding(Expr::Const(Value::Int8(1))),
            end: FrameBound::Following(Expr::Const(Value::Int8(1))),
        };
        assert_eq!(frame_bounds(&rows, &offsets, &peers, 0, 4), (0, 2));
        assert_eq!(frame_bounds(&rows, &offsets, &peers, 3, 4), (2, 4));
        let groups = Frame {
            units: FrameUnits::Groups,
            ..rows.clone()
        };
        assert_eq!(frame_bounds(&groups, &offsets, &peers, 1, 4), (0, 4));
        assert_eq!(frame_bounds(&groups, &offsets, &peers, 0, 4), (0, 3));
        // An empty frame: 1 FOLLOWING to 1 FOLLOWING at the last row.
        let ahead = Frame {
            units: FrameUnits::Rows,
            start: FrameBound::Following(Expr::Const(Value::Int8(1))),
            end: FrameBound::Following(Expr::Const(Value::Int8(1))),
        };
        let (s, e) = frame_bounds(&ahead, &offsets, &peers, 3, 4);
        assert_eq!(s, e);
    }
}
