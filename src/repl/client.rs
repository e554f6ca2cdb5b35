//! A client of the primary's replication protocol: the walreceiver's and `steadydb
//! basebackup`'s connection. It starts up as a replication connection, answers the
//! primary's authentication as libpq does (SCRAM-SHA-256, with channel binding over TLS as
//! `channel_binding` asks; md5; a clear-text password), and reads messages through its own
//! input buffer, so that a read that times out never loses part of a message.

use std::time::{Duration, Instant};

use super::conninfo::{ChannelBinding, Conninfo};
use super::transport::{conn_error, Sender, Transport};
use crate::auth::scram::ClientBinding;
use crate::error::{Error, Result, SqlState};

/// The largest message accepted from the primary (XLogData carries at most 128 KiB).
const MAX_MESSAGE_BYTES: usize = 64 << 20;
/// How long one read waits before the caller looks at its timers and stop flag.
pub(crate) const READ_POLL: Duration = Duration::from_millis(100);

/// A connection speaking the replication protocol.
pub(crate) struct Client {
    conn: Transport,
    input: Vec<u8>,
    start: usize,
}

pub(crate) enum Polled {
    Message(u8, Vec<u8>),
    Nothing,
}

impl Client {
    pub(crate) fn connect(c: &Conninfo) -> Result<Client> {
        let mut client = Client {
            conn: Transport::connect(c, READ_POLL)?,
            input: Vec::with_capacity(256 * 1024),
            start: 0,
        };
        client.startup(c)?;
        Ok(client)
    }

    /// Another handle that sends on this connection (the replayer's reports).
    pub(crate) fn sender(&self) -> Result<Sender> {
        self.conn.sender()
    }

    /// Bytes received and not yet taken as messages.
    pub(crate) fn buffered(&self) -> usize {
        self.input.len() - self.start
    }

    pub(crate) fn send(&mut self, tag: Option<u8>, body: &[u8]) -> Result<()> {
        let mut msg = Vec::with_capacity(body.len() + 5);
        msg.extend(tag);
        msg.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        msg.extend_from_slice(body);
        self.conn
            .send(&msg)
            .map_err(|e| conn_error(format!("could not send data to WAL stream: {e}")))
    }

    fn startup(&mut self, c: &Conninfo) -> Result<()> {
        let mut body = Vec::new();
        body.extend_from_slice(&196608i32.to_be_bytes());
        for (k, v) in [
            ("user", c.user.as_str()),
            ("database", "replication"),
            ("replication", "true"),
            ("application_name", c.application_name.as_str()),
        ] {
            body.extend_from_slice(k.as_bytes());
            body.push(0);
            body.extend_from_slice(v.as_bytes());
            body.push(0);
        }
        body.push(0);
        if c.channel_binding == ChannelBinding::Require && !self.conn.is_tls() {
            return Err(binding_error(
                "channel binding required, but SSL not in use",
            ));
        }
        self.send(None, &body)?;
        let mut scram: Option<crate::auth::scram::ScramClient> = None;
        loop {
            let (tag, body) = self.message(Duration::from_secs(30))?;
            match tag {
                b'R' => self.authenticate(c, &body, &mut scram)?,
                b'E' => return Err(server_error(&body)),
                b'Z' => return Ok(()),
                _ => {}
            }
        }
    }

    /// Answer one Authentication request of the primary as libpq does: SCRAM-SHA-256,
    /// md5 or a clear-text password (from `c.password`), or nothing for AuthenticationOk.
    fn authenticate(
        &mut self,
        c: &Conninfo,
        body: &[u8],
        scram: &mut Option<crate::auth::scram::ScramClient>,
    ) -> Result<()> {
        use crate::auth::scram::{self, ScramClient};
        let (code, data) = match body.split_first_chunk::<4>() {
            Some((code, data)) => (i32::from_be_bytes(*code), data),
            None => return Err(conn_error("invalid authentication request".into())),
        };
        let password = || {
            c.password.clone().ok_or_else(|| {
                Error::new(
                    SqlState::INVALID_PASSWORD,
                    "the primary asks for a password: give it in primary_conninfo or PGPASSWORD",
                )
            })
        };
        let bound = scram
            .as_ref()
            .is_some_and(|s| s.mechanism() == scram::MECHANISM_PLUS);
        let require_binding = c.channel_binding == ChannelBinding::Require;
        if require_binding && matches!(code, 3 | 5) {
            return Err(binding_error(
                "channel binding required but not supported by server's authentication request",
            ));
        }
        let mut reply = Vec::new();
        match code {
            0 if require_binding && !bound => return Err(binding_error(
                "channel binding required, but server authenticated client without channel binding",
            )),
            0 => return Ok(()),
            // AuthenticationCleartextPassword
            3 => {
                reply.extend_from_slice(password()?.as_bytes());
                reply.push(0);
            }
            // AuthenticationMD5Password: md5(md5(password || user) || salt).
            5 => {
                let salt: [u8; 4] = data
                    .get(..4)
                    .and_then(|s| s.try_into().ok())
                    .ok_or_else(|| conn_error("invalid MD5 authentication request".into()))?;
                let stored = scram::md5_verifier(&password()?, &c.user);
                reply.extend_from_slice(scram::md5_response(&stored, &salt).as_bytes());
                reply.push(0);
            }
            // AuthenticationSASL: the mechanisms offered.
            10 => {
                let client = ScramClient::new(&password()?, self.binding_for(c, data)?);
                let first = client.client_first();
                reply.extend_from_slice(client.mechanism().as_bytes());
                reply.push(0);
                reply.extend_from_slice(&(first.len() as i32).to_be_bytes());
                reply.extend_from_slice(&first);
                *scram = Some(client);
            }
            // AuthenticationSASLContinue: the server-first-message.
            11 => {
                let client = scram
                    .as_mut()
                    .ok_or_else(|| conn_error("SASLContinue before SASL".into()))?;
                reply = client.client_final(data)?;
            }
            // AuthenticationSASLFinal: the server's signature.
            12 => {
                let client = scram
                    .as_ref()
                    .ok_or_else(|| conn_error("SASLFinal before SASL".into()))?;
                return client.verify_server_final(data);
            }
            _ => return Err(conn_error(
                "the primary asks for an authentication method the walreceiver does not support"
                    .into(),
            )),
        }
        self.send(Some(b'p'), &reply)
    }

    /// The channel binding of a SCRAM exchange, given the mechanisms the primary offers
    /// (AuthenticationSASL's list), as libpq chooses it: PLUS over TLS unless
    /// `channel_binding=disable`; without TLS none; over TLS without PLUS offered, the
    /// `y` flag that lets the primary see a PLUS removed from its offer.
    fn binding_for(&self, c: &Conninfo, offered: &[u8]) -> Result<ClientBinding> {
        use crate::auth::scram;
        let offers = |m: &str| offered.split(|&b| b == 0).any(|o| o == m.as_bytes());
        if !offers(scram::MECHANISM) && !offers(scram::MECHANISM_PLUS) {
            return Err(conn_error(
                "the primary offers no SASL mechanism the walreceiver supports".into(),
            ));
        }
        let tls = self.conn.is_tls() && c.channel_binding != ChannelBinding::Disable;
        if tls && offers(scram::MECHANISM_PLUS) {
            if let Some(hash) = self.conn.end_point_hash() {
                return Ok(ClientBinding::EndPoint(hash));
            }
        }
        if c.channel_binding == ChannelBinding::Require {
            return Err(binding_error(
                "channel binding is required, but server did not offer an authentication method that supports channel binding",
            ));
        }
        if !offers(scram::MECHANISM) {
            return Err(conn_error(
                "the primary offers no SASL mechanism the walreceiver supports".into(),
            ));
        }
        Ok(match tls {
            true => ClientBinding::Unused,
            false => ClientBinding::None,
        })
    }

    /// Poll for one message: `Nothing` when none arrived within one read's wait.
    pub(crate) fn poll(&mut self) -> Result<Polled> {
        if let Some(m) = self.take() {
            return Ok(Polled::Message(m.0, m.1));
        }
        if self.start > 0 && self.start == self.input.len() {
            self.input.clear();
            self.start = 0;
        } else if self.start > 128 * 1024 {
            self.input.drain(..self.start);
            self.start = 0;
        }
        let old = self.input.len();
        self.input.resize(old + 128 * 1024, 0);
        let got = self.conn.read(&mut self.input[old..]);
        match got {
            Ok(0) => {
                self.input.truncate(old);
                Err(conn_error("the primary closed the connection".into()))
            }
            Ok(n) => {
                self.input.truncate(old + n);
                Ok(match self.take() {
                    Some((t, b)) => Polled::Message(t, b),
                    None => Polled::Nothing,
                })
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                self.input.truncate(old);
                Ok(Polled::Nothing)
            }
            Err(e) => {
                self.input.truncate(old);
                Err(conn_error(format!(
                    "could not receive data from WAL stream: {e}"
                )))
            }
        }
    }

    fn take(&mut self) -> Option<(u8, Vec<u8>)> {
        let buf = &self.input[self.start..];
        if buf.len() < 5 {
            return None;
        }
        let len = i32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
        if buf.len() < 1 + len {
            return None;
        }
        let tag = buf[0];
        let body = buf[5..1 + len].to_vec();
        self.start += 1 + len;
        Some((tag, body))
    }

    /// The next message within `wait`.
    pub(crate) fn message(&mut self, wait: Duration) -> Result<(u8, Vec<u8>)> {
        let until = Instant::now() + wait;
        loop {
            if let Some(buf) = self.input.get(self.start..self.start + 5) {
                let len = i32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]);
                if len < 4 || len as usize > MAX_MESSAGE_BYTES {
                    return Err(conn_error(format!(
                        "invalid message length {len} from the primary"
                    )));
                }
            }
            match self.poll()? {
                Polled::Message(t, b) => return Ok((t, b)),
                Polled::Nothing if Instant::now() >= until => {
                    return Err(conn_error("timed out waiting for the primary".into()))
                }
                Polled::Nothing => {}
            }
        }
    }

    /// A simple query's rows, as text.
    pub(crate) fn query(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>> {
        let mut body = sql.as_bytes().to_vec();
        body.push(0);
        self.send(Some(b'Q'), &body)?;
        let mut rows = Vec::new();
        let mut error = None;
        loop {
            let (tag, body) = self.message(Duration::from_secs(30))?;
            match tag {
                b'D' => rows.push(data_row_text(&body)),
                b'E' => error = Some(server_error(&body)),
                b'Z' => break,
                _ => {}
            }
        }
        match error {
            Some(e) => Err(e),
            None => Ok(rows),
        }
    }
}

pub(crate) fn data_row_text(body: &[u8]) -> Vec<Option<String>> {
    let mut out = Vec::new();
    let n = body
        .get(..2)
        .map_or(0, |b| i16::from_be_bytes([b[0], b[1]]).max(0) as usize);
    let mut at = 2;
    for _ in 0..n {
        let Some(len) = body.get(at..at + 4) else {
            break;
        };
        let len = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
        at += 4;
        if len < 0 {
            out.push(None);
            continue;
        }
        let end = (at + len as usize).min(body.len());
        out.push(Some(String::from_utf8_lossy(&body[at..end]).into_owned()));
        at = end;
    }
    out
}

/// An ErrorResponse from the primary, as an error here.
pub(crate) fn server_error(body: &[u8]) -> Error {
    let mut code = String::new();
    let mut message = String::from("error from the primary");
    for field in body.split(|&b| b == 0) {
        match field.first() {
            Some(b'C') => code = String::from_utf8_lossy(&field[1..]).into_owned(),
            Some(b'M') => message = String::from_utf8_lossy(&field[1..]).into_owned(),
            _ => {}
        }
    }
    Error::new(
        SqlState::CONNECTION_FAILURE,
        format!("the primary server reported an error: {message} (SQLSTATE {code})"),
    )
}

fn binding_error(message: &str) -> Error {
    Error::new(
        SqlState::SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION,
        message,
    )
}
