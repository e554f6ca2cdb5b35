//! The payloads of WAL records, and how recovery applies them.
//!
//! - Commit: dropped table ids, then per table: id, truncated flag, and each written key
//!   with its after-image (`encode_row`) or a deletion mark.
//! - CreateTable: table id and the full table definition.
//! - SetPrimaryKey: table id and the new definition, then the root and every page (with
//!   its slot) of the table's rows under the new key, written and synced before the
//!   record, as a bulk load's are. (Records written before the rows were loaded this way
//!   end after the definition; their replay re-keys the rows.)
//! - DropTable: table id (used when a transaction that created a table rolls back).
//! - SequenceAdvance: sequence name and the highest value that may have been handed out.
//! - SetIndexes: the table's definition with its new indexes; replay builds new ones
//!   from the rows it has by then and drops those no longer named.
//! - CreateSequence, DropSequence, SetSequence: a sequence CREATE SEQUENCE made, its drop,
//!   and setval's next value.
//!   A commit that changed table definitions (in a transaction block: see
//!   `Transaction::change_definition`) ends with them: the bulk load and piece counts
//!   (0 for none), then each table's id and new definition, applied before its rows.
//! - WriteSetPiece: rows of one table, for a commit whose write set spilled (it is
//!   logged in pieces, never encoded whole: see `start_piece`). Its Commit record
//!   follows and names every piece by its LSN; replay applies the pieces when it reaches
//!   that record, reading them back, and ignores pieces no commit names.

use std::ops::Range;

use super::WriteSet;
use crate::error::{Error, Result, SqlState};
use crate::storage::btree::BTree;
use crate::storage::page::PageId;
use crate::storage::{get_def, put_def, Catalog, Key, SequenceOptions, TableDef, TableId};
use crate::types::{self, Value};
use crate::wal::{Lsn, Reader, RecordKind, Writer};

fn corrupt(what: String) -> Error {
    Error::new(SqlState("XX001"), format!("corrupt WAL record: {what}"))
}

pub fn encode_table_def(id: TableId, def: &TableDef) -> Vec<u8> {
    let mut w = Writer::default();
    put_def(&mut w, id, def);
    w.buf
}

pub fn encode_set_primary_key(
    id: TableId,
    def: &TableDef,
    root: PageId,
    pages: &[(PageId, u64)],
) -> Vec<u8> {
    let mut w = Writer::default();
    put_def(&mut w, id, def);
    put_pages(&mut w, root, pages);
    w.buf
}

/// A bulk-loaded tree's root and pages with their slots.
fn put_pages(w: &mut Writer, root: PageId, pages: &[(PageId, u64)]) {
    w.u64(root.0);
    w.varint(pages.len() as u64);
    for (page, slot) in pages {
        w.u64(page.0);
        w.u64(*slot);
    }
}

fn get_pages(r: &mut Reader<'_>) -> Result<(PageId, Vec<(PageId, u64)>)> {
    let root = PageId(r.u64()?);
    let npages = r.varint()?;
    let mut pages = Vec::with_capacity(npages.min(1 << 20) as usize);
    for _ in 0..npages {
        pages.push((PageId(r.u64()?), r.u64()?));
    }
    Ok((root, pages))
}

pub fn encode_drop_table(id: TableId) -> Vec<u8> {
    let mut w = Writer::default();
    w.u32(id.0);
    w.buf
}

/// A CreateSequence record. The trailing byte 1 marks a creation that its transaction's
/// commit confirms (`created`); records without it were confirmed when logged.
pub fn encode_create_sequence(name: &str, id: TableId, options: &SequenceOptions) -> Vec<u8> {
    sequence_record(name, id, options, true)
}

/// A CreateSequence record that gives a serial column's sequence an id and options
/// (`Catalog::give_sequence_id`), confirmed when logged.
pub fn encode_give_sequence_id(name: &str, id: TableId, options: &SequenceOptions) -> Vec<u8> {
    sequence_record(name, id, options, false)
}

fn sequence_record(name: &str, id: TableId, options: &SequenceOptions, pending: bool) -> Vec<u8> {
    let mut w = Writer::default();
    w.str(name);
    w.u32(id.0);
    options.put(&mut w);
    w.u8(pending as u8);
    w.buf
}

/// A CreateView record, confirmed by its transaction's commit as a CreateSequence is.
pub fn encode_create_view(view: &crate::storage::View) -> Vec<u8> {
    let mut w = Writer::default();
    view.put(&mut w);
    w.u8(1);
    w.buf
}

pub fn encode_sequence_name(name: &str) -> Vec<u8> {
    let mut w = Writer::default();
    w.str(name);
    w.buf
}

pub fn encode_set_sequence(name: &str, next: i64) -> Vec<u8> {
    let mut w = Writer::default();
    w.str(name);
    w.u64(next as u64);
    w.buf
}

/// ALTER SEQUENCE's SetSequence record: as setval's, then the sequence's new options.
pub fn encode_alter_sequence(name: &str, next: i64, options: &SequenceOptions) -> Vec<u8> {
    let mut w = Writer::default();
    w.str(name);
    w.u64(next as u64);
    options.put(&mut w);
    w.buf
}

pub fn encode_sequence_advance(name: &str, upto: i64) -> Vec<u8> {
    let mut w = Writer::default();
    w.str(name);
    w.u64(upto as u64);
    w.buf
}

/// A commit record's payload, and where each written row's image lies in it.
pub struct EncodedCommit {
    pub payload: Vec<u8>,
    /// Per written key, in the order of `writes.tables` and then of each table's rows:
    /// the range of its row image in `payload` (`None` for a deletion). The install reads
    /// the images from here, so each row is encoded once per commit.
    pub images: Vec<Option<Range<usize>>>,
}

/// Start a WriteSetPiece record's payload for rows of `table`.
pub fn start_piece(table: TableId, w: &mut Writer) {
    w.buf.clear();
    w.u32(table.0);
}

/// Add a written row to a Commit or WriteSetPiece payload: its key and after-image
/// (`None`: deleted).
pub fn put_row(key: &[u8], image: Option<&[u8]>, w: &mut Writer) {
    w.bytes(key);
    match image {
        None => w.u8(0),
        Some(image) => {
            w.u8(1);
            w.bytes(image);
        }
    }
}

/// A written row of a Commit or WriteSetPiece payload ([`put_row`]).
fn get_row<'a>(r: &mut Reader<'a>) -> Result<(&'a [u8], Option<&'a [u8]>)> {
    let key = r.bytes()?;
    let image = match r.u8()? {
        0 => None,
        1 => Some(r.bytes()?),
        t => return Err(corrupt(format!("bad row image tag {t}"))),
    };
    Ok((key, image))
}

/// A transaction's commit record: tables it created (their creation is confirmed), tables
/// it dropped, then its row changes. With `pieces`, its rows were logged ahead in
/// WriteSetPiece records, which the record names instead of holding the rows.
pub fn encode_commit(
    writes: &WriteSet,
    created: &[TableId],
    dropped: &[TableId],
    altered: &[std::sync::Arc<crate::storage::Table>],
    pieces: Option<&[Lsn]>,
) -> EncodedCommit {
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
    let mut images = Vec::with_capacity(writes.row_count());
    for (id, tw) in &writes.tables {
        w.u32(id.0);
        w.u8(tw.truncated as u8);
        if pieces.is_some() {
            w.varint(0);
            continue;
        }
        w.varint(tw.rows.len() as u64);
        let column_types = tw.table.column_types();
        for (key, image) in &tw.rows {
            let image = image.as_ref().map(|r| {
                row.clear();
                types::encode_row(r, &column_types, &mut row);
                row.as_slice()
            });
            put_row(key, image, &mut w);
            images.push(image.map(|i| w.buf.len() - i.len()..w.buf.len()));
        }
    }
    // Bulk loads: each one's pages, written and synced before this record (see
    // `storage::bulk`). Absent from records without any.
    let bulk: Vec<_> = writes
        .tables
        .iter()
        .filter_map(|(id, tw)| tw.bulk.as_ref().map(|b| (id, b)))
        .collect();
    if !bulk.is_empty() || pieces.is_some() || !altered.is_empty() {
        w.varint(bulk.len() as u64);
        for (id, load) in bulk {
            let (root, pages) = load
                .record()
                .expect("a bulk load is encoded before its commit");
            w.u32(id.0);
            put_pages(&mut w, root, pages);
        }
    }
    // The pieces, absent from records without any (or their count, 0, before the
    // definitions).
    if let Some(pieces) = pieces {
        w.varint(pieces.len() as u64);
        for lsn in pieces {
            w.u64(lsn.0);
        }
    } else if !altered.is_empty() {
        w.varint(0);
    }
    // The definitions the transaction changed, absent from records without any.
    if !altered.is_empty() {
        w.varint(altered.len() as u64);
        for table in altered {
            put_def(&mut w, table.id, &table.def());
        }
    }
    EncodedCommit {
        payload: w.buf,
        images,
    }
}

/// At the end of replay: tables whose creation never committed are dropped, and drops
/// that never committed are undone.
pub fn finish_replay(catalog: &Catalog) -> Result<()> {
    for id in catalog.unconfirmed() {
        drop_by_id(catalog, id)?;
    }
    catalog.undo_unfinished_drops();
    for name in catalog.table_names() {
        if let Some(t) = catalog.table(&name) {
            t.restore_next_row_id()?;
        }
    }
    Ok(())
}

/// A commit record, decoded (`encode_commit` writes it); rows borrow the payload.
struct CommitRecord<'a> {
    created: Vec<TableId>,
    dropped: Vec<TableId>,
    tables: Vec<TableRows<'a>>,
    loads: Vec<LoadPages>,
    /// Where the WriteSetPiece records holding the rest of its rows start.
    pieces: Vec<Lsn>,
    /// Tables whose definitions it changed, with their new definitions.
    defs: Vec<(TableId, TableDef)>,
}

struct TableRows<'a> {
    id: TableId,
    truncated: bool,
    /// Key and after-image, or None for a deletion.
    rows: Vec<(&'a [u8], Option<&'a [u8]>)>,
}

/// A bulk load's tree: its root and every page with its slot.
struct LoadPages {
    table: TableId,
    root: PageId,
    pages: Vec<(PageId, u64)>,
}

fn read_commit<'a>(r: &mut Reader<'a>) -> Result<CommitRecord<'a>> {
    let ids = |r: &mut Reader<'a>| -> Result<Vec<TableId>> {
        let n = r.varint()?;
        (0..n).map(|_| Ok(TableId(r.u32()?))).collect()
    };
    let created = ids(r)?;
    let dropped = ids(r)?;
    let ntables = r.varint()?;
    let mut tables = Vec::with_capacity(ntables.min(1 << 10) as usize);
    for _ in 0..ntables {
        let id = TableId(r.u32()?);
        let truncated = r.u8()? != 0;
        let nrows = r.varint()?;
        let mut rows = Vec::with_capacity(nrows.min(1 << 20) as usize);
        for _ in 0..nrows {
            rows.push(get_row(r)?);
        }
        tables.push(TableRows {
            id,
            truncated,
            rows,
        });
    }
    let mut loads = Vec::new();
    if !r.is_done() {
        for _ in 0..r.varint()? {
            let table = TableId(r.u32()?);
            let (root, pages) = get_pages(r)?;
            loads.push(LoadPages { table, root, pages });
        }
    }
    let mut pieces = Vec::new();
    if !r.is_done() {
        for _ in 0..r.varint()? {
            pieces.push(Lsn(r.u64()?));
        }
    }
    let mut defs = Vec::new();
    if !r.is_done() {
        for _ in 0..r.varint()? {
            defs.push(get_def(r)?);
        }
    }
    Ok(CommitRecord {
        created,
        dropped,
        tables,
        loads,
        pieces,
        defs,
    })
}

/// Recovery's first pass: add to `slots` the page-file slots that `payload`, a record
/// of `kind`, names as a bulk load's pages (a commit's loads, a SetPrimaryKey's rows).
/// Replay must not write a page over them before it claims them.
pub fn named_slots(kind: RecordKind, payload: &[u8], slots: &mut Vec<u64>) -> Result<()> {
    let mut r = Reader::new(payload);
    match kind {
        RecordKind::SetPrimaryKey => {
            get_def(&mut r)?;
            if !r.is_done() {
                slots.extend(get_pages(&mut r)?.1.iter().map(|&(_, slot)| slot));
            }
        }
        RecordKind::Commit => {
            for load in read_commit(&mut r)?.loads {
                slots.extend(load.pages.iter().map(|&(_, slot)| slot));
            }
        }
        RecordKind::CreateTable
        | RecordKind::SetIndexes
        | RecordKind::CreateSequence
        | RecordKind::DropSequence
        | RecordKind::SetSequence
        | RecordKind::CreateView
        | RecordKind::DropView
        | RecordKind::SetRole
        | RecordKind::DropRole
        | RecordKind::SetAcls
        | RecordKind::DropTable
        | RecordKind::SequenceAdvance
        | RecordKind::WriteSetPiece => {}
    }
    Ok(())
}

/// Reads back the record that starts at an LSN (a commit's pieces).
pub type ReadRecord<'a> = dyn FnMut(Lsn) -> Result<(RecordKind, Vec<u8>)> + 'a;

/// Install one WriteSetPiece of the commit at `lsn`.
fn replay_piece(catalog: &Catalog, payload: &[u8], lsn: Lsn, horizon: Lsn) -> Result<()> {
    let mut r = Reader::new(payload);
    let id = TableId(r.u32()?);
    let mut rows = Vec::new();
    while !r.is_done() {
        rows.push(get_row(&mut r)?);
    }
    // Rows of a table dropped later in the log are skipped with it.
    if let Some(table) = catalog.table_by_id(id) {
        table.install(lsn, rows, false, horizon)?;
    }
    Ok(())
}

/// Apply one replayed record to the catalog and storage. `lsn` is the record's end.
/// A commit's pieces are read back with `read_record`.
///
/// `horizon`: the oldest snapshot that may still read the versions this record replaces
/// (`lsn` in crash recovery, where nobody reads; a standby's readers' oldest snapshot).
pub fn replay(
    catalog: &Catalog,
    kind: RecordKind,
    payload: &[u8],
    lsn: Lsn,
    horizon: Lsn,
    read_record: &mut ReadRecord<'_>,
) -> Result<()> {
    let mut r = Reader::new(payload);
    match kind {
        // Applied with the commit that names it, if one does.
        RecordKind::WriteSetPiece => return Ok(()),
        RecordKind::CreateTable => {
            let (id, def) = get_def(&mut r)?;
            if catalog.table_by_id(id).is_none() {
                // A table of this name whose creation never committed was lost in a crash
                // (its drop at recovery is not logged): no one else could have taken the
                // name while it was held.
                if let Some(lost) = catalog.table(&def.name) {
                    if catalog.unconfirmed().contains(&lost.id) {
                        drop_by_id(catalog, lost.id)?;
                    }
                }
                // A holder left is one the creating transaction dropped.
                catalog.create_table_replacing(id, def)?;
            }
        }
        RecordKind::DropTable => {
            drop_by_id(catalog, TableId(r.u32()?))?;
        }
        RecordKind::SetPrimaryKey => {
            let (id, def) = get_def(&mut r)?;
            let table = catalog
                .table_by_id(id)
                .ok_or_else(|| corrupt(format!("no table {}", id.0)))?;
            if r.is_done() && def.primary_key.is_empty() {
                // Its key dropped: hidden row ids in the order of the old key, as the
                // primary numbered them (`ddl::load_under_row_ids`).
                let last = std::cell::Cell::new(0u64);
                table.rekey(lsn, &|_| {
                    last.set(last.get() + 1);
                    super::ddl::row_id_key(last.get())
                })?;
            } else if r.is_done() {
                table.rekey(lsn, &|row| primary_key_of(&def.primary_key, row))?;
            } else {
                let (root, pages) = get_pages(&mut r)?;
                catalog.pool().claim(&pages, lsn)?;
                table.replace(lsn, BTree::open(root))?;
            }
            let keyless = def.primary_key.is_empty();
            table.set_def(def);
            if keyless {
                table.restore_next_row_id()?;
            }
            catalog.table_altered();
        }
        RecordKind::SetIndexes => {
            let (id, def) = get_def(&mut r)?;
            let table = catalog
                .table_by_id(id)
                .ok_or_else(|| corrupt(format!("no table {}", id.0)))?;
            let old = table.def().name.clone();
            table.set_indexes(def, lsn)?;
            catalog.rename_table(&old);
            catalog.table_altered();
        }
        RecordKind::CreateSequence => {
            let name = r.str()?;
            let id = TableId(r.u32()?);
            let options = SequenceOptions::get(&mut r)?;
            let pending = !r.is_done() && r.u8()? == 1;
            // One whose creation never committed was lost in a crash (as for a table).
            if let Some(lost) = catalog.sequence(&name) {
                if let Some((lost_id, _)) = lost.created().filter(|&(i, _)| i != id) {
                    if catalog.unconfirmed().contains(&lost_id) {
                        drop_by_id(catalog, lost_id)?;
                    }
                }
            }
            // A holder left is one the creating transaction dropped (a record from
            // before sequences were created in transactions: none is left), or a
            // serial column's that this record gives an id.
            let holder = catalog.sequence(&name);
            if !pending && holder.as_ref().is_some_and(|s| s.created().is_none()) {
                catalog.give_sequence_id(&name, id, options);
            } else if holder
                .as_ref()
                .is_none_or(|s| s.created().is_some_and(|(i, _)| i != id))
            {
                catalog.create_sequence_replacing(&name, id, options)?;
                if pending {
                    catalog.mark_unconfirmed(id);
                }
            }
        }
        RecordKind::DropSequence => {
            catalog.drop_sequence(&r.str()?);
        }
        RecordKind::CreateView => {
            // A CREATE OR REPLACE VIEW's record replaces the view; any other brings what
            // a catalog image may already hold.
            let view = crate::storage::View::get(&mut r)?;
            let id = view.id;
            let pending = !r.is_done() && r.u8()? == 1;
            let known = catalog.view_by_id(id).is_some();
            catalog.create_view(view);
            if pending && !known {
                catalog.mark_unconfirmed(id);
            }
        }
        RecordKind::DropView => {
            catalog.drop_view(&r.str()?);
        }
        RecordKind::SetRole => {
            // One role or more (GRANT of roles changes several at once).
            loop {
                catalog.set_role(crate::storage::Role::get(&mut r)?);
                if r.is_done() {
                    break;
                }
            }
        }
        RecordKind::DropRole => {
            catalog.drop_role(&r.str()?);
        }
        RecordKind::SetAcls => {
            let mut lists = Vec::new();
            for _ in 0..r.varint()? {
                lists.push(crate::storage::acl::get_acl(&mut r)?);
            }
            catalog.set_acls(lists);
        }
        RecordKind::SetSequence => {
            let name = r.str()?;
            let next = r.u64()? as i64;
            // ALTER SEQUENCE's carries the new options (setval's ends here).
            let options = match r.is_done() {
                true => None,
                false => Some(SequenceOptions::get(&mut r)?),
            };
            if let Some(seq) = catalog.sequence(&name) {
                match options {
                    Some(options) if seq.created().is_some() => seq.alter(options, next),
                    _ => seq.set_next(next),
                }
            }
        }
        RecordKind::SequenceAdvance => {
            let name = r.str()?;
            let upto = r.u64()? as i64;
            if let Some(seq) = catalog.sequence(&name) {
                seq.advance_past(upto);
            }
        }
        RecordKind::Commit => {
            let commit = read_commit(&mut r)?;
            catalog.confirm(&commit.created);
            for id in commit.dropped {
                drop_by_id(catalog, id)?;
            }
            // Before the rows, which were encoded under the new definitions.
            for (id, def) in commit.defs {
                if let Some(table) = catalog.table_by_id(id) {
                    let old = table.def().name.clone();
                    // An index the transaction created is built again from the rows.
                    table.set_indexes(def, lsn)?;
                    catalog.rename_table(&old);
                    catalog.table_altered();
                }
            }
            for t in commit.tables {
                // Rows of a table dropped later in the log are skipped with it.
                if let Some(table) = catalog.table_by_id(t.id) {
                    table.install(lsn, t.rows, t.truncated, horizon)?;
                }
            }
            // After the tables' truncations, which the pieces' rows follow.
            for &at in &commit.pieces {
                let (kind, piece) = read_record(at)?;
                if kind != RecordKind::WriteSetPiece {
                    return Err(corrupt(format!(
                        "the commit at {lsn} names a {kind:?} record at {at} as its piece"
                    )));
                }
                replay_piece(catalog, &piece, lsn, horizon)?;
            }
            for load in commit.loads {
                // A load into a table dropped by now is not claimed: its ids and slots
                // stay free.
                if let Some(table) = catalog.table_by_id(load.table) {
                    catalog.pool().claim(&load.pages, lsn)?;
                    table.adopt(lsn, BTree::open(load.root), horizon)?;
                }
            }
        }
    }
    if !r.is_done() {
        return Err(corrupt(format!("{kind:?} record has trailing bytes")));
    }
    Ok(())
}

/// The encoded primary key of `row`, whose key columns are `columns`.
pub fn primary_key_of(columns: &[usize], row: &[Value]) -> Key {
    let vals: Vec<Value> = columns.iter().map(|&i| row[i].clone()).collect();
    let mut key = Vec::new();
    types::encode_key(&vals, &mut key);
    key
}

/// Drop a table for good: its drop (or the rollback of its creation) committed.
fn drop_by_id(catalog: &Catalog, id: TableId) -> Result<()> {
    if let Some(t) = catalog.table_by_id(id) {
        if catalog
            .table(&t.def().name)
            .is_some_and(|named| named.id == id)
        {
            catalog.drop_table(&t.def().name);
        }
    }
    for table in catalog.finish_drops(&[id]) {
        table.destroy()?;
    }
    Ok(())
}
