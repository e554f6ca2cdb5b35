//! COPY: the copy-in and copy-out sub-protocols, entered from a simple query or an
//! Execute.

use super::connection::{Flow, Io, Next, Protocol, Transport};
use super::frontend::{decode_message, FrontendMessage};
use crate::error::{Error, Result, SqlState};
use crate::sql::{CopyIn, CopyOut};

impl Protocol {
    /// Run a COPY FROM STDIN: send CopyInResponse, then feed CopyData to the session until
    /// CopyDone (→ CommandComplete `COPY n`) or CopyFail (→ the session's error).
    ///
    /// An error ends the COPY at once and is returned for the caller to report, as in
    /// PostgreSQL; whatever CopyData the client still sends afterwards is ignored by the
    /// main loop. `Ok(Flow::Close)` means the client went away or broke the protocol.
    pub async fn copy_in<S: Transport>(
        &mut self,
        io: &mut Io<S>,
        mut copy: CopyIn,
    ) -> Result<Flow> {
        let Ok(columns) = i16::try_from(copy.columns) else {
            let err = Error::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                "too many columns for COPY",
            );
            self.abandon(copy, &err.message);
            return Err(err);
        };
        io.output.copy_in_response(columns, copy.binary);
        io.flush().await;
        loop {
            let (tag, body) = match io.read_message().await {
                Next::Message(tag, body) => (tag, body),
                Next::Eof => {
                    self.abandon(copy, "client closed the connection during COPY");
                    return Ok(Flow::Close);
                }
                Next::Fatal(e) => {
                    self.abandon(copy, &e.message);
                    io.fatal(&e).await;
                    return Ok(Flow::Close);
                }
            };
            let msg = match decode_message(tag, body) {
                Ok(msg) => msg,
                Err(e) => {
                    self.abandon(copy, &e.message);
                    return Err(e);
                }
            };
            match msg {
                FrontendMessage::CopyData(data) => {
                    if let Err(e) = self.session.copy_data(&mut copy, &data) {
                        self.abandon(copy, &e.message);
                        return Err(e);
                    }
                }
                FrontendMessage::CopyDone => {
                    let rows = self.session.copy_done(copy)?;
                    io.output.command_complete(&format!("COPY {rows}"));
                    return Ok(Flow::Continue);
                }
                FrontendMessage::CopyFail { message } => {
                    return Err(self.session.copy_fail(copy, &message));
                }
                // Clients may send these without noticing that their command was a COPY.
                FrontendMessage::Flush | FrontendMessage::Sync => {}
                FrontendMessage::Terminate => {
                    self.abandon(copy, "client terminated the connection during COPY");
                    return Ok(Flow::Close);
                }
                _ => {
                    let err = Error::new(
                        SqlState::PROTOCOL_VIOLATION,
                        format!("unexpected message type 0x{tag:02X} during COPY from stdin"),
                    );
                    self.abandon(copy, &err.message);
                    return Err(err);
                }
            }
        }
    }

    /// Run a COPY TO STDOUT: send CopyOutResponse, then each chunk of rows as CopyData
    /// (written out as the buffer fills, so a large table streams), CopyDone and
    /// CommandComplete `COPY n`. An error ends it where it is, as in PostgreSQL.
    pub async fn copy_out<S: Transport>(
        &mut self,
        io: &mut Io<S>,
        mut copy: CopyOut,
    ) -> Result<Flow> {
        let Ok(columns) = i16::try_from(copy.columns) else {
            return Err(Error::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                "too many columns for COPY",
            ));
        };
        io.output.copy_out_response(columns, copy.binary);
        while let Some(chunk) = self.session.copy_out_next(&mut copy)? {
            if !chunk.is_empty() {
                io.output.copy_data(&chunk);
            }
            io.flush_if_full().await;
            if io.is_broken() {
                return Ok(Flow::Close);
            }
        }
        io.output.copy_done();
        io.output.command_complete(&copy.tag());
        Ok(Flow::Continue)
    }

    /// Give up a COPY on our side (an error, or the client went away): the session rolls
    /// it back as if the client had sent CopyFail. Its error is not reported, ours is.
    fn abandon(&mut self, copy: CopyIn, reason: &str) {
        let _ = self.session.copy_fail(copy, reason);
    }
}
