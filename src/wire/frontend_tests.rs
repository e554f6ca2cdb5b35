use bytes::{BufMut, Bytes, BytesMut};
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::panic::catch_unwind;

use super::*;
use crate::error::SqlState;

/// A whole typed message: type byte, length word, body.
fn message(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![tag];
    m.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
    m.extend_from_slice(body);
    m
}

fn cstr(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}

/// Frame and decode exactly one message from `bytes`.
fn decode_one(bytes: &[u8]) -> Result<FrontendMessage> {
    let mut input = Input::new();
    input.buf.extend_from_slice(bytes);
    match input.take_message()? {
        Framed::Ready((tag, body)) => {
            assert_eq!(input.buffered(), 0, "message not consumed exactly");
            decode_message(tag, body)
        }
        Framed::Incomplete => panic!("message incomplete"),
    }
}

fn bind_body() -> Vec<u8> {
    let mut b = Vec::new();
    cstr(&mut b, "portal1");
    cstr(&mut b, "stmt1");
    b.extend_from_slice(&2u16.to_be_bytes());
    b.extend_from_slice(&0i16.to_be_bytes());
    b.extend_from_slice(&1i16.to_be_bytes());
    b.extend_from_slice(&3u16.to_be_bytes());
    b.extend_from_slice(&2i32.to_be_bytes());
    b.extend_from_slice(b"42");
    b.extend_from_slice(&(-1i32).to_be_bytes());
    b.extend_from_slice(&0i32.to_be_bytes());
    b.extend_from_slice(&1u16.to_be_bytes());
    b.extend_from_slice(&1i16.to_be_bytes());
    b
}

fn parse_body() -> Vec<u8> {
    let mut b = Vec::new();
    cstr(&mut b, "s");
    cstr(&mut b, "SELECT $1, $2");
    b.extend_from_slice(&2u16.to_be_bytes());
    b.extend_from_slice(&23u32.to_be_bytes());
    b.extend_from_slice(&0u32.to_be_bytes());
    b
}

/// One valid body of every message type whose body has structure.
fn structured_messages() -> Vec<(u8, Vec<u8>)> {
    let mut query = Vec::new();
    cstr(&mut query, "SELECT 1");
    let mut describe = vec![b'S'];
    cstr(&mut describe, "s");
    let mut execute = Vec::new();
    cstr(&mut execute, "p");
    execute.extend_from_slice(&10i32.to_be_bytes());
    let mut close = vec![b'P'];
    cstr(&mut close, "p");
    let mut fail = Vec::new();
    cstr(&mut fail, "no more");
    vec![
        (b'Q', query),
        (b'P', parse_body()),
        (b'B', bind_body()),
        (b'D', describe),
        (b'E', execute),
        (b'C', close),
        (b'f', fail),
    ]
}

#[test]
fn decodes_every_message_type() {
    assert_eq!(
        decode_one(&message(b'Q', b"SELECT 1\0")).unwrap(),
        FrontendMessage::Query {
            sql: "SELECT 1".into()
        }
    );
    assert_eq!(
        decode_one(&message(b'P', &parse_body())).unwrap(),
        FrontendMessage::Parse {
            name: "s".into(),
            sql: "SELECT $1, $2".into(),
            param_oids: vec![23, 0]
        }
    );
    assert_eq!(
        decode_one(&message(b'B', &bind_body())).unwrap(),
        FrontendMessage::Bind {
            portal: "portal1".into(),
            statement: "stmt1".into(),
            param_formats: vec![0, 1],
            params: vec![Some(Bytes::from_static(b"42")), None, Some(Bytes::new())],
            result_formats: vec![1],
        }
    );
    assert_eq!(
        decode_one(&message(b'D', b"Sstmt\0")).unwrap(),
        FrontendMessage::Describe {
            target: Target::Statement,
            name: "stmt".into()
        }
    );
    assert_eq!(
        decode_one(&message(b'D', b"P\0")).unwrap(),
        FrontendMessage::Describe {
            target: Target::Portal,
            name: String::new()
        }
    );
    assert_eq!(
        decode_one(&message(b'E', b"p\0\0\0\0\x05")).unwrap(),
        FrontendMessage::Execute {
            portal: "p".into(),
            max_rows: 5
        }
    );
    assert_eq!(
        decode_one(&message(b'C', b"Sx\0")).unwrap(),
        FrontendMessage::Close {
            target: Target::Statement,
            name: "x".into()
        }
    );
    assert_eq!(
        decode_one(&message(b'C', b"Px\0")).unwrap(),
        FrontendMessage::Close {
            target: Target::Portal,
            name: "x".into()
        }
    );
    assert_eq!(
        decode_one(&message(b'S', b"")).unwrap(),
        FrontendMessage::Sync
    );
    assert_eq!(
        decode_one(&message(b'H', b"")).unwrap(),
        FrontendMessage::Flush
    );
    assert_eq!(
        decode_one(&message(b'X', b"")).unwrap(),
        FrontendMessage::Terminate
    );
    assert_eq!(
        decode_one(&message(b'F', b"\0\0")).unwrap(),
        FrontendMessage::FunctionCall
    );
    assert_eq!(
        decode_one(&message(b'd', b"1\tone\n")).unwrap(),
        FrontendMessage::CopyData(Bytes::from_static(b"1\tone\n"))
    );
    assert_eq!(
        decode_one(&message(b'c', b"")).unwrap(),
        FrontendMessage::CopyDone
    );
    assert_eq!(
        decode_one(&message(b'f', b"boom\0")).unwrap(),
        FrontendMessage::CopyFail {
            message: "boom".into()
        }
    );
}

#[test]
fn pipelined_messages_are_framed_one_by_one() {
    let mut input = Input::new();
    let mut stream = message(b'P', &parse_body());
    stream.extend(message(b'B', &bind_body()));
    stream.extend(message(b'S', b""));
    // Everything arrives in one read, plus half of the next message's header.
    stream.extend_from_slice(&[b'Q', 0, 0]);
    let mut src = stream.as_slice();
    assert!(crate::wire::test_support::block_on(input.fill(&mut src)).unwrap() > 0);
    let mut tags = Vec::new();
    while let Framed::Ready((tag, body)) = input.take_message().unwrap() {
        decode_message(tag, body).unwrap();
        tags.push(tag);
    }
    assert_eq!(tags, vec![b'P', b'B', b'S']);
    assert_eq!(input.buffered(), 3);
}

#[test]
fn every_truncation_of_a_structured_body_is_an_error() {
    for (tag, body) in structured_messages() {
        assert!(decode_message(tag, Bytes::from(body.clone())).is_ok());
        for cut in 0..body.len() {
            let err = decode_message(tag, Bytes::copy_from_slice(&body[..cut]))
                .expect_err(&format!("{} truncated to {cut} bytes decoded", tag as char));
            assert_eq!(err.code, SqlState::PROTOCOL_VIOLATION, "{}", tag as char);
        }
    }
}

#[test]
fn trailing_bytes_are_an_error() {
    for (tag, mut body) in structured_messages() {
        body.push(0);
        let err = decode_message(tag, Bytes::from(body)).unwrap_err();
        assert_eq!(err.message, "invalid message format", "{}", tag as char);
    }
    assert!(decode_message(b'S', Bytes::from_static(b"x")).is_err());
    assert!(decode_message(b'H', Bytes::from_static(b"x")).is_err());
}

#[test]
fn bad_counts_are_errors() {
    // Bind claiming 5 parameters but carrying one.
    let mut b = Vec::new();
    cstr(&mut b, "");
    cstr(&mut b, "");
    b.extend_from_slice(&0u16.to_be_bytes());
    b.extend_from_slice(&5u16.to_be_bytes());
    b.extend_from_slice(&1i32.to_be_bytes());
    b.push(b'1');
    b.extend_from_slice(&0u16.to_be_bytes());
    let err = decode_message(b'B', Bytes::from(b)).unwrap_err();
    assert_eq!(err.message, "insufficient data left in message");

    // Bind with 0xffff format codes and nothing after.
    let err = decode_message(b'B', Bytes::from_static(b"\0\0\xff\xff")).unwrap_err();
    assert_eq!(err.code, SqlState::PROTOCOL_VIOLATION);

    // Parse with 0xffff parameter types.
    let err =
        decode_message(b'P', Bytes::from_static(b"\0SELECT 1\0\xff\xff\0\0\0\x17")).unwrap_err();
    assert_eq!(err.message, "insufficient data left in message");

    // Bind whose third count (result formats) is too large.
    let err =
        decode_message(b'B', Bytes::from_static(b"\0\0\0\0\0\0\0\x05\0\0\0\0\0\0")).unwrap_err();
    assert_eq!(err.code, SqlState::PROTOCOL_VIOLATION);
}

#[test]
fn negative_and_huge_parameter_lengths_are_errors() {
    for len in [-2i32, i32::MIN, i32::MAX, 3] {
        let mut b = Vec::new();
        cstr(&mut b, "");
        cstr(&mut b, "");
        b.extend_from_slice(&0u16.to_be_bytes());
        b.extend_from_slice(&1u16.to_be_bytes());
        b.extend_from_slice(&len.to_be_bytes());
        b.extend_from_slice(b"ab");
        b.extend_from_slice(&0u16.to_be_bytes());
        let err = decode_message(b'B', Bytes::from(b)).unwrap_err();
        assert_eq!(err.code, SqlState::PROTOCOL_VIOLATION, "length {len}");
    }
}

#[test]
fn invalid_utf8_is_22021() {
    let cases: Vec<(u8, Vec<u8>)> = vec![
        (b'Q', b"SELECT '\xff'\0".to_vec()),
        (b'P', b"\xc3\x28\0SELECT 1\0\0\0".to_vec()),
        (b'D', b"S\xe2\x82\0".to_vec()),
        (b'E', b"\x80\0\0\0\0\0".to_vec()),
        (b'C', b"P\xfe\0".to_vec()),
        (b'f', b"bad \xed\xa0\x80\0".to_vec()),
    ];
    for (tag, body) in cases {
        let err = decode_message(tag, Bytes::from(body)).unwrap_err();
        assert_eq!(
            err.code,
            SqlState::CHARACTER_NOT_IN_REPERTOIRE,
            "{}",
            tag as char
        );
        assert!(err
            .message
            .starts_with("invalid byte sequence for encoding \"UTF8\": 0x"));
    }
    assert_eq!(
        utf8(b"ab\xc3\x28").unwrap_err().message,
        "invalid byte sequence for encoding \"UTF8\": 0xc3"
    );
    assert!(utf8_text(b"a\0b").is_err());
    assert_eq!(utf8_text("é".as_bytes()).unwrap(), "é");
}

#[test]
fn missing_string_terminator_is_an_error() {
    let err = decode_message(b'Q', Bytes::from_static(b"SELECT 1")).unwrap_err();
    assert_eq!(err.message, "invalid string in message");
}

#[test]
fn bad_subtypes_are_errors() {
    let err = decode_message(b'D', Bytes::from_static(b"Xname\0")).unwrap_err();
    assert_eq!(err.message, "invalid DESCRIBE message subtype 88");
    let err = decode_message(b'C', Bytes::from_static(b"\0name\0")).unwrap_err();
    assert_eq!(err.message, "invalid CLOSE message subtype 0");
}

#[test]
fn bad_headers_are_rejected_before_the_body_arrives() {
    // Unknown type: rejected from the first byte.
    let mut input = Input::new();
    input.buf.extend_from_slice(b"Z");
    assert_eq!(
        input.take_message().unwrap_err().message,
        "invalid frontend message type 90"
    );

    for len in [
        -1i32,
        0,
        3,
        i32::MIN,
        i32::MAX,
        MAX_MESSAGE_BYTES as i32 + 1,
    ] {
        let mut input = Input::new();
        input.buf.put_u8(b'Q');
        input.buf.put_i32(len);
        assert_eq!(
            input.take_message().unwrap_err().message,
            "invalid message length"
        );
    }
    // Small message types have a small limit.
    let mut input = Input::new();
    input.buf.put_u8(b'S');
    input.buf.put_i32(SMALL_MESSAGE_BYTES as i32 + 1);
    assert!(input.take_message().is_err());
    // A large but allowed length just waits for more bytes, without reserving them.
    let mut input = Input::new();
    input.buf.put_u8(b'd');
    input.buf.put_i32(MAX_MESSAGE_BYTES as i32);
    assert!(matches!(input.take_message().unwrap(), Framed::Incomplete));
    assert!(input.buf.capacity() < 1024 * 1024);
}

fn startup_packet(code: u32, rest: &[u8]) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&(8 + rest.len() as i32).to_be_bytes());
    p.extend_from_slice(&code.to_be_bytes());
    p.extend_from_slice(rest);
    p
}

fn take_startup(bytes: &[u8]) -> Result<StartupPacket> {
    let mut input = Input::new();
    input.buf.extend_from_slice(bytes);
    match input.take_startup()? {
        Framed::Ready(p) => Ok(p),
        Framed::Incomplete => panic!("startup packet incomplete"),
    }
}

#[test]
fn decodes_startup_packets() {
    assert_eq!(
        take_startup(&startup_packet(SSL_REQUEST_CODE, b"")).unwrap(),
        StartupPacket::SslRequest
    );
    assert_eq!(
        take_startup(&startup_packet(GSSENC_REQUEST_CODE, b"")).unwrap(),
        StartupPacket::GssEncRequest
    );
    let mut cancel = Vec::new();
    cancel.extend_from_slice(&1234i32.to_be_bytes());
    cancel.extend_from_slice(&(-5i32).to_be_bytes());
    assert_eq!(
        take_startup(&startup_packet(CANCEL_REQUEST_CODE, &cancel)).unwrap(),
        StartupPacket::Cancel {
            pid: 1234,
            secret: -5
        }
    );
    let block = b"user\0alice\0database\0db\0user\0bob\0\0";
    let StartupPacket::Startup {
        major,
        minor,
        params,
    } = take_startup(&startup_packet(0x0003_0002, block)).unwrap()
    else {
        panic!("not a startup message")
    };
    assert_eq!((major, minor), (3, 2));
    assert_eq!(
        parse_startup_params(&params).unwrap(),
        vec![
            ("database".to_string(), "db".to_string()),
            ("user".to_string(), "bob".to_string())
        ]
    );
}

#[test]
fn bad_startup_packets_are_errors() {
    // Lengths out of range are rejected from the length word alone.
    for len in [
        -1i32,
        0,
        4,
        7,
        MAX_STARTUP_PACKET_BYTES as i32 + 1,
        i32::MAX,
    ] {
        let mut input = Input::new();
        input.buf.put_i32(len);
        assert_eq!(
            input.take_startup().unwrap_err().message,
            "invalid length of startup packet"
        );
    }
    // Cancel and SSL requests of the wrong size.
    assert!(take_startup(&startup_packet(CANCEL_REQUEST_CODE, b"\0\0\0\x01")).is_err());
    assert!(take_startup(&startup_packet(SSL_REQUEST_CODE, b"\0")).is_err());
    // Parameter blocks without the final terminator, or with stray bytes after it.
    for block in [
        &b""[..],
        b"user\0bob\0",
        b"user\0bob",
        b"user",
        b"\0x",
        b"user\0bob\0\0\0",
    ] {
        let err = parse_startup_params(block).unwrap_err();
        assert_eq!(err.code, SqlState::PROTOCOL_VIOLATION, "{block:?}");
    }
    assert_eq!(parse_startup_params(b"\0").unwrap(), vec![]);
    let err = parse_startup_params(b"user\0b\xffb\0\0").unwrap_err();
    assert_eq!(err.code, SqlState::CHARACTER_NOT_IN_REPERTOIRE);
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = StdRng::seed_from_u64(0x005e_eddb);
    let tags = b"QPBDECSHXFdcf";
    let mut decoded = 0usize;
    for i in 0..100_000 {
        let len = rng.gen_range(0..48);
        let mut body: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        // Bias half of the bodies towards plausible shapes: small counts and NULs.
        if i % 2 == 0 {
            for b in body.iter_mut() {
                if rng.gen_bool(0.3) {
                    *b = rng.gen_range(0..3);
                }
            }
        }
        let tag = if rng.gen_bool(0.9) {
            tags[rng.gen_range(0..tags.len())]
        } else {
            rng.gen()
        };
        if decode_message(tag, Bytes::from(body.clone())).is_ok() {
            decoded += 1;
        }
        let _ = decode_startup(Bytes::from(body.clone()));
        let _ = parse_startup_params(&body);
        let _ = utf8(&body);

        // The same bytes as a raw stream through the framer.
        let mut input = Input::new();
        input.buf.extend_from_slice(&body);
        while let Ok(Framed::Ready((tag, body))) = input.take_message() {
            let _ = decode_message(tag, body);
        }
        let mut input = Input::new();
        input.buf.extend_from_slice(&body);
        let _ = input.take_startup();
    }
    // Some random bodies are valid (e.g. CopyData, Terminate): the loop really decodes.
    assert!(decoded > 1_000, "only {decoded} random messages decoded");
}

#[test]
fn random_mutations_of_valid_messages_never_panic() {
    let mut rng = StdRng::seed_from_u64(42);
    let valid = structured_messages();
    for _ in 0..100_000 {
        let (tag, body) = &valid[rng.gen_range(0..valid.len())];
        let mut body = BytesMut::from(&body[..]);
        match rng.gen_range(0..3) {
            0 => {
                let i = rng.gen_range(0..body.len());
                body[i] = rng.gen();
            }
            1 => body.truncate(rng.gen_range(0..body.len())),
            _ => {
                let i = rng.gen_range(0..body.len());
                let n: u8 = rng.gen();
                body[i] = n;
                if i + 1 < body.len() {
                    body[i + 1] = 0xff;
                }
            }
        }
        let _ = decode_message(*tag, body.freeze());
    }
}
/// Valid messages of each type the decoder knows, as (type byte, body).
fn message_seeds() -> Vec<(u8, Vec<u8>)> {
    let mut bind = Vec::new();
    bind.extend_from_slice(b"p\0s\0");
    bind.extend_from_slice(&[0, 1, 0, 1, 0, 2, 0, 0, 0, 1, b'7', 0xff, 0xff, 0xff, 0xff]);
    bind.extend_from_slice(&[0, 1, 0, 0]);
    vec![
        (b'Q', b"select 1\0".to_vec()),
        (b'P', b"s\0select $1\0\0\x01\0\0\0\x17".to_vec()),
        (b'B', bind),
        (b'D', b"Ss\0".to_vec()),
        (b'E', b"p\0\0\0\0\x0a".to_vec()),
        (b'C', b"Pp\0".to_vec()),
        (b'S', Vec::new()),
        (b'H', Vec::new()),
        (b'X', Vec::new()),
        (b'd', b"1\tx\n".to_vec()),
        (b'c', Vec::new()),
        (b'f', b"oops\0".to_vec()),
    ]
}

#[test]
fn the_message_decoder_never_panics() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(31);
    let seeds = message_seeds();
    let mut failures = Vec::new();
    for _ in 0..50_000 {
        let (tag, mut body) = seeds[rng.gen_range(0..seeds.len())].clone();
        for _ in 0..rng.gen_range(1..4) {
            match rng.gen_range(0..4) {
                0 if !body.is_empty() => {
                    let i = rng.gen_range(0..body.len());
                    body[i] = rng.gen();
                }
                1 if !body.is_empty() => {
                    let n = rng.gen_range(0..body.len());
                    body.truncate(n);
                }
                2 => {
                    let i = rng.gen_range(0..=body.len());
                    let extra: Vec<u8> = (0..rng.gen_range(1..6)).map(|_| rng.gen()).collect();
                    body.splice(i..i, extra);
                }
                _ => {
                    let i = rng.gen_range(0..=body.len());
                    body.splice(i..i, [0xff, 0xff, 0xff, 0xfe]);
                }
            }
        }
        let input = Bytes::from(body.clone());
        if catch_unwind(|| decode_message(tag, input)).is_err() {
            failures.push(format!("{} {:?}", tag as char, body));
        }
    }
    assert!(
        failures.is_empty(),
        "messages that panicked:\n{}",
        failures.join("\n")
    );
}
