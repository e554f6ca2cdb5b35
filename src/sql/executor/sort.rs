//! Sorting past `work_mem`: an external merge sort for a SELECT's ORDER BY (and, with no
//! keys, the spool of a long unsorted result).
//!
//! Rows (their sort keys and output values) collect in memory until their estimated size
//! passes the limit; then they are sorted and written out as a run, a temporary file of
//! the sorted rows. Whenever [`MERGE_FAN_IN`] runs of one level have accumulated they are
//! merged into one run of the next level. At the end, if nothing was written, the rows
//! are sorted in memory as before; otherwise the last rows become a run too, and the runs
//! are merged, the merged rows read one by one as the client takes them. With a LIMIT,
//! only the first LIMIT + OFFSET rows are kept of what is in memory and of each run.
//!
//! # Invariants
//!
//! - **The order is the in-memory sort's**: rows compare with the same function
//!   (`compare_sort_keys`), and equal rows keep their arrival order (runs are merged
//!   preferring the earlier run, and each run was sorted stably), so spilling changes when
//!   rows are produced, never which or in what order.
//! - **A temporary file never outlives its sort**: it is unlinked as soon as it is created
//!   (only its open descriptor names it), so neither an error nor a crash leaves it on disk.
//! - **Bytes read back are checked**: a run is read by the same process that wrote it, but
//!   a short or corrupt file is an error (XX001), never a panic.
//! - **Bounded**: memory is the limit plus one row and one read buffer per merged run;
//!   open files are fewer than [`MERGE_FAN_IN`] per level.
//! - **Interruptible**: the statement's check runs every [`CHECK_EVERY_ROWS`] rows
//!   written, so a cancel or `statement_timeout` stops a long spill or merge.

use std::cmp::Ordering;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;

use super::compare_sort_keys;
use crate::error::{Error, Result, SqlState};
use crate::sql::plan::OrderKey;
use crate::types::Interval;
use crate::types::{DataType, Value};

/// With a LIMIT, the rows collected before the surplus past it is dropped, at least.
const TOP_ROWS_MIN_BATCH: usize = 1024;

/// Rows written between two interrupt checks.
const CHECK_EVERY_ROWS: u64 = 1024;

/// The largest row a run may hold (a longer length read back is corruption).
const MAX_SORTED_ROW_BYTES: usize = 1 << 30;

/// Runs merged at once; more are merged in passes.
const MERGE_FAN_IN: usize = 32;

/// The read buffer of each run being merged.
const RUN_READ_BUFFER_BYTES: usize = 32 * 1024;

/// The write buffer of each spool (a hash join may have many batches open).
const SPOOL_WRITE_BUFFER_BYTES: usize = 16 * 1024;

/// Nesting of arrays and records a spilled value may have.
const MAX_VALUE_DEPTH: usize = 64;

/// A row being sorted: its ORDER BY keys and its output values.
pub type SortRow = (Vec<Value>, Vec<Value>);

/// Rows collected for sorting, written out in sorted runs past the memory limit.
pub struct ExternalSort {
    limit_bytes: usize,
    /// Only this many first rows are wanted (LIMIT + OFFSET): the rest are dropped as
    /// the rows collect, so memory holds at most about twice as many.
    keep: Option<usize>,
    dir: PathBuf,
    rows: Vec<SortRow>,
    bytes: usize,
    runs: Vec<Run>,
    codec: Codec,
}

/// The sorted rows: in memory, or merged from runs on disk.
pub enum Sorted {
    InMemory(std::vec::IntoIter<SortRow>),
    Merging(Merge),
}

/// A sorted run in a temporary file.
struct Run {
    file: File,
    rows: u64,
    /// 0 for rows sorted in memory, one more for each merge they went through.
    level: u32,
}

impl ExternalSort {
    /// Sort in at most `limit_bytes` of memory, spilling to files in `dir`; only the
    /// first `keep` rows, if given, are wanted.
    pub fn new(limit_bytes: usize, keep: Option<usize>, dir: PathBuf) -> ExternalSort {
        ExternalSort {
            limit_bytes,
            keep,
            dir,
            rows: Vec::new(),
            bytes: 0,
            runs: Vec::new(),
            codec: Codec::default(),
        }
    }

    /// Rows pushed and not dropped past the LIMIT.
    pub fn rows(&self) -> usize {
        self.rows.len() + self.runs.iter().map(|r| r.rows as usize).sum::<usize>()
    }

    /// Add a row; past the memory limit, the rows so far are sorted and written out.
    /// `check` is called between rows written (cancel, `statement_timeout`).
    pub fn push(&mut self, order_by: &[OrderKey], row: SortRow, check: &Check) -> Result<()> {
        self.bytes += row_bytes(&row);
        self.rows.push(row);
        if let Some(keep) = self.keep {
            if self.rows.len() >= keep.max(TOP_ROWS_MIN_BATCH).saturating_mul(2) {
                // A stable sort then the first rows: what the whole sort would start with.
                super::sort_by_keys(order_by, &mut self.rows)?;
                self.rows.truncate(keep);
                self.bytes = self.rows.iter().map(row_bytes).sum();
            }
        }
        if self.bytes > self.limit_bytes {
            self.spill(order_by, check)?;
        }
        Ok(())
    }

    /// Write the rows in memory out as a sorted run; then, while the last
    /// [`MERGE_FAN_IN`] runs are of one level, merge them into one of the next level. So
    /// each row is rewritten once per level (log base 32 of the runs), and at most 31
    /// runs per level are open.
    fn spill(&mut self, order_by: &[OrderKey], check: &Check) -> Result<()> {
        let mut rows = std::mem::take(&mut self.rows);
        self.bytes = 0;
        super::sort_by_keys(order_by, &mut rows)?;
        if let Some(keep) = self.keep {
            rows.truncate(keep);
        }
        let run = write_run(&self.dir, &mut self.codec, rows.iter().map(Ok), 0, check)?;
        self.runs.push(run);
        while self.runs.len() >= MERGE_FAN_IN {
            let group_at = self.runs.len() - MERGE_FAN_IN;
            let level = self.runs[group_at].level;
            if self.runs[group_at..].iter().any(|r| r.level != level) {
                break;
            }
            let group = self.runs.split_off(group_at);
            let merged = self.merge_into_run(group, order_by, level + 1, check)?;
            self.runs.push(merged);
        }
        Ok(())
    }

    /// Merge `runs` (consecutive, in arrival order) into one run, only the first `keep`
    /// rows of them if there is a LIMIT.
    fn merge_into_run(
        &mut self,
        runs: Vec<Run>,
        order_by: &[OrderKey],
        level: u32,
        check: &Check,
    ) -> Result<Run> {
        let mut merge = Merge::new(runs, Arc::new(self.codec.clone()), order_by)?;
        let mut left = self.keep.unwrap_or(usize::MAX);
        let rows = std::iter::from_fn(|| {
            if left == 0 {
                return None;
            }
            left -= 1;
            merge.next_row(order_by).transpose()
        });
        write_run(&self.dir, &mut self.codec, rows, level, check)
    }

    /// All rows, sorted.
    pub fn finish(mut self, order_by: &[OrderKey], check: &Check) -> Result<Sorted> {
        if self.runs.is_empty() {
            super::sort_by_keys(order_by, &mut self.rows)?;
            return Ok(Sorted::InMemory(self.rows.into_iter()));
        }
        if !self.rows.is_empty() {
            self.spill(order_by, check)?;
        }
        // Left: fewer than MERGE_FAN_IN runs per level; merge the earliest first until
        // one merge can read them all.
        while self.runs.len() > MERGE_FAN_IN {
            let rest = self.runs.split_off(MERGE_FAN_IN);
            let group = std::mem::take(&mut self.runs);
            let merged = self.merge_into_run(group, order_by, u32::MAX, check)?;
            self.runs.push(merged);
            self.runs.extend(rest);
        }
        let runs = std::mem::take(&mut self.runs);
        Ok(Sorted::Merging(Merge::new(
            runs,
            Arc::new(self.codec),
            order_by,
        )?))
    }
}

/// What a sort calls between rows it writes: the statement's interrupt check.
pub type Check<'a> = dyn Fn() -> Result<()> + 'a;

impl Sorted {
    /// The next row's output values, None after the last.
    pub fn next_row(&mut self, order_by: &[OrderKey]) -> Result<Option<Vec<Value>>> {
        match self {
            Sorted::InMemory(rows) => Ok(rows.next().map(|(_, row)| row)),
            Sorted::Merging(merge) => Ok(merge.next_row(order_by)?.map(|(_, row)| row)),
        }
    }

    /// The next row with its sort keys, None after the last.
    pub fn next_sort_row(&mut self, order_by: &[OrderKey]) -> Result<Option<SortRow>> {
        match self {
            Sorted::InMemory(rows) => Ok(rows.next()),
            Sorted::Merging(merge) => merge.next_row(order_by),
        }
    }
}

/// The rows of several runs, merged in order: a binary heap of the runs by their next
/// rows (among equal rows, the earlier run's first).
pub struct Merge {
    readers: Vec<RunReader>,
    /// Each run's next row (None once it is exhausted).
    heads: Vec<Option<SortRow>>,
    /// The runs that have a next row, as a heap: the smallest first.
    heap: Vec<usize>,
    codec: Arc<Codec>,
}

struct RunReader {
    input: BufReader<File>,
    left: u64,
}

impl RunReader {
    fn new(mut file: File, rows: u64) -> Result<RunReader> {
        file.rewind().map_err(temp_file_error)?;
        Ok(RunReader {
            input: BufReader::with_capacity(RUN_READ_BUFFER_BYTES, file),
            left: rows,
        })
    }

    /// The next row written, None after the last.
    fn next(&mut self, codec: &Codec) -> Result<Option<SortRow>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let mut len = [0u8; 4];
        self.input.read_exact(&mut len).map_err(temp_file_error)?;
        let len = u32::from_le_bytes(len) as usize;
        if len > MAX_SORTED_ROW_BYTES {
            return Err(corrupt());
        }
        let mut bytes = vec![0u8; len];
        self.input.read_exact(&mut bytes).map_err(temp_file_error)?;
        let mut at = bytes.as_slice();
        let keys = codec.get_values(&mut at)?;
        let row = codec.get_values(&mut at)?;
        if !at.is_empty() {
            return Err(corrupt());
        }
        Ok(Some((keys, row)))
    }
}

/// Rows appended to a temporary file and read back in the order written (a hash join's
/// batch, `hash_join`): bounded in memory by its write buffer.
pub struct Spool {
    out: BufWriter<File>,
    codec: Codec,
    rows: u64,
    scratch: Vec<u8>,
}

/// A spool's rows, read back.
pub struct SpoolReader {
    reader: RunReader,
    codec: Codec,
}

impl Spool {
    pub fn new(dir: &Path) -> Result<Spool> {
        Ok(Spool {
            out: BufWriter::with_capacity(SPOOL_WRITE_BUFFER_BYTES, temp_file(dir)?),
            codec: Codec::default(),
            rows: 0,
            scratch: Vec::new(),
        })
    }

    pub fn push(&mut self, row: &SortRow) -> Result<()> {
        write_row(&mut self.out, &mut self.codec, row, &mut self.scratch)?;
        self.rows += 1;
        Ok(())
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    pub fn read_back(self) -> Result<SpoolReader> {
        let file = self
            .out
            .into_inner()
            .map_err(|e| temp_file_error(e.into_error()))?;
        Ok(SpoolReader {
            reader: RunReader::new(file, self.rows)?,
            codec: self.codec,
        })
    }
}

impl SpoolReader {
    pub fn next_row(&mut self) -> Result<Option<SortRow>> {
        self.reader.next(&self.codec)
    }
}

impl Merge {
    fn new(runs: Vec<Run>, codec: Arc<Codec>, order_by: &[OrderKey]) -> Result<Merge> {
        let mut readers = Vec::with_capacity(runs.len());
        for run in runs {
            readers.push(RunReader::new(run.file, run.rows)?);
        }
        let mut merge = Merge {
            heads: Vec::with_capacity(readers.len()),
            heap: Vec::with_capacity(readers.len()),
            readers,
            codec,
        };
        for i in 0..merge.readers.len() {
            let head = merge.read(i)?;
            let has_row = head.is_some();
            merge.heads.push(head);
            if has_row {
                merge.heap.push(i);
                merge.sift_up(merge.heap.len() - 1, order_by)?;
            }
        }
        Ok(merge)
    }

    fn read(&mut self, i: usize) -> Result<Option<SortRow>> {
        self.readers[i].next(&self.codec)
    }

    /// Whether run `a`'s next row goes before run `b`'s.
    fn before(&self, a: usize, b: usize, order_by: &[OrderKey]) -> Result<bool> {
        let (Some((ka, _)), Some((kb, _))) = (&self.heads[a], &self.heads[b]) else {
            return Err(corrupt());
        };
        Ok(match compare_sort_keys(order_by, ka, kb)? {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => a < b,
        })
    }

    fn sift_up(&mut self, mut at: usize, order_by: &[OrderKey]) -> Result<()> {
        while at > 0 {
            let parent = (at - 1) / 2;
            if !self.before(self.heap[at], self.heap[parent], order_by)? {
                break;
            }
            self.heap.swap(at, parent);
            at = parent;
        }
        Ok(())
    }

    fn sift_down(&mut self, mut at: usize, order_by: &[OrderKey]) -> Result<()> {
        loop {
            let mut least = at;
            for child in [2 * at + 1, 2 * at + 2] {
                if child < self.heap.len()
                    && self.before(self.heap[child], self.heap[least], order_by)?
                {
                    least = child;
                }
            }
            if least == at {
                return Ok(());
            }
            self.heap.swap(at, least);
            at = least;
        }
    }

    /// The smallest next row, and its run's following row in its place.
    fn next_row(&mut self, order_by: &[OrderKey]) -> Result<Option<SortRow>> {
        let Some(&first) = self.heap.first() else {
            return Ok(None);
        };
        let next = self.read(first)?;
        let exhausted = next.is_none();
        let row = std::mem::replace(&mut self.heads[first], next);
        if exhausted {
            let last = self.heap.len() - 1;
            self.heap.swap(0, last);
            self.heap.pop();
        }
        self.sift_down(0, order_by)?;
        Ok(row)
    }
}

/// Write sorted rows to a new temporary file, unlinked at once.
fn write_run<'r>(
    dir: &Path,
    codec: &mut Codec,
    rows: impl Iterator<Item = Result<impl std::borrow::Borrow<SortRow> + 'r>>,
    level: u32,
    check: &Check,
) -> Result<Run> {
    let mut out = BufWriter::with_capacity(64 * 1024, temp_file(dir)?);
    let mut bytes = Vec::new();
    let mut count = 0u64;
    for row in rows {
        let row = row?;
        write_row(&mut out, codec, row.borrow(), &mut bytes)?;
        count += 1;
        if count.is_multiple_of(CHECK_EVERY_ROWS) {
            check()?;
        }
    }
    let file = out
        .into_inner()
        .map_err(|e| temp_file_error(e.into_error()))?;
    Ok(Run {
        file,
        rows: count,
        level,
    })
}

/// A new temporary file in `dir`, unlinked at once: only its descriptor names it.
fn temp_file(dir: &Path) -> Result<File> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    std::fs::create_dir_all(dir).map_err(temp_file_error)?;
    let path = dir.join(format!(
        "sort.{}.{}",
        std::process::id(),
        NEXT.fetch_add(1, AtomicOrdering::Relaxed)
    ));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(temp_file_error)?;
    std::fs::remove_file(&path).map_err(temp_file_error)?;
    Ok(file)
}

/// One row: its encoded length, then its keys and values (`scratch` is reused).
fn write_row(
    out: &mut BufWriter<File>,
    codec: &mut Codec,
    (keys, values): &SortRow,
    scratch: &mut Vec<u8>,
) -> Result<()> {
    scratch.clear();
    codec.put_values(keys, scratch)?;
    codec.put_values(values, scratch)?;
    let len = u32::try_from(scratch.len()).map_err(|_| {
        Error::new(
            SqlState::PROGRAM_LIMIT_EXCEEDED,
            "a sorted row is too large",
        )
    })?;
    out.write_all(&len.to_le_bytes()).map_err(temp_file_error)?;
    out.write_all(scratch).map_err(temp_file_error)?;
    Ok(())
}

fn temp_file_error(e: std::io::Error) -> Error {
    Error::new(
        SqlState::IO_ERROR,
        format!("could not use a temporary file: {e}"),
    )
}

fn corrupt() -> Error {
    Error::new(SqlState::DATA_CORRUPTED, "a temporary sort file is corrupt")
}

/// Estimated memory of a row being sorted, in bytes.
fn row_bytes((keys, values): &SortRow) -> usize {
    2 * std::mem::size_of::<Vec<Value>>()
        + keys.iter().chain(values).map(value_bytes).sum::<usize>()
}

pub(super) fn value_bytes(v: &Value) -> usize {
    std::mem::size_of::<Value>()
        + match v {
            Value::Text(s) => s.len(),
            Value::Bytea(b) => b.len(),
            Value::Reg(_, name) => name.len(),
            Value::Array(_, items) | Value::Record(_, items) => items.iter().map(value_bytes).sum(),
            // A document's nodes: about its text's size.
            Value::Jsonb(j) => j.to_string().len(),
            _ => 0,
        }
}

/// The encoding of values in a run: a tag byte per value, then its contents. Array
/// element types and record shapes are `'static` references, written as their index in
/// this codec's list (the runs are read back by the process that wrote them).
#[derive(Clone, Default)]
struct Codec {
    element_types: Vec<&'static DataType>,
    shapes: Vec<&'static [(&'static str, DataType)]>,
}

mod tag {
    pub const NULL: u8 = 0;
    pub const BOOL: u8 = 1;
    pub const INT2: u8 = 2;
    pub const INT4: u8 = 3;
    pub const INT8: u8 = 4;
    pub const FLOAT4: u8 = 5;
    pub const FLOAT8: u8 = 6;
    pub const NUMERIC: u8 = 7;
    pub const TEXT: u8 = 8;
    pub const BYTEA: u8 = 9;
    pub const DATE: u8 = 10;
    pub const TIMESTAMP: u8 = 11;
    pub const TIMESTAMPTZ: u8 = 12;
    pub const OID: u8 = 13;
    pub const REG: u8 = 14;
    pub const ARRAY: u8 = 15;
    pub const UUID: u8 = 16;
    pub const INTERVAL: u8 = 17;
    pub const JSONB: u8 = 18;
    pub const RECORD: u8 = 19;
}

impl Codec {
    fn put_values(&mut self, values: &[Value], out: &mut Vec<u8>) -> Result<()> {
        put_len(values.len(), out)?;
        for v in values {
            self.put(v, out, 0)?;
        }
        Ok(())
    }

    fn put(&mut self, v: &Value, out: &mut Vec<u8>, depth: usize) -> Result<()> {
        if depth > MAX_VALUE_DEPTH {
            return Err(Error::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                "a value nested too deeply to sort on disk",
            ));
        }
        match v {
            Value::Null => out.push(tag::NULL),
            Value::Bool(b) => out.extend([tag::BOOL, *b as u8]),
            Value::Int2(i) => put_tagged(out, tag::INT2, &i.to_le_bytes()),
            Value::Int4(i) => put_tagged(out, tag::INT4, &i.to_le_bytes()),
            Value::Int8(i) => put_tagged(out, tag::INT8, &i.to_le_bytes()),
            Value::Float4(f) => put_tagged(out, tag::FLOAT4, &f.to_bits().to_le_bytes()),
            Value::Float8(f) => put_tagged(out, tag::FLOAT8, &f.to_bits().to_le_bytes()),
            Value::Numeric(d) => put_tagged(out, tag::NUMERIC, &d.serialize()),
            Value::Text(s) => {
                out.push(tag::TEXT);
                put_bytes(s.as_bytes(), out)?;
            }
            Value::Bytea(b) => {
                out.push(tag::BYTEA);
                put_bytes(b, out)?;
            }
            Value::Date(d) => put_tagged(out, tag::DATE, &d.to_le_bytes()),
            Value::Timestamp(t) => put_tagged(out, tag::TIMESTAMP, &t.to_le_bytes()),
            Value::TimestampTz(t) => put_tagged(out, tag::TIMESTAMPTZ, &t.to_le_bytes()),
            Value::Oid(o) => put_tagged(out, tag::OID, &o.to_le_bytes()),
            Value::Reg(o, name) => {
                put_tagged(out, tag::REG, &o.to_le_bytes());
                put_bytes(name.as_bytes(), out)?;
            }
            Value::Array(element, items) => {
                let at = index_in(&mut self.element_types, element, |a, b| {
                    std::ptr::eq(*a, *b)
                });
                out.push(tag::ARRAY);
                self.put_items(at, items, out, depth)?;
            }
            Value::Uuid(u) => put_tagged(out, tag::UUID, &u.to_le_bytes()),
            Value::Interval(i) => {
                out.push(tag::INTERVAL);
                out.extend(i.months.to_le_bytes());
                out.extend(i.days.to_le_bytes());
                out.extend(i.micros.to_le_bytes());
            }
            Value::Jsonb(j) => {
                out.push(tag::JSONB);
                put_bytes(j.to_string().as_bytes(), out)?;
            }
            Value::Record(shape, fields) => {
                let at = index_in(&mut self.shapes, shape, |a, b| {
                    std::ptr::eq(a.as_ptr(), b.as_ptr()) && a.len() == b.len()
                });
                out.push(tag::RECORD);
                self.put_items(at, fields, out, depth)?;
            }
        }
        Ok(())
    }

    /// An array's or record's static (as its index in this codec) and its items.
    fn put_items(
        &mut self,
        at: usize,
        items: &[Value],
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<()> {
        put_len(at, out)?;
        put_len(items.len(), out)?;
        for item in items {
            self.put(item, out, depth + 1)?;
        }
        Ok(())
    }

    /// The items [`Codec::put_items`] wrote (after the static's index).
    fn get_items(&self, at: &mut &[u8], depth: usize) -> Result<Vec<Value>> {
        let n = get_len(at)?;
        if n > at.len() {
            return Err(corrupt());
        }
        (0..n).map(|_| self.get(at, depth + 1)).collect()
    }

    fn get_values(&self, at: &mut &[u8]) -> Result<Vec<Value>> {
        let n = get_len(at)?;
        if n > at.len() {
            return Err(corrupt());
        }
        (0..n).map(|_| self.get(at, 0)).collect()
    }

    fn get(&self, at: &mut &[u8], depth: usize) -> Result<Value> {
        if depth > MAX_VALUE_DEPTH {
            return Err(corrupt());
        }
        let tag = take::<1>(at)?[0];
        Ok(match tag {
            tag::NULL => Value::Null,
            tag::BOOL => Value::Bool(take::<1>(at)?[0] != 0),
            tag::INT2 => Value::Int2(i16::from_le_bytes(take(at)?)),
            tag::INT4 => Value::Int4(i32::from_le_bytes(take(at)?)),
            tag::INT8 => Value::Int8(i64::from_le_bytes(take(at)?)),
            tag::FLOAT4 => Value::Float4(f32::from_bits(u32::from_le_bytes(take(at)?))),
            tag::FLOAT8 => Value::Float8(f64::from_bits(u64::from_le_bytes(take(at)?))),
            tag::NUMERIC => Value::Numeric(rust_decimal::Decimal::deserialize(take(at)?)),
            tag::TEXT => Value::Text(get_string(at)?),
            tag::BYTEA => Value::Bytea(get_bytes(at)?.to_vec()),
            tag::DATE => Value::Date(i32::from_le_bytes(take(at)?)),
            tag::TIMESTAMP => Value::Timestamp(i64::from_le_bytes(take(at)?)),
            tag::TIMESTAMPTZ => Value::TimestampTz(i64::from_le_bytes(take(at)?)),
            tag::OID => Value::Oid(u32::from_le_bytes(take(at)?)),
            tag::REG => {
                let oid = u32::from_le_bytes(take(at)?);
                Value::Reg(oid, Arc::from(get_string(at)?))
            }
            tag::ARRAY => {
                let element = *self.element_types.get(get_len(at)?).ok_or_else(corrupt)?;
                Value::Array(element, self.get_items(at, depth)?.into())
            }
            tag::UUID => Value::Uuid(u128::from_le_bytes(take(at)?)),
            tag::INTERVAL => Value::Interval(Interval {
                months: i32::from_le_bytes(take(at)?),
                days: i32::from_le_bytes(take(at)?),
                micros: i64::from_le_bytes(take(at)?),
            }),
            tag::JSONB => Value::Jsonb(Arc::new(crate::types::jsonb::parse(&get_string(at)?)?)),
            tag::RECORD => {
                let shape = *self.shapes.get(get_len(at)?).ok_or_else(corrupt)?;
                Value::Record(shape, self.get_items(at, depth)?.into())
            }
            _ => return Err(corrupt()),
        })
    }
}

/// The index of `item` in `list` (by `same`), added at the end if it is not there.
fn index_in<T: Copy>(list: &mut Vec<T>, item: &T, same: impl Fn(&T, &T) -> bool) -> usize {
    match list.iter().position(|x| same(x, item)) {
        Some(at) => at,
        None => {
            list.push(*item);
            list.len() - 1
        }
    }
}

fn put_tagged(out: &mut Vec<u8>, tag: u8, bytes: &[u8]) {
    out.push(tag);
    out.extend_from_slice(bytes);
}

fn put_len(n: usize, out: &mut Vec<u8>) -> Result<()> {
    let n = u32::try_from(n).map_err(|_| {
        Error::new(
            SqlState::PROGRAM_LIMIT_EXCEEDED,
            "a sorted value is too large",
        )
    })?;
    out.extend(n.to_le_bytes());
    Ok(())
}

fn put_bytes(bytes: &[u8], out: &mut Vec<u8>) -> Result<()> {
    put_len(bytes.len(), out)?;
    out.extend_from_slice(bytes);
    Ok(())
}

fn take<const N: usize>(at: &mut &[u8]) -> Result<[u8; N]> {
    let (head, rest) = at.split_first_chunk::<N>().ok_or_else(corrupt)?;
    *at = rest;
    Ok(*head)
}

fn get_len(at: &mut &[u8]) -> Result<usize> {
    Ok(u32::from_le_bytes(take(at)?) as usize)
}

fn get_bytes<'a>(at: &mut &'a [u8]) -> Result<&'a [u8]> {
    let n = get_len(at)?;
    if n > at.len() {
        return Err(corrupt());
    }
    let (bytes, rest) = at.split_at(n);
    *at = rest;
    Ok(bytes)
}

fn get_string(at: &mut &[u8]) -> Result<String> {
    String::from_utf8(get_bytes(at)?.to_vec()).map_err(|_| corrupt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::expr::Expr;

    fn key(column: usize, desc: bool, nulls_first: bool) -> OrderKey {
        OrderKey {
            expr: Expr::Column(column),
            desc,
            nulls_first,
        }
    }

    fn sample_values() -> Vec<Value> {
        let shape = crate::types::record_shape(vec![
            ("a".to_string(), DataType::Int4),
            ("b".to_string(), DataType::Text),
        ])
        .expect("shape");
        vec![
            Value::Null,
            Value::Bool(true),
            Value::Int2(-7),
            Value::Int4(1 << 20),
            Value::Int8(-(1 << 40)),
            Value::Float4(-0.5),
            Value::Float8(f64::NAN),
            Value::Numeric("12.340".parse().expect("numeric")),
            Value::Text("é, with \0 inside".into()),
            Value::Bytea(vec![0, 255, 7]),
            Value::Date(-3),
            Value::Timestamp(123_456_789),
            Value::TimestampTz(-1),
            Value::Oid(42),
            Value::Reg(23, Arc::from("integer")),
            Value::Array(&DataType::Int4, vec![Value::Int4(1), Value::Null].into()),
            Value::Uuid(u128::MAX - 5),
            Value::Interval(Interval {
                months: 1,
                days: -2,
                micros: 3,
            }),
            Value::Jsonb(Arc::new(
                crate::types::jsonb::parse(r#"{"b": [1.50, null], "a": "x"}"#).expect("jsonb"),
            )),
            Value::Record(shape, vec![Value::Int4(1), Value::Text("r".into())].into()),
        ]
    }

    #[test]
    fn every_kind_of_value_reads_back_as_written() {
        let mut codec = Codec::default();
        let values = sample_values();
        let mut bytes = Vec::new();
        codec.put_values(&values, &mut bytes).expect("encodes");
        let mut at = bytes.as_slice();
        let back = codec.get_values(&mut at).expect("decodes");
        assert!(at.is_empty());
        assert_eq!(back.len(), values.len());
        for (a, b) in values.iter().zip(&back) {
            // NaN is not equal to itself: compare the output text.
            assert_eq!(crate::types::format_text(a), crate::types::format_text(b));
            assert_eq!(std::mem::discriminant(a), std::mem::discriminant(b));
        }
        // Cut anywhere, the bytes are an error, never a panic.
        for cut in 0..bytes.len() {
            let mut at = &bytes[..cut];
            assert!(codec.get_values(&mut at).is_err(), "cut at {cut} decoded");
        }
    }

    /// Rows (key, arrival number) sorted on disk with a tiny memory limit come out as the
    /// in-memory stable sort orders them, through several merge passes.
    #[test]
    fn spilled_sort_orders_as_the_in_memory_sort() {
        let order_by = vec![key(0, true, false), key(1, false, true)];
        let mut rows: Vec<SortRow> = Vec::new();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for i in 0..5000i64 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let a = match seed % 11 {
                0 => Value::Null,
                r => Value::Int8((r % 5) as i64),
            };
            let b = match (seed >> 8) % 7 {
                0 => Value::Null,
                r => Value::Text(format!("t{r}")),
            };
            rows.push((vec![a, b], vec![Value::Int8(i)]));
        }
        let dir = std::env::temp_dir().join(format!("steadydb-sort-test-{}", std::process::id()));
        let mut sorter = ExternalSort::new(2_000, None, dir.clone());
        for row in rows.clone() {
            sorter.push(&order_by, row, &|| Ok(())).expect("push");
        }
        // Merged level by level as they came: never more than a level's worth open.
        assert!(
            sorter.runs.len() < 2 * MERGE_FAN_IN,
            "{} runs",
            sorter.runs.len()
        );
        assert!(
            sorter.runs.iter().any(|r| r.level >= 1),
            "no run was merged"
        );
        let mut sorted = sorter.finish(&order_by, &|| Ok(())).expect("finish");
        assert!(matches!(sorted, Sorted::Merging(_)));
        let mut got = Vec::new();
        while let Some(row) = sorted.next_row(&order_by).expect("next") {
            got.push(row);
        }
        super::super::sort_by_keys(&order_by, &mut rows).expect("sorts");
        let want: Vec<Vec<Value>> = rows.into_iter().map(|(_, r)| r).collect();
        assert_eq!(got, want);
        // Every temporary file was unlinked at once.
        let left = std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0);
        assert_eq!(left, 0);
        let _ = std::fs::remove_dir(&dir);
    }

    #[test]
    fn with_a_limit_only_the_first_rows_are_kept() {
        let order_by = vec![key(0, false, false)];
        let dir = std::env::temp_dir().join("steadydb-sort-test-top");
        let mut sorter = ExternalSort::new(1 << 30, Some(10), dir);
        let mut all = Vec::new();
        for i in 0..10_000i64 {
            let row = (vec![Value::Int8((i * 7919) % 101)], vec![Value::Int8(i)]);
            all.push(row.clone());
            sorter.push(&order_by, row, &|| Ok(())).expect("push");
            assert!(sorter.rows.len() < 2 * TOP_ROWS_MIN_BATCH);
        }
        let mut sorted = sorter.finish(&order_by, &|| Ok(())).expect("finish");
        let mut got = Vec::new();
        while let Some(row) = sorted.next_row(&order_by).expect("next") {
            got.push(row);
        }
        super::super::sort_by_keys(&order_by, &mut all).expect("sorts");
        let want: Vec<Vec<Value>> = all.into_iter().map(|(_, r)| r).collect();
        assert_eq!(got[..10], want[..10]);
    }

    #[test]
    fn a_sort_within_memory_writes_nothing() {
        let order_by = vec![key(0, false, false)];
        let dir = std::env::temp_dir().join("steadydb-sort-test-unused");
        let mut sorter = ExternalSort::new(1 << 20, None, dir);
        for i in [3i64, 1, 2] {
            sorter
                .push(
                    &order_by,
                    (vec![Value::Int8(i)], vec![Value::Int8(i)]),
                    &|| Ok(()),
                )
                .expect("push");
        }
        let mut sorted = sorter.finish(&order_by, &|| Ok(())).expect("finish");
        assert!(matches!(sorted, Sorted::InMemory(_)));
        let mut got = Vec::new();
        while let Some(row) = sorted.next_row(&order_by).expect("next") {
            got.push(row[0].clone());
        }
        assert_eq!(got, vec![Value::Int8(1), Value::Int8(2), Value::Int8(3)]);
    }
}
