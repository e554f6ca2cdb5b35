//! The extended query protocol: Parse, Bind, Describe, Execute and Close, with named and
//! unnamed prepared statements and portals.

use std::sync::Arc;

use bytes::Bytes;
use rustc_hash::FxHashMap;

use super::connection::{send_rows, Flow, Io, Protocol, Transport};
use super::frontend::{utf8_text, Target};
use crate::error::{Error, Result, SqlState};
use crate::sql::{Outcome, Prepared, RowStream, RowsTag};
use crate::types::{decode_binary, decode_text, DataType, Value};

/// `55000 object_not_in_prerequisite_state`, for a portal whose command already ran.
const OBJECT_NOT_IN_PREREQUISITE_STATE: SqlState = SqlState("55000");

/// A bound statement, ready to execute or partly fetched.
pub struct Portal {
    statement: Arc<Prepared>,
    params: Vec<Value>,
    /// One format code per result column.
    formats: Vec<i16>,
    state: PortalState,
}

/// A connection's portals by name. The unnamed portal, the one most clients bind every
/// statement to, is kept apart from the map: no hashing or string comparison for it.
#[derive(Default)]
pub struct Portals {
    unnamed: Option<Portal>,
    named: FxHashMap<String, Portal>,
}

impl Portals {
    pub fn get(&self, name: &str) -> Option<&Portal> {
        if name.is_empty() {
            self.unnamed.as_ref()
        } else {
            self.named.get(name)
        }
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Named portals held (the unnamed one is replaced by each Bind, so never adds up).
    pub fn named_count(&self) -> usize {
        self.named.len()
    }

    pub fn insert(&mut self, name: String, portal: Portal) {
        if name.is_empty() {
            self.unnamed = Some(portal);
        } else {
            self.named.insert(name, portal);
        }
    }

    pub fn remove(&mut self, name: &str) -> Option<Portal> {
        if name.is_empty() {
            self.unnamed.take()
        } else {
            self.named.remove(name)
        }
    }

    pub fn clear(&mut self) {
        self.unnamed = None;
        self.named.clear();
    }

    fn iter_mut(&mut self) -> impl Iterator<Item = (&str, &mut Portal)> {
        self.unnamed
            .iter_mut()
            .map(|p| ("", p))
            .chain(self.named.iter_mut().map(|(n, p)| (n.as_str(), p)))
    }
}

enum PortalState {
    /// Not executed yet.
    Ready,
    /// Executed; the rows not yet sent, and the statement's command tag.
    Rows {
        rows: std::vec::IntoIter<Vec<Value>>,
        tag: RowsTag,
    },
    /// A SELECT fetched in parts whose rows are read as they are fetched: the rows of
    /// its last batch not yet sent, and the rest to read. Only while no other statement
    /// runs in the session: one that does first reads it whole (`Rows`), so it never sees
    /// what a later statement of its transaction wrote.
    Streaming {
        stream: RowStream,
        pending: std::vec::IntoIter<Vec<Value>>,
    },
    /// An empty query: every Execute answers EmptyQueryResponse.
    Empty,
    /// A command ran (or failed) in this portal: it cannot run again.
    Done,
}

fn portal_not_found(name: &str) -> Error {
    Error::new(
        SqlState::INVALID_CURSOR_NAME,
        format!("portal \"{name}\" does not exist"),
    )
}

fn protocol_violation(message: String) -> Error {
    Error::new(SqlState::PROTOCOL_VIOLATION, message)
}

/// Whether a format code means binary; only 0 (text) and 1 (binary) exist.
fn is_binary(code: i16) -> Result<bool> {
    match code {
        0 => Ok(false),
        1 => Ok(true),
        other => Err(Error::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("unsupported format code: {other}"),
        )),
    }
}

/// Decode a Bind message's parameter values for a statement with `types`.
pub fn decode_params(
    statement: &str,
    types: &[DataType],
    formats: &[i16],
    params: &[Option<Bytes>],
) -> Result<Vec<Value>> {
    if formats.len() > 1 && formats.len() != params.len() {
        return Err(protocol_violation(format!(
            "bind message has {} parameter formats but {} parameters",
            formats.len(),
            params.len()
        )));
    }
    if params.len() != types.len() {
        return Err(protocol_violation(format!(
            "bind message supplies {} parameters, but prepared statement \"{statement}\" requires {}",
            params.len(),
            types.len()
        )));
    }
    params
        .iter()
        .zip(types)
        .enumerate()
        .map(|(i, (param, ty))| {
            // No codes: all text; one code: applies to all; else one per parameter.
            let code = formats.get(i).or(formats.first()).copied().unwrap_or(0);
            let binary = is_binary(code)?;
            match param {
                None => Ok(Value::Null),
                Some(bytes) if binary => decode_binary(ty, bytes),
                Some(bytes) => decode_text(ty, utf8_text(bytes)?),
            }
        })
        .collect()
}

/// Expand a Bind message's result format codes to one per result column.
pub fn result_formats(codes: &[i16], columns: usize) -> Result<Vec<i16>> {
    let formats = match codes {
        [] => vec![0; columns],
        [code] => vec![*code; columns],
        _ if codes.len() == columns => codes.to_vec(),
        _ => {
            return Err(protocol_violation(format!(
                "bind message has {} result formats but query has {columns} columns",
                codes.len()
            )))
        }
    };
    for &code in codes {
        is_binary(code)?;
    }
    Ok(formats)
}

impl Protocol {
    pub fn parse<S: Transport>(
        &mut self,
        io: &mut Io<S>,
        name: String,
        sql: &str,
        param_oids: &[u32],
    ) -> Result<Flow> {
        self.session.parse_statement(name, sql, param_oids)?;
        io.output.parse_complete();
        Ok(Flow::Continue)
    }

    pub fn bind<S: Transport>(
        &mut self,
        io: &mut Io<S>,
        portal: String,
        statement: &str,
        param_formats: &[i16],
        params: &[Option<Bytes>],
        result_codes: &[i16],
    ) -> Result<Flow> {
        let prepared = self.session.statement(statement)?;
        if portal.is_empty() {
            self.portals.remove("");
        } else if self.portals.contains_key(&portal) {
            return Err(Error::new(
                SqlState::DUPLICATE_CURSOR,
                format!("cursor \"{portal}\" already exists"),
            ));
        } else if self.portals.named_count() >= crate::constants::MAX_PORTALS {
            return Err(
                Error::new(SqlState::OUT_OF_MEMORY, "out of memory for portals")
                    .with_detail(format!(
                        "This connection holds {} open portals, the most it may.",
                        self.portals.named_count()
                    ))
                    .with_hint("Close portals that are no longer needed."),
            );
        }
        let params = decode_params(statement, &prepared.param_types, param_formats, params)?;
        let formats = result_formats(result_codes, prepared.fields.len())?;
        self.portals.insert(
            portal,
            Portal {
                statement: prepared,
                params,
                formats,
                state: PortalState::Ready,
            },
        );
        io.output.bind_complete();
        Ok(Flow::Continue)
    }

    pub fn describe<S: Transport>(
        &mut self,
        io: &mut Io<S>,
        target: Target,
        name: &str,
    ) -> Result<Flow> {
        match target {
            Target::Statement => {
                let stmt = self.session.statement(name)?;
                io.output.parameter_description(&stmt.param_types);
                if stmt.fields.is_empty() {
                    io.output.no_data();
                } else {
                    // Not bound yet, so the formats are unknown: PostgreSQL reports text.
                    io.output.row_description(&stmt.fields, &[])?;
                }
            }
            Target::Portal => {
                let portal = self
                    .portals
                    .get(name)
                    .ok_or_else(|| portal_not_found(name))?;
                if portal.statement.fields.is_empty() {
                    io.output.no_data();
                } else {
                    io.output
                        .row_description(&portal.statement.fields, &portal.formats)?;
                }
            }
        }
        Ok(Flow::Continue)
    }

    pub async fn execute<S: Transport>(
        &mut self,
        io: &mut Io<S>,
        name: &str,
        max_rows: i32,
    ) -> Result<Flow> {
        let mut portal = self
            .portals
            .remove(name)
            .ok_or_else(|| portal_not_found(name))?;
        let before = self.session.txn_status();
        let result = self.run_portal(io, &mut portal, name, max_rows).await;
        // A statement that ended the transaction block closed every portal, this one too.
        if !self.after_statement(before) {
            self.portals.insert(name.to_owned(), portal);
        }
        result
    }

    async fn run_portal<S: Transport>(
        &mut self,
        io: &mut Io<S>,
        portal: &mut Portal,
        name: &str,
        max_rows: i32,
    ) -> Result<Flow> {
        if let PortalState::Ready = portal.state {
            // Whatever happens now, the statement does not run a second time.
            portal.state = PortalState::Done;
            let outcome = self
                .execute_statement(&portal.statement, &portal.params)
                .await;
            self.send_warnings(io);
            match outcome? {
                Outcome::Rows { rows, tag, .. } => {
                    portal.state = PortalState::Rows {
                        rows: rows.into_iter(),
                        tag,
                    };
                }
                Outcome::RowStream { stream, .. } if max_rows <= 0 => {
                    // Fetched whole now: sent as it is read, and the portal is left
                    // exhausted, as one whose rows were all sent.
                    let sent = self.send_row_stream(io, stream, &portal.formats).await?;
                    io.output.command_complete(&RowsTag::Select.complete(sent));
                    portal.state = PortalState::Rows {
                        rows: Vec::new().into_iter(),
                        tag: RowsTag::Select,
                    };
                    return Ok(Flow::Continue);
                }
                Outcome::RowStream { stream, .. } => {
                    // Fetched in parts: read as they are fetched (see `Streaming`).
                    portal.state = PortalState::Streaming {
                        stream,
                        pending: Vec::new().into_iter(),
                    };
                    return self.fetch_streaming(io, portal, max_rows).await;
                }
                Outcome::Command { tag } => {
                    io.output.command_complete(&tag);
                    return Ok(Flow::Continue);
                }
                Outcome::Empty => {
                    portal.state = PortalState::Empty;
                    io.output.empty_query();
                    return Ok(Flow::Continue);
                }
                Outcome::CopyIn(copy) => return self.copy_in(io, copy).await,
                Outcome::CopyOut(copy) => return self.copy_out(io, copy).await,
                Outcome::WaitForLock => return Err(Error::internal("unexpected outcome")),
            }
        }
        match &mut portal.state {
            PortalState::Rows { rows, tag } => {
                let n = match usize::try_from(max_rows) {
                    Ok(max) if max > 0 => max.min(rows.len()),
                    _ => rows.len(),
                };
                let sent = send_rows(io, rows.by_ref().take(n), &portal.formats).await?;
                if rows.len() > 0 {
                    io.output.portal_suspended();
                } else {
                    io.output.command_complete(&tag.complete(sent));
                }
                Ok(Flow::Continue)
            }
            PortalState::Streaming { .. } => {
                // Suspended since its last Execute: a statement again from now.
                self.session.resume_streamed_statement(&portal.statement);
                self.fetch_streaming(io, portal, max_rows).await
            }
            PortalState::Empty => {
                io.output.empty_query();
                Ok(Flow::Continue)
            }
            PortalState::Ready | PortalState::Done => Err(Error::new(
                OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("portal \"{name}\" cannot be run"),
            )),
        }
    }

    /// Send up to `max_rows` rows of a streaming portal (all, for 0), reading batches as
    /// needed; then PortalSuspended (the statement stops running until the next Execute)
    /// or, at its end, CommandComplete.
    async fn fetch_streaming<S: Transport>(
        &mut self,
        io: &mut Io<S>,
        portal: &mut Portal,
        max_rows: i32,
    ) -> Result<Flow> {
        let max = usize::try_from(max_rows).ok().filter(|&m| m > 0);
        let PortalState::Streaming { stream, pending } = &mut portal.state else {
            return Err(Error::internal("not a streaming portal"));
        };
        let mut sent = 0usize;
        let finished = loop {
            let room = max.map_or(usize::MAX, |m| m - sent);
            if room == 0 {
                break false;
            }
            if pending.len() == 0 {
                match self.session.row_stream_next(stream) {
                    Ok(Some(batch)) => *pending = batch.into_iter(),
                    Ok(None) => break true,
                    Err(e) => {
                        portal.state = PortalState::Done;
                        return Err(e);
                    }
                }
                continue;
            }
            let take = room.min(pending.len());
            sent += send_rows(io, pending.by_ref().take(take), &portal.formats).await?;
        };
        if finished {
            io.output.command_complete(&RowsTag::Select.complete(sent));
            portal.state = PortalState::Rows {
                rows: Vec::new().into_iter(),
                tag: RowsTag::Select,
            };
        } else {
            io.output.portal_suspended();
            self.session.suspend_streamed_statement();
        }
        Ok(Flow::Continue)
    }

    /// Before another statement runs: read every suspended streaming portal (but
    /// `except`) whole, under its own statement's view, as PostgreSQL's portals see only
    /// what was there when they started.
    pub fn settle_streaming_portals(&mut self, except: Option<&str>) -> Result<()> {
        for (name, portal) in self.portals.iter_mut() {
            if except == Some(name) {
                continue;
            }
            let PortalState::Streaming { stream, pending } = &mut portal.state else {
                continue;
            };
            self.session.resume_streamed_statement(&portal.statement);
            let mut rows: Vec<Vec<Value>> = pending.by_ref().collect();
            loop {
                match self.session.row_stream_next(stream) {
                    Ok(Some(batch)) => rows.extend(batch),
                    Ok(None) => break,
                    Err(e) => {
                        portal.state = PortalState::Done;
                        return Err(e);
                    }
                }
            }
            portal.state = PortalState::Rows {
                rows: rows.into_iter(),
                tag: RowsTag::Select,
            };
        }
        Ok(())
    }

    /// Close a statement or portal; closing one that does not exist is not an error.
    pub fn close<S: Transport>(&mut self, io: &mut Io<S>, target: Target, name: &str) {
        match target {
            Target::Statement => self.session.close_statement(name),
            Target::Portal => {
                self.portals.remove(name);
            }
        }
        io.output.close_complete();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_parameters_decode_without_a_type_function() {
        let types = [DataType::Int4, DataType::Text];
        let values = decode_params("s", &types, &[], &[None, None]).unwrap();
        assert_eq!(values, vec![Value::Null, Value::Null]);
        let values = decode_params("s", &types, &[1], &[None, None]).unwrap();
        assert_eq!(values.len(), 2);
        let values = decode_params("s", &types, &[1, 0], &[None, None]).unwrap();
        assert_eq!(values.len(), 2);
    }

    #[test]
    fn parameter_count_mismatch() {
        let err = decode_params("", &[DataType::Int4, DataType::Int4], &[], &[None]).unwrap_err();
        assert_eq!(err.code, SqlState::PROTOCOL_VIOLATION);
        assert_eq!(
            err.message,
            "bind message supplies 1 parameters, but prepared statement \"\" requires 2"
        );
    }

    #[test]
    fn parameter_format_count_mismatch() {
        let err =
            decode_params("", &[DataType::Int4; 3], &[0, 1], &[None, None, None]).unwrap_err();
        assert_eq!(err.code, SqlState::PROTOCOL_VIOLATION);
        assert_eq!(
            err.message,
            "bind message has 2 parameter formats but 3 parameters"
        );
    }

    #[test]
    fn bad_parameter_format_code() {
        let err = decode_params("", &[DataType::Int4], &[2], &[None]).unwrap_err();
        assert_eq!(err.code, SqlState::INVALID_PARAMETER_VALUE);
        assert_eq!(err.message, "unsupported format code: 2");
    }

    #[test]
    fn invalid_utf8_text_parameter() {
        let params = [Some(Bytes::from_static(b"\xff"))];
        let err = decode_params("", &[DataType::Text], &[0], &params).unwrap_err();
        assert_eq!(err.code, SqlState::CHARACTER_NOT_IN_REPERTOIRE);
        let params = [Some(Bytes::from_static(b"a\0b"))];
        let err = decode_params("", &[DataType::Text], &[], &params).unwrap_err();
        assert_eq!(err.code, SqlState::CHARACTER_NOT_IN_REPERTOIRE);
    }

    #[test]
    fn result_format_expansion() {
        assert_eq!(result_formats(&[], 3).unwrap(), vec![0, 0, 0]);
        assert_eq!(result_formats(&[1], 3).unwrap(), vec![1, 1, 1]);
        assert_eq!(result_formats(&[1], 0).unwrap(), Vec::<i16>::new());
        assert_eq!(result_formats(&[1, 0], 2).unwrap(), vec![1, 0]);
        let err = result_formats(&[1, 0], 3).unwrap_err();
        assert_eq!(err.code, SqlState::PROTOCOL_VIOLATION);
        assert_eq!(
            err.message,
            "bind message has 2 result formats but query has 3 columns"
        );
        assert_eq!(
            result_formats(&[3], 1).unwrap_err().code,
            SqlState::INVALID_PARAMETER_VALUE
        );
        assert_eq!(
            result_formats(&[-1], 0).unwrap_err().code,
            SqlState::INVALID_PARAMETER_VALUE
        );
    }

    #[test]
    fn execute_tags() {
        assert_eq!(RowsTag::Select.complete(3), "SELECT 3");
        assert_eq!(RowsTag::Select.complete(0), "SELECT 0");
        assert_eq!(
            RowsTag::Fixed("INSERT 0 5".into()).complete(2),
            "INSERT 0 5"
        );
        assert_eq!(RowsTag::Fixed("UPDATE 5".into()).complete(2), "UPDATE 5");
    }
}
