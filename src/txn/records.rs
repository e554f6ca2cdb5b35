//! The payloads of WAL records, and how recovery applies them.
//!
//! - Commit: dropped table ids, then per table: id, truncated flag, and each written key
//!   with its after-image (`encode_row`) or a deletion mark.
//! - CreateTable / SetPrimaryKey: table id and the full table definition.
//! - DropTable: table id (used when a transaction that created a table rolls back).
//! - SequenceAdvance: sequence name and the highest value that may have been handed out.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::WriteSet;
use crate::error::{Error, Result, SqlState};
use crate::storage::{Catalog, Column, Key, Row, TableDef, TableId};
use crate::types::{self, DataType, Value};
use crate::wal::{Lsn, Reader, RecordKind, Writer};

fn corrupt(what: String) -> Error {
    Error::new(SqlState("XX001"), format!("corrupt WAL record: {what}"))
}

fn put_type(w: &mut Writer, t: &DataType) {
    match t {
        DataType::Bool => w.u8(1),
        DataType::Int2 => w.u8(2),
        DataType::Int4 => w.u8(3),
        DataType::Int8 => w.u8(4),
        DataType::Float4 => w.u8(5),
        DataType::Float8 => w.u8(6),
        DataType::Numeric(m) => {
            w.u8(7);
            let (p, s) = m.unwrap_or((0, 0));
            w.u8(p);
            w.u8(s);
        }
        DataType::Text => w.u8(8),
        DataType::Varchar(n) => {
            w.u8(9);
            w.u32(n.unwrap_or(0));
        }
        DataType::Char(n) => {
            w.u8(10);
            w.u32(*n);
        }
        DataType::Bytea => w.u8(11),
        DataType::Date => w.u8(12),
        DataType::Timestamp => w.u8(13),
        DataType::TimestampTz => w.u8(14),
        DataType::Unknown => w.u8(8),
    }
}

fn get_type(r: &mut Reader) -> Result<DataType> {
    Ok(match r.u8()? {
        1 => DataType::Bool,
        2 => DataType::Int2,
        3 => DataType::Int4,
        4 => DataType::Int8,
        5 => DataType::Float4,
        6 => DataType::Float8,
        7 => {
            let (p, s) = (r.u8()?, r.u8()?);
            DataType::Numeric(if p == 0 { None } else { Some((p, s)) })
        }
        8 => DataType::Text,
        9 => {
            let n = r.u32()?;
            DataType::Varchar(if n == 0 { None } else { Some(n) })
        }
        10 => DataType::Char(r.u32()?),
        11 => DataType::Bytea,
        12 => DataType::Date,
        13 => DataType::Timestamp,
        14 => DataType::TimestampTz,
        t => return Err(corrupt(format!("unknown type tag {t}"))),
    })
}

fn put_def(w: &mut Writer, id: TableId, def: &TableDef) {
    w.u32(id.0);
    w.str(&def.name);
    w.varint(def.columns.len() as u64);
    for c in &def.columns {
        w.str(&c.name);
        put_type(w, &c.data_type);
        w.u8(c.not_null as u8);
        w.opt_str(c.default.as_deref());
    }
    w.varint(def.primary_key.len() as u64);
    for &i in &def.primary_key {
        w.varint(i as u64);
    }
    w.opt_str(def.pkey_name.as_deref());
    w.varint(def.owned_sequences.len() as u64);
    for s in &def.owned_sequences {
        w.str(s);
    }
}

fn get_def(r: &mut Reader) -> Result<(TableId, TableDef)> {
    let id = TableId(r.u32()?);
    let name = r.str()?;
    let ncols = r.varint()?;
    let mut columns = Vec::new();
    for _ in 0..ncols {
        let name = r.str()?;
        let data_type = get_type(r)?;
        let not_null = r.u8()? != 0;
        let default = r.opt_str()?;
        columns.push(Column {
            name,
            data_type,
            not_null,
            default,
        });
    }
    let npk = r.varint()?;
    let mut primary_key = Vec::new();
    for _ in 0..npk {
        let i = r.varint()? as usize;
        if i >= columns.len() {
            return Err(corrupt("primary key column out of range".into()));
        }
        primary_key.push(i);
    }
    let pkey_name = r.opt_str()?;
    let nseq = r.varint()?;
    let mut owned_sequences = Vec::new();
    for _ in 0..nseq {
        owned_sequences.push(r.str()?);
    }
    Ok((
        id,
        TableDef {
            name,
            columns,
            primary_key,
            pkey_name,
            owned_sequences,
        },
    ))
}

pub fn encode_table_def(id: TableId, def: &TableDef) -> Vec<u8> {
    let mut w = Writer::default();
    put_def(&mut w, id, def);
    w.buf
}

pub fn encode_drop_table(id: TableId) -> Vec<u8> {
    let mut w = Writer::default();
    w.u32(id.0);
    w.buf
}

pub fn encode_sequence_advance(name: &str, upto: i64) -> Vec<u8> {
    let mut w = Writer::default();
    w.str(name);
    w.u64(upto as u64);
    w.buf
}

/// A transaction's commit record: tables it created (their creation is confirmed), tables
/// it dropped, then its row changes.
pub fn encode_commit(writes: &WriteSet, created: &[TableId], dropped: &[TableId]) -> Vec<u8> {
    let mut w = Writer::default();
    w.varint(created.len() as u64);
    for id in created {
        w.u32(id.0);
    }
    w.varint(dropped.len() as u64);
    for id in dropped {
        w.u32(id.0);
    }
    w.varint(writes.tables.len() as u64);
    let mut row = Vec::new();
    for (id, tw) in &writes.tables {
        w.u32(id.0);
        w.u8(tw.truncated as u8);
        w.varint(tw.rows.len() as u64);
        for (key, image) in &tw.rows {
            w.bytes(key);
            match image {
                None => w.u8(0),
                Some(r) => {
                    w.u8(1);
                    row.clear();
                    types::encode_row(r, &mut row);
                    w.bytes(&row);
                }
            }
        }
    }
    w.buf
}

/// Replay state across records: tables whose creating transaction has not (yet) been
/// seen to commit. Whatever is left at the end of the log was never committed: drop it.
#[derive(Default)]
pub struct Replay {
    pub unconfirmed: std::collections::HashSet<TableId>,
}

impl Replay {
    /// Drop the tables whose creation never committed.
    pub fn finish(self, catalog: &Catalog) {
        for id in self.unconfirmed {
            drop_by_id(catalog, id);
        }
    }
}

/// Apply one replayed record to the catalog and storage. `lsn` is the record's end.
pub fn replay(
    catalog: &Catalog,
    state: &mut Replay,
    kind: RecordKind,
    payload: &[u8],
    lsn: Lsn,
) -> Result<()> {
    let mut r = Reader::new(payload);
    match kind {
        RecordKind::CreateTable => {
            let (id, def) = get_def(&mut r)?;
            if catalog.table_by_id(id).is_none() {
                catalog.create_table_with_id(id, def)?;
            }
            state.unconfirmed.insert(id);
        }
        RecordKind::DropTable => {
            let id = TableId(r.u32()?);
            state.unconfirmed.remove(&id);
            drop_by_id(catalog, id);
        }
        RecordKind::SetPrimaryKey => {
            let (id, def) = get_def(&mut r)?;
            let table = catalog
                .table_by_id(id)
                .ok_or_else(|| corrupt(format!("no table {}", id.0)))?;
            let mut rows: BTreeMap<Key, Row> = BTreeMap::new();
            table.scan(
                (std::ops::Bound::Unbounded, std::ops::Bound::Unbounded),
                lsn,
                false,
                |_, row| {
                    let vals: Vec<Value> =
                        def.primary_key.iter().map(|&i| row[i].clone()).collect();
                    let mut key = Vec::new();
                    types::encode_key(&vals, &mut key);
                    rows.insert(key, row.clone());
                    true
                },
            );
            table.replace_all(lsn, rows);
            table.set_def(def);
            catalog.table_altered();
        }
        RecordKind::SequenceAdvance => {
            let name = r.str()?;
            let upto = r.u64()? as i64;
            if let Some(seq) = catalog.sequence(&name) {
                seq.advance_past(upto);
            }
        }
        RecordKind::Commit => {
            let ncreated = r.varint()?;
            for _ in 0..ncreated {
                state.unconfirmed.remove(&TableId(r.u32()?));
            }
            let ndropped = r.varint()?;
            for _ in 0..ndropped {
                let id = TableId(r.u32()?);
                state.unconfirmed.remove(&id);
                drop_by_id(catalog, id);
            }
            let ntables = r.varint()?;
            for _ in 0..ntables {
                let id = TableId(r.u32()?);
                let truncated = r.u8()? != 0;
                let nrows = r.varint()?;
                let table = catalog.table_by_id(id);
                let types: Vec<DataType> = table
                    .as_ref()
                    .map(|t| t.def().columns.iter().map(|c| c.data_type).collect())
                    .unwrap_or_default();
                let mut rows: Vec<(Key, Option<Row>)> =
                    Vec::with_capacity(nrows.min(1 << 20) as usize);
                for _ in 0..nrows {
                    let key = r.bytes()?.to_vec();
                    let image = match r.u8()? {
                        0 => None,
                        1 => {
                            let bytes = r.bytes()?;
                            if table.is_some() {
                                Some(Arc::from(types::decode_row(bytes, &types)?))
                            } else {
                                None
                            }
                        }
                        t => return Err(corrupt(format!("bad row image tag {t}"))),
                    };
                    rows.push((key, image));
                }
                // Rows of a table dropped later in the log are skipped with it.
                if let Some(table) = table {
                    table.install(lsn, rows.iter().map(|(k, v)| (k, v)), truncated, lsn);
                }
            }
        }
    }
    if !r.is_done() {
        return Err(corrupt(format!("{kind:?} record has trailing bytes")));
    }
    Ok(())
}

fn drop_by_id(catalog: &Catalog, id: TableId) {
    if let Some(t) = catalog.table_by_id(id) {
        catalog.drop_table(&t.def().name);
    }
}
