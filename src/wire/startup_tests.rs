use std::io::{self, Cursor, Read};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::*;
use crate::wire::connection::{Io, Next, Shared};
use crate::wire::frontend::{CANCEL_REQUEST_CODE, GSSENC_REQUEST_CODE, SSL_REQUEST_CODE};
use crate::wire::test_support::{block_on, split, CountingWriter};

/// An in-memory client: what it sends is fixed up front; what we write is recorded.
struct Mock {
    input: Cursor<Vec<u8>>,
    output: CountingWriter,
}

impl Transport for Mock {}

impl AsyncRead for Mock {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let n = self.input.read(buf.initialize_unfilled())?;
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Mock {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.output).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.output).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.output).poll_shutdown(cx)
    }
}

fn io_with(input: Vec<u8>) -> Io<Mock> {
    let mock = Mock {
        input: Cursor::new(input),
        output: CountingWriter::default(),
    };
    Io::new(mock, Arc::new(Shared::new()))
}

fn packet(code: u32, rest: &[u8]) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&(8 + rest.len() as i32).to_be_bytes());
    p.extend_from_slice(&code.to_be_bytes());
    p.extend_from_slice(rest);
    p
}

fn startup_message(major: u16, minor: u16, params: &[(&str, &str)]) -> Vec<u8> {
    let mut block = Vec::new();
    for (k, v) in params {
        block.extend_from_slice(k.as_bytes());
        block.push(0);
        block.extend_from_slice(v.as_bytes());
        block.push(0);
    }
    block.push(0);
    packet((u32::from(major) << 16) | u32::from(minor), &block)
}

fn only_postgres(db: &str) -> bool {
    db == "postgres"
}

/// Run the startup phase; returns its outcome and every byte written to the client
/// (including whatever was left buffered, as the caller would flush it).
fn run(input: Vec<u8>) -> (Startup, Vec<u8>) {
    let mut io = io_with(input);
    let outcome = block_on(async {
        let outcome = negotiate(&mut io, &only_postgres, None).await;
        io.flush().await;
        outcome
    });
    (outcome, io.stream().output.data.clone())
}

/// The (code, message) of a FATAL ErrorResponse.
fn fatal_of(bytes: &[u8]) -> (String, String) {
    let msgs = split(bytes);
    let (tag, body) = msgs.last().expect("no message");
    assert_eq!(*tag, b'E');
    let mut code = String::new();
    let mut message = String::new();
    let mut severity = String::new();
    for field in body.split(|&b| b == 0).filter(|f| !f.is_empty()) {
        let value = String::from_utf8(field[1..].to_vec()).unwrap();
        match field[0] {
            b'C' => code = value,
            b'M' => message = value,
            b'V' => severity = value,
            _ => {}
        }
    }
    assert_eq!(severity, "FATAL");
    (code, message)
}

fn ready(user: &str, database: &str) -> Startup {
    Startup::Ready(StartupParams {
        user: user.into(),
        database: database.into(),
        application_name: String::new(),
        client_encoding: "UTF8",
        replication: false,
        settings: Vec::new(),
    })
}

#[test]
fn ssl_and_gss_are_refused_then_startup_proceeds() {
    let mut input = packet(SSL_REQUEST_CODE, b"");
    input.extend(packet(GSSENC_REQUEST_CODE, b""));
    input.extend(startup_message(
        3,
        0,
        &[("user", "alice"), ("database", "postgres")],
    ));
    let (outcome, out) = run(input);
    assert_eq!(outcome, ready("alice", "postgres"));
    assert_eq!(out, b"NN");
}

#[test]
fn repeated_ssl_request_is_an_unsupported_protocol() {
    let mut input = packet(SSL_REQUEST_CODE, b"");
    input.extend(packet(SSL_REQUEST_CODE, b""));
    let (outcome, out) = run(input);
    assert_eq!(outcome, Startup::Close);
    assert_eq!(out[0], b'N');
    let (code, message) = fatal_of(&out[1..]);
    assert_eq!(code, "0A000");
    assert_eq!(
        message,
        "unsupported frontend protocol 1234.5679: server supports 3.0 to 3.0"
    );
}

#[test]
fn protocol_2_is_refused() {
    let (outcome, out) = run(startup_message(2, 0, &[("user", "alice")]));
    assert_eq!(outcome, Startup::Close);
    assert_eq!(
        fatal_of(&out),
        (
            "0A000".into(),
            "unsupported frontend protocol 2.0: server supports 3.0 to 3.0".into()
        )
    );
}

#[test]
fn newer_minor_version_is_negotiated_down() {
    let params = [
        ("user", "postgres"),
        ("_pq_.compression", "on"),
        ("application_name", "app"),
    ];
    let (outcome, out) = run(startup_message(3, 2, &params));
    let Startup::Ready(params) = outcome else {
        panic!("not accepted")
    };
    assert_eq!(params.application_name, "app");
    assert_eq!(params.database, "postgres");
    let msgs = split(&out);
    assert_eq!(msgs.len(), 1);
    assert_eq!(msgs[0].0, b'v');
    let mut expected = (3i32 << 16).to_be_bytes().to_vec();
    expected.extend_from_slice(&1i32.to_be_bytes());
    expected.extend_from_slice(b"_pq_.compression\0");
    assert_eq!(msgs[0].1, expected);
}

#[test]
fn protocol_3_0_sends_no_negotiation() {
    let (outcome, out) = run(startup_message(3, 0, &[("user", "postgres")]));
    assert_eq!(outcome, ready("postgres", "postgres"));
    assert!(out.is_empty());
}

#[test]
fn user_is_required() {
    let (outcome, out) = run(startup_message(3, 0, &[("database", "postgres")]));
    assert_eq!(outcome, Startup::Close);
    assert_eq!(
        fatal_of(&out),
        (
            "28000".into(),
            "no PostgreSQL user name specified in startup packet".into()
        )
    );
}

#[test]
fn unknown_database_is_refused() {
    let (outcome, out) = run(startup_message(
        3,
        0,
        &[("user", "bob"), ("database", "nope")],
    ));
    assert_eq!(outcome, Startup::Close);
    assert_eq!(
        fatal_of(&out),
        ("3D000".into(), "database \"nope\" does not exist".into())
    );
    // The database defaults to the user name.
    let (_, out) = run(startup_message(3, 0, &[("user", "bob")]));
    assert_eq!(
        fatal_of(&out),
        ("3D000".into(), "database \"bob\" does not exist".into())
    );
}

#[test]
fn client_encoding_must_be_utf8() {
    let params = [("user", "postgres"), ("client_encoding", "LATIN1")];
    let (outcome, out) = run(startup_message(3, 0, &params));
    assert_eq!(outcome, Startup::Close);
    assert_eq!(fatal_of(&out).0, "0A000");
    for (value, reported) in [
        ("UTF8", "UTF8"),
        ("utf-8", "UTF8"),
        ("UNICODE", "UTF8"),
        ("SQL_ASCII", "SQL_ASCII"),
    ] {
        let params = [("user", "postgres"), ("client_encoding", value)];
        let (outcome, _) = run(startup_message(3, 0, &params));
        let Startup::Ready(params) = outcome else {
            panic!("{value} refused")
        };
        assert_eq!(params.client_encoding, reported);
    }
}

#[test]
fn replication_is_refused() {
    let params = [("user", "postgres"), ("replication", "database")];
    let (outcome, out) = run(startup_message(3, 0, &params));
    assert_eq!(outcome, Startup::Close);
    assert_eq!(fatal_of(&out).0, "0A000");
    let params = [("user", "postgres"), ("replication", "false")];
    assert!(matches!(
        run(startup_message(3, 0, &params)).0,
        Startup::Ready(_)
    ));
}

#[test]
fn long_names_are_truncated_like_identifiers() {
    let long = "é".repeat(40); // 80 bytes
    let params = [("user", long.as_str()), ("database", "postgres")];
    let Startup::Ready(params) = run(startup_message(3, 0, &params)).0 else {
        panic!()
    };
    assert_eq!(params.user, "é".repeat(31));
}

#[test]
fn bad_startup_packets_close_silently() {
    // Bad length: nothing is sent.
    let (outcome, out) = run(vec![0, 0, 0, 2, 1, 2, 3, 4]);
    assert_eq!(outcome, Startup::Close);
    assert!(out.is_empty());
    // An HTTP request is not a startup packet either.
    let (outcome, out) = run(b"GET / HTTP/1.1\r\n\r\n".to_vec());
    assert_eq!(outcome, Startup::Close);
    assert!(out.is_empty());
    // EOF before and in the middle of a packet.
    assert_eq!(run(Vec::new()).0, Startup::Close);
    let mut partial = startup_message(3, 0, &[("user", "postgres")]);
    partial.truncate(10);
    let (outcome, out) = run(partial);
    assert_eq!(outcome, Startup::Close);
    assert!(out.is_empty());
}

#[test]
fn bad_parameter_layout_is_fatal() {
    let (outcome, out) = run(packet(3 << 16, b"user\0postgres\0"));
    assert_eq!(outcome, Startup::Close);
    assert_eq!(fatal_of(&out).0, "08P01");
    let (outcome, out) = run(packet(3 << 16, b"user\0\xff\0\0"));
    assert_eq!(outcome, Startup::Close);
    assert_eq!(fatal_of(&out).0, "22021");
}

#[test]
fn cancel_request_is_returned_without_reply() {
    let mut body = 77i32.to_be_bytes().to_vec();
    body.extend_from_slice(&(-99i32).to_be_bytes());
    let (outcome, out) = run(packet(CANCEL_REQUEST_CODE, &body));
    assert_eq!(
        outcome,
        Startup::Cancel {
            pid: 77,
            secret: -99
        }
    );
    assert!(out.is_empty());
}

#[test]
fn greeting_reports_parameters() {
    let mut out = Output::new();
    let params = StartupParams {
        user: "alice".into(),
        database: "postgres".into(),
        application_name: "psql".into(),
        client_encoding: "UTF8",
        replication: false,
        settings: Vec::new(),
    };
    let reported = [
        ("application_name", "psql".to_string()),
        ("client_encoding", "UTF8".to_string()),
        ("DateStyle", "ISO, MDY".to_string()),
        ("default_transaction_read_only", "off".to_string()),
        ("IntervalStyle", "postgres".to_string()),
        ("standard_conforming_strings", "on".to_string()),
        ("TimeZone", "UTC".to_string()),
    ];
    greeting(&mut out, &params, 42, 7, false, true, &reported);
    let mut w = Vec::new();
    block_on(out.flush_to(&mut w)).unwrap();
    let msgs = split(&w);
    assert_eq!(msgs.len(), 16);
    assert_eq!(msgs[0], (b'R', vec![0, 0, 0, 0]));
    let status: Vec<(String, String)> = msgs[1..14]
        .iter()
        .map(|(tag, body)| {
            assert_eq!(*tag, b'S');
            let parts: Vec<&[u8]> = body.split(|&b| b == 0).collect();
            (
                String::from_utf8(parts[0].to_vec()).unwrap(),
                String::from_utf8(parts[1].to_vec()).unwrap(),
            )
        })
        .collect();
    assert!(status.contains(&("server_version".into(), "15.0 (SteadyDB 0.1.0)".into())));
    assert!(status.contains(&("application_name".into(), "psql".into())));
    assert!(status.contains(&("session_authorization".into(), "alice".into())));
    assert!(status.contains(&("TimeZone".into(), "UTC".into())));
    assert!(status.contains(&("integer_datetimes".into(), "on".into())));
    assert_eq!(msgs[14], (b'K', vec![0, 0, 0, 42, 0, 0, 0, 7]));
    assert_eq!(msgs[15], (b'Z', b"I".to_vec()));
}

#[test]
fn output_is_flushed_only_before_blocking() {
    let mut input = Vec::new();
    for _ in 0..3 {
        input.extend_from_slice(&[b'S', 0, 0, 0, 4]);
    }
    let mut io = io_with(input);
    // Three pipelined messages arrive in one read; replies to them stay buffered.
    assert!(matches!(
        block_on(io.read_message()),
        Next::Message(b'S', _)
    ));
    for _ in 0..2 {
        io.output.parse_complete();
        assert!(matches!(
            block_on(io.read_message()),
            Next::Message(b'S', _)
        ));
    }
    io.output.parse_complete();
    assert_eq!(io.stream().output.writes, 0);
    // Nothing left to parse: the replies are written, in one write, before reading again.
    assert!(matches!(block_on(io.read_message()), Next::Eof));
    assert_eq!(io.stream().output.writes, 1);
    assert_eq!(io.stream().output.data.len(), 3 * 5);
}

#[test]
fn framing_errors_are_fatal() {
    let mut io = io_with(b"S\0\0\0\x03".to_vec());
    let Next::Fatal(e) = block_on(io.read_message()) else {
        panic!("accepted a bad length")
    };
    assert_eq!(e.message, "invalid message length");
    let mut io = io_with(b"?\0\0\0\x04".to_vec());
    let Next::Fatal(e) = block_on(io.read_message()) else {
        panic!("accepted a bad type")
    };
    assert_eq!(e.message, "invalid frontend message type 63");
}

#[test]
fn options_carry_settings() {
    let params = [
        ("user", "postgres"),
        ("extra_float_digits", "3"),
        (
            "options",
            "-c search_path=app  --statement-timeout=5s -cwork_mem=8MB -c a\\ b=c\\ d",
        ),
    ];
    let (outcome, _) = run(startup_message(3, 0, &params));
    let Startup::Ready(params) = outcome else {
        panic!("not accepted")
    };
    let want: Vec<(String, String)> = [
        ("extra_float_digits", "3"),
        ("search_path", "app"),
        ("statement_timeout", "5s"),
        ("work_mem", "8MB"),
        ("a b", "c d"),
    ]
    .iter()
    .map(|(n, v)| (n.to_string(), v.to_string()))
    .collect();
    assert_eq!(params.settings, want);
    let bad = [("user", "postgres"), ("options", "-D /tmp")];
    let (outcome, out) = run(startup_message(3, 0, &bad));
    assert_eq!(outcome, Startup::Close);
    assert_eq!(
        fatal_of(&out),
        (
            "42601".into(),
            "invalid command-line argument for server process: -D".into()
        )
    );
}
