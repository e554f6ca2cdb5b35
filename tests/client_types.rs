//! Round-trips every supported type through tokio-postgres:
//! prepared statements (binary parameters and results) and `simple_query` (text).
//!
//! Runs against a freshly started `steadydb` binary, or against the server named by
//! `STEADYDB_TEST_EXTERNAL` (e.g. `host=127.0.0.1 port=5432 user=postgres`).
//!
//! `numeric` is exchanged in binary through a small codec defined here
//! (`PgNumeric`), because `rust_decimal` is built without its `db-tokio-postgres`
//! feature; it is also round-tripped as text via `$1::text::numeric`.

mod common;

use std::error::Error;
use std::fmt::Debug;
use std::future::Future;
use std::time::Duration;

use bytes::{BufMut, BytesMut};
use chrono::{DateTime, FixedOffset, NaiveDate, NaiveDateTime, TimeZone, Utc};
use common::{unique_table, TestServer};
use postgres_types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, SimpleQueryMessage};

type BoxError = Box<dyn Error + Sync + Send>;

const TEST_TIMEOUT: Duration = Duration::from_secs(180);

async fn within_limit<F: Future<Output = ()>>(fut: F) {
    tokio::time::timeout(TEST_TIMEOUT, fut)
        .await
        .expect("test exceeded its time limit (server hung?)");
}

// --------------------------------------------------------------------------- numeric codec

/// A numeric value in its canonical PostgreSQL text form (e.g. "-12.50", "NaN").
#[derive(Debug, Clone, PartialEq)]
struct PgNumeric(String);

const NUMERIC_POS: u16 = 0x0000;
const NUMERIC_NEG: u16 = 0x4000;
const NUMERIC_NAN: u16 = 0xC000;

fn encode_numeric(text: &str, out: &mut BytesMut) -> Result<(), BoxError> {
    if text == "NaN" {
        out.put_i16(0);
        out.put_i16(0);
        out.put_u16(NUMERIC_NAN);
        out.put_u16(0);
        return Ok(());
    }
    let (neg, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (int_part, frac_part) = body.split_once('.').unwrap_or((body, ""));
    if int_part.is_empty() && frac_part.is_empty()
        || !int_part
            .chars()
            .chain(frac_part.chars())
            .all(|c| c.is_ascii_digit())
    {
        return Err(format!("bad numeric literal {text:?}").into());
    }
    let dscale = frac_part.len() as u16;
    let int_pad = (4 - int_part.len() % 4) % 4;
    let int_digits = format!("{}{}", "0".repeat(int_pad), int_part);
    let frac_pad = (4 - frac_part.len() % 4) % 4;
    let frac_digits = format!("{}{}", frac_part, "0".repeat(frac_pad));
    let mut groups: Vec<i16> = Vec::new();
    for chunk in int_digits
        .as_bytes()
        .chunks(4)
        .chain(frac_digits.as_bytes().chunks(4))
    {
        groups.push(std::str::from_utf8(chunk)?.parse()?);
    }
    let mut weight = (int_digits.len() / 4) as i16 - 1;
    while groups.first() == Some(&0) {
        groups.remove(0);
        weight -= 1;
    }
    while groups.last() == Some(&0) {
        groups.pop();
    }
    let sign = if neg && !groups.is_empty() {
        NUMERIC_NEG
    } else {
        NUMERIC_POS
    };
    if groups.is_empty() {
        weight = 0;
    }
    out.put_i16(groups.len() as i16);
    out.put_i16(weight);
    out.put_u16(sign);
    out.put_u16(dscale);
    for g in groups {
        out.put_i16(g);
    }
    Ok(())
}

fn decode_numeric(raw: &[u8]) -> Result<String, BoxError> {
    if raw.len() < 8 {
        return Err("numeric too short".into());
    }
    let rd = |i: usize| i16::from_be_bytes([raw[i], raw[i + 1]]);
    let ndigits = rd(0);
    let weight = rd(2) as isize;
    let sign = u16::from_be_bytes([raw[4], raw[5]]);
    let dscale = u16::from_be_bytes([raw[6], raw[7]]) as usize;
    if ndigits < 0 || raw.len() != 8 + 2 * ndigits as usize {
        return Err(format!("bad numeric length {} for {} digits", raw.len(), ndigits).into());
    }
    match sign {
        NUMERIC_NAN => return Ok("NaN".into()),
        0xD000 => return Ok("Infinity".into()),
        0xF000 => return Ok("-Infinity".into()),
        NUMERIC_POS | NUMERIC_NEG => {}
        other => return Err(format!("bad numeric sign {other:#x}").into()),
    }
    let digits: Vec<i16> = (0..ndigits as usize).map(|i| rd(8 + 2 * i)).collect();
    if digits.iter().any(|d| !(0..10000).contains(d)) {
        return Err(format!("bad numeric digit in {digits:?}").into());
    }
    let digit_at = |idx: isize| -> i16 {
        if idx >= 0 && (idx as usize) < digits.len() {
            digits[idx as usize]
        } else {
            0
        }
    };
    let mut s = String::new();
    if sign == NUMERIC_NEG {
        s.push('-');
    }
    if weight < 0 {
        s.push('0');
    } else {
        for w in (0..=weight).rev() {
            let d = digit_at(weight - w);
            if w == weight {
                s.push_str(&d.to_string());
            } else {
                s.push_str(&format!("{d:04}"));
            }
        }
    }
    if dscale > 0 {
        let mut frac = String::new();
        let mut k = 1;
        while frac.len() < dscale {
            frac.push_str(&format!("{:04}", digit_at(weight + k)));
            k += 1;
        }
        frac.truncate(dscale);
        s.push('.');
        s.push_str(&frac);
    }
    Ok(s)
}

impl ToSql for PgNumeric {
    fn to_sql(&self, _ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        encode_numeric(&self.0, out)?;
        Ok(IsNull::No)
    }
    fn accepts(ty: &Type) -> bool {
        *ty == Type::NUMERIC
    }
    to_sql_checked!();
}

impl<'a> FromSql<'a> for PgNumeric {
    fn from_sql(_ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(PgNumeric(decode_numeric(raw)?))
    }
    fn accepts(ty: &Type) -> bool {
        *ty == Type::NUMERIC
    }
}

#[test]
fn numeric_codec_self_check() {
    for s in [
        "0",
        "1",
        "-1",
        "12.50",
        "0.0001",
        "-0.00012",
        "10000",
        "123456789.123456789",
        "NaN",
    ] {
        let mut buf = BytesMut::new();
        encode_numeric(s, &mut buf).unwrap();
        assert_eq!(decode_numeric(&buf).unwrap(), s);
    }
    // canonical PostgreSQL encoding of 12.50: 2 digits, weight 0, dscale 2, [12, 5000]
    let mut buf = BytesMut::new();
    encode_numeric("12.50", &mut buf).unwrap();
    assert_eq!(&buf[..], &[0, 2, 0, 0, 0, 0, 0, 2, 0, 12, 0x13, 0x88]);
}

// --------------------------------------------------------------------------- comparisons

fn same_f64(a: &f64, b: &f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

fn same_f32(a: &f32, b: &f32) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

fn eq<T: PartialEq>(a: &T, b: &T) -> bool {
    a == b
}

/// `select $1::ty` with each value (binary in, binary out), plus NULL.
async fn round_trip<T>(client: &Client, ty: &str, values: &[T], same: fn(&T, &T) -> bool)
where
    T: ToSql + Sync + Debug + for<'a> FromSql<'a>,
{
    let stmt = client
        .prepare(&format!("select $1::{ty}"))
        .await
        .unwrap_or_else(|e| panic!("prepare select $1::{ty}: {e}"));
    assert_eq!(stmt.columns().len(), 1);
    for v in values {
        let row = client
            .query_one(&stmt, &[v])
            .await
            .unwrap_or_else(|e| panic!("select {v:?}::{ty}: {e}"));
        let got: T = row.get(0);
        assert!(same(&got, v), "{ty}: sent {v:?}, got {got:?}");
    }
    let row = client
        .query_one(&stmt, &[&None::<T>])
        .await
        .unwrap_or_else(|e| panic!("select NULL::{ty}: {e}"));
    let got: Option<T> = row.get(0);
    assert!(got.is_none(), "{ty}: NULL came back as {got:?}");
}

fn d(y: i32, m: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, day).unwrap()
}

fn ts(y: i32, m: u32, day: u32, h: u32, mi: u32, s: u32, us: u32) -> NaiveDateTime {
    d(y, m, day).and_hms_micro_opt(h, mi, s, us).unwrap()
}

fn float8_values() -> Vec<f64> {
    vec![
        0.0,
        -0.0,
        1.5,
        -123.456,
        0.1,
        1e-300,
        5e-324,
        f64::MIN_POSITIVE,
        f64::MAX,
        f64::MIN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ]
}

fn float4_values() -> Vec<f32> {
    vec![
        0.0,
        -0.0,
        1.5,
        -2.25,
        0.1,
        f32::MIN_POSITIVE,
        1.0e-45,
        f32::MAX,
        f32::MIN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ]
}

fn text_values() -> Vec<String> {
    vec![
        String::new(),
        "hello".into(),
        "ünïcødé ✓ 日本語 🎉".into(),
        "it's \"quoted\" \\ back".into(),
        "tab\there\nnewline".into(),
        "x".repeat(100_000),
    ]
}

fn timestamp_values() -> Vec<NaiveDateTime> {
    vec![
        ts(2024, 2, 29, 23, 59, 59, 999_999),
        ts(2000, 1, 1, 0, 0, 0, 0),
        ts(1999, 12, 31, 23, 59, 59, 1),
        ts(1970, 1, 1, 0, 0, 0, 123_456),
        ts(1, 1, 1, 0, 0, 0, 0),
        ts(9999, 12, 31, 23, 59, 59, 999_999),
    ]
}

fn timestamptz_values() -> Vec<DateTime<Utc>> {
    let ist = FixedOffset::east_opt(5 * 3600 + 1800).unwrap();
    vec![
        Utc.from_utc_datetime(&ts(2024, 2, 29, 23, 59, 59, 999_999)),
        Utc.from_utc_datetime(&ts(2000, 1, 1, 0, 0, 0, 0)),
        Utc.from_utc_datetime(&ts(1999, 12, 31, 23, 59, 59, 1)),
        ist.from_local_datetime(&ts(2024, 6, 1, 12, 30, 0, 500))
            .unwrap()
            .with_timezone(&Utc),
    ]
}

fn date_values() -> Vec<NaiveDate> {
    vec![
        d(2024, 2, 29),
        d(2000, 1, 1),
        d(1999, 12, 31),
        d(1, 1, 1),
        d(9999, 12, 31),
        d(1970, 1, 1),
    ]
}

fn bytea_values() -> Vec<Vec<u8>> {
    vec![
        vec![],
        vec![0],
        vec![0, 1, 2, 255, 0],
        (0..=255).collect(),
        (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect(),
    ]
}

// --------------------------------------------------------------------------- prepared (binary)

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_select_param_round_trip() {
    let server = TestServer::start().await;
    within_limit(async {
        let c = server.connect().await;
        round_trip(&c, "boolean", &[true, false], eq).await;
        round_trip(&c, "smallint", &[0i16, 1, -1, i16::MIN, i16::MAX], eq).await;
        round_trip(&c, "int", &[0i32, 42, i32::MIN, i32::MAX], eq).await;
        round_trip(&c, "bigint", &[0i64, i64::MIN, i64::MAX, 1 << 40], eq).await;
        round_trip(&c, "real", &float4_values(), same_f32).await;
        round_trip(&c, "double precision", &float8_values(), same_f64).await;
        round_trip(&c, "text", &text_values(), eq).await;
        round_trip(
            &c,
            "varchar(10)",
            &["".to_string(), "abcdefghij".into(), "日本語".into()],
            eq,
        )
        .await;
        round_trip(&c, "timestamp", &timestamp_values(), eq).await;
        round_trip(&c, "timestamptz", &timestamptz_values(), eq).await;
        round_trip(&c, "date", &date_values(), eq).await;
        round_trip(&c, "bytea", &bytea_values(), eq).await;
        let numerics: Vec<PgNumeric> = [
            "0",
            "1.5",
            "-12345678901234.123456",
            "0.000001",
            "10000",
            "99999999999999999999.99",
            "-0.5",
        ]
        .iter()
        .map(|s| PgNumeric(s.to_string()))
        .collect();
        round_trip(&c, "numeric", &numerics, eq).await;
        round_trip(&c, "numeric(20,6)", &[PgNumeric("2.500000".into())], eq).await;

        // bpchar pads to its length
        let row = c
            .query_one("select $1::char(5), $2::char(3)", &[&"ab", &""])
            .await
            .unwrap();
        assert_eq!(row.get::<_, String>(0), "ab   ");
        assert_eq!(row.get::<_, String>(1), "   ");
        // numeric rounding to the declared scale, sent in binary
        let row = c
            .query_one("select $1::numeric(5,2)", &[&PgNumeric("2.345".into())])
            .await
            .unwrap();
        assert_eq!(row.get::<_, PgNumeric>(0), PgNumeric("2.35".into()));
        // numeric as text: $1::text::numeric
        let row = c
            .query_one(
                "select ($1::text::numeric(12,3))::text",
                &[&"-1234.5678".to_string()],
            )
            .await
            .unwrap();
        assert_eq!(row.get::<_, String>(0), "-1234.568");
    })
    .await;
    server.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_table_round_trip_with_inferred_param_types() {
    let server = TestServer::start().await;
    within_limit(async {
        let c = server.connect().await;
        let t = unique_table("rs_types");
        c.batch_execute(&format!(
            "create table {t} (id serial primary key, big bigserial, b boolean, s smallint, i int, \
             l bigint, r real, f double precision, n numeric(20,6), tx text, vc varchar(12), \
             ch char(4), tsp timestamp, tz timestamptz, dt date, by bytea)"
        ))
        .await
        .unwrap();
        let insert = c
            .prepare(&format!(
                "insert into {t} (b, s, i, l, r, f, n, tx, vc, ch, tsp, tz, dt, by) \
                 values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) \
                 returning id, big"
            ))
            .await
            .unwrap();
        // parameter types are inferred from the target columns
        assert_eq!(
            insert.params(),
            &[
                Type::BOOL,
                Type::INT2,
                Type::INT4,
                Type::INT8,
                Type::FLOAT4,
                Type::FLOAT8,
                Type::NUMERIC,
                Type::TEXT,
                Type::VARCHAR,
                Type::BPCHAR,
                Type::TIMESTAMP,
                Type::TIMESTAMPTZ,
                Type::DATE,
                Type::BYTEA
            ]
        );
        assert_eq!(
            insert
                .columns()
                .iter()
                .map(|c| c.type_().clone())
                .collect::<Vec<_>>(),
            vec![Type::INT4, Type::INT8]
        );

        struct Row {
            b: bool,
            s: i16,
            i: i32,
            l: i64,
            r: f32,
            f: f64,
            n: (&'static str, &'static str),
            tx: String,
            vc: String,
            ch: (&'static str, &'static str),
            tsp: NaiveDateTime,
            tz: DateTime<Utc>,
            dt: NaiveDate,
            by: Vec<u8>,
        }
        let rows = [
            Row {
                b: true,
                s: i16::MIN,
                i: i32::MAX,
                l: i64::MIN,
                r: f32::NAN,
                f: -0.0,
                n: ("-12345678901234.123456", "-12345678901234.123456"),
                tx: "ünïcødé 🎉".into(),
                vc: "twelve chars".into(),
                ch: ("ab", "ab  "),
                tsp: ts(1999, 12, 31, 23, 59, 59, 1),
                tz: timestamptz_values()[3],
                dt: d(1, 1, 1),
                by: vec![0, 0, 255],
            },
            Row {
                b: false,
                s: i16::MAX,
                i: i32::MIN,
                l: i64::MAX,
                r: f32::INFINITY,
                f: 1e-300,
                n: ("0.0000005", "0.000001"),
                tx: String::new(),
                vc: String::new(),
                ch: ("", "    "),
                tsp: ts(9999, 12, 31, 23, 59, 59, 999_999),
                tz: timestamptz_values()[0],
                dt: d(9999, 12, 31),
                by: vec![],
            },
        ];
        for (k, r) in rows.iter().enumerate() {
            let n = PgNumeric(r.n.0.to_string());
            let ch = r.ch.0.to_string();
            let got = c
                .query_one(
                    &insert,
                    &[
                        &r.b, &r.s, &r.i, &r.l, &r.r, &r.f, &n, &r.tx, &r.vc, &ch, &r.tsp, &r.tz,
                        &r.dt, &r.by,
                    ],
                )
                .await
                .unwrap();
            assert_eq!(got.get::<_, i32>(0), k as i32 + 1);
            assert_eq!(got.get::<_, i64>(1), k as i64 + 1);
        }
        // NULL for every column: typed Options matching the inferred parameter types
        c.execute(
            &insert,
            &[
                &None::<bool>,
                &None::<i16>,
                &None::<i32>,
                &None::<i64>,
                &None::<f32>,
                &None::<f64>,
                &None::<PgNumeric>,
                &None::<String>,
                &None::<String>,
                &None::<String>,
                &None::<NaiveDateTime>,
                &None::<DateTime<Utc>>,
                &None::<NaiveDate>,
                &None::<Vec<u8>>,
            ],
        )
        .await
        .unwrap();

        let select = c
            .prepare(&format!(
                "select b, s, i, l, r, f, n, tx, vc, ch, tsp, tz, dt, by from {t} where id = $1"
            ))
            .await
            .unwrap();
        assert_eq!(select.params(), &[Type::INT4]);
        assert_eq!(
            select
                .columns()
                .iter()
                .map(|c| c.type_().clone())
                .collect::<Vec<_>>(),
            vec![
                Type::BOOL,
                Type::INT2,
                Type::INT4,
                Type::INT8,
                Type::FLOAT4,
                Type::FLOAT8,
                Type::NUMERIC,
                Type::TEXT,
                Type::VARCHAR,
                Type::BPCHAR,
                Type::TIMESTAMP,
                Type::TIMESTAMPTZ,
                Type::DATE,
                Type::BYTEA
            ]
        );
        for (k, r) in rows.iter().enumerate() {
            let got = c.query_one(&select, &[&(k as i32 + 1)]).await.unwrap();
            assert_eq!(got.get::<_, bool>(0), r.b);
            assert_eq!(got.get::<_, i16>(1), r.s);
            assert_eq!(got.get::<_, i32>(2), r.i);
            assert_eq!(got.get::<_, i64>(3), r.l);
            assert!(same_f32(&got.get::<_, f32>(4), &r.r));
            assert!(same_f64(&got.get::<_, f64>(5), &r.f));
            assert_eq!(got.get::<_, PgNumeric>(6), PgNumeric(r.n.1.to_string()));
            assert_eq!(got.get::<_, String>(7), r.tx);
            assert_eq!(got.get::<_, String>(8), r.vc);
            assert_eq!(got.get::<_, String>(9), r.ch.1);
            assert_eq!(got.get::<_, NaiveDateTime>(10), r.tsp);
            assert_eq!(got.get::<_, DateTime<Utc>>(11), r.tz);
            assert_eq!(got.get::<_, NaiveDate>(12), r.dt);
            assert_eq!(got.get::<_, Vec<u8>>(13), r.by);
        }
        let got = c.query_one(&select, &[&3i32]).await.unwrap();
        assert!(got.get::<_, Option<bool>>(0).is_none());
        assert!(got.get::<_, Option<i16>>(1).is_none());
        assert!(got.get::<_, Option<i32>>(2).is_none());
        assert!(got.get::<_, Option<i64>>(3).is_none());
        assert!(got.get::<_, Option<f32>>(4).is_none());
        assert!(got.get::<_, Option<f64>>(5).is_none());
        assert!(got.get::<_, Option<PgNumeric>>(6).is_none());
        assert!(got.get::<_, Option<String>>(7).is_none());
        assert!(got.get::<_, Option<String>>(8).is_none());
        assert!(got.get::<_, Option<String>>(9).is_none());
        assert!(got.get::<_, Option<NaiveDateTime>>(10).is_none());
        assert!(got.get::<_, Option<DateTime<Utc>>>(11).is_none());
        assert!(got.get::<_, Option<NaiveDate>>(12).is_none());
        assert!(got.get::<_, Option<Vec<u8>>>(13).is_none());

        // parameters in WHERE clauses get the column's type too
        let rows = c
            .query(
                &format!("select id from {t} where l = $1 or s = $2 order by id"),
                &[&i64::MAX, &i16::MIN],
            )
            .await
            .unwrap();
        assert_eq!(
            rows.iter().map(|r| r.get::<_, i32>(0)).collect::<Vec<_>>(),
            vec![1, 2]
        );

        // server-side errors carry SQLSTATEs
        let err = c
            .execute(
                &format!("insert into {t} (vc) values ($1)"),
                &[&"thirteen chars".to_string()],
            )
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some(&SqlState::STRING_DATA_RIGHT_TRUNCATION));
        let err = c
            .execute(&format!("insert into {t} (id) values ($1)"), &[&1i32])
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some(&SqlState::UNIQUE_VIOLATION));
        c.batch_execute(&format!("drop table {t}")).await.unwrap();
    })
    .await;
    server.stop();
}

// --------------------------------------------------------------------------- simple query (text)

fn text_rows(msgs: &[SimpleQueryMessage]) -> Vec<Vec<Option<String>>> {
    msgs.iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(
                (0..r.len())
                    .map(|i| r.get(i).map(str::to_string))
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        })
        .collect()
}

fn command_counts(msgs: &[SimpleQueryMessage]) -> Vec<u64> {
    msgs.iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::CommandComplete(n) => Some(*n),
            _ => None,
        })
        .collect()
}

async fn one_text(c: &Client, sql: &str) -> Vec<Option<String>> {
    let msgs = c
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let rows = text_rows(&msgs);
    assert_eq!(rows.len(), 1, "{sql}");
    rows.into_iter().next().unwrap()
}

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

fn parse_tz(v: &str) -> DateTime<FixedOffset> {
    // PostgreSQL prints offsets as +HH, +HH:MM or +HH:MM:SS
    let v = v.to_string();
    let fixed = match v.rfind(['+', '-']) {
        Some(pos) if v.len() - pos == 3 => format!("{v}:00"),
        _ => v.clone(),
    };
    DateTime::parse_from_str(&fixed, "%Y-%m-%d %H:%M:%S%.f%:z")
        .unwrap_or_else(|e| panic!("cannot parse timestamptz {v:?}: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simple_query_text_round_trip() {
    let server = TestServer::start().await;
    within_limit(async {
        let c = server.connect().await;
        let t = unique_table("rs_text");
        let msgs = c
            .simple_query(&format!(
                "create table {t} (id int primary key, b boolean, s smallint, i int, l bigint, \
                 r real, f double precision, n numeric(12,3), tx text, vc varchar(5), ch char(4), \
                 tsp timestamp, tz timestamptz, dt date, by bytea); \
                 insert into {t} values \
                 (1, true, -32768, 2147483647, -9223372036854775808, 1.5, 0.1, 1.0005, \
                  'it''s ü', 'abcde', 'ab', '2024-02-29 23:59:59.999999', \
                  '2024-06-01 12:30:00.0005+05:30', '2024-02-29', '\\x00ff10'), \
                 (2, false, 32767, -2147483648, 9223372036854775807, 'NaN', '-Infinity', -2, \
                  '', '', '', '1999-12-31 23:59:59.000001', '2000-01-01 00:00:00+00', \
                  '0001-01-01', ''), \
                 (3, null, null, null, null, null, null, null, null, null, null, null, null, \
                  null, null)"
            ))
            .await
            .unwrap();
        assert_eq!(command_counts(&msgs), vec![0, 3]);

        let msgs = c
            .simple_query(&format!(
                "select b, s, i, l, r, f, n, tx, vc, ch, tsp, dt, by from {t} order by id"
            ))
            .await
            .unwrap();
        assert_eq!(
            text_rows(&msgs),
            vec![
                vec![
                    s("t"),
                    s("-32768"),
                    s("2147483647"),
                    s("-9223372036854775808"),
                    s("1.5"),
                    s("0.1"),
                    s("1.001"),
                    s("it's ü"),
                    s("abcde"),
                    s("ab  "),
                    s("2024-02-29 23:59:59.999999"),
                    s("2024-02-29"),
                    s("\\x00ff10"),
                ],
                vec![
                    s("f"),
                    s("32767"),
                    s("-2147483648"),
                    s("9223372036854775807"),
                    s("NaN"),
                    s("-Infinity"),
                    s("-2.000"),
                    s(""),
                    s(""),
                    s("    "),
                    s("1999-12-31 23:59:59.000001"),
                    s("0001-01-01"),
                    s("\\x"),
                ],
                vec![None; 13],
            ]
        );
        assert_eq!(command_counts(&msgs), vec![3]);

        // timestamptz text depends on the connection's TimeZone: compare instants
        let msgs = c
            .simple_query(&format!("select tz from {t} order by id"))
            .await
            .unwrap();
        let tz = text_rows(&msgs);
        assert_eq!(
            parse_tz(tz[0][0].as_deref().unwrap()),
            parse_tz("2024-06-01 07:00:00.0005+00")
        );
        assert_eq!(
            parse_tz(tz[1][0].as_deref().unwrap()),
            parse_tz("2000-01-01 00:00:00+00")
        );
        assert_eq!(tz[2][0], None);
        c.batch_execute(&format!("drop table {t}")).await.unwrap();
    })
    .await;
    server.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simple_query_text_formats() {
    let server = TestServer::start().await;
    within_limit(async {
        let c = server.connect().await;
        // floating point output is the shortest exact representation (extra_float_digits = 1)
        assert_eq!(
            one_text(
                &c,
                "select 1e15::float8, 123456789012345::float8, 0.00001::float8, 0.0001::float8, \
                 100::float8, '-0'::float8, 1e-300::float8, 'Infinity'::float8, \
                 '1.7976931348623157e308'::float8, 0.1::real, '3.4028235e38'::real, 1.5::real"
            )
            .await,
            vec![
                s("1e+15"),
                s("123456789012345"),
                s("1e-05"),
                s("0.0001"),
                s("100"),
                s("-0"),
                s("1e-300"),
                s("Infinity"),
                s("1.7976931348623157e+308"),
                s("0.1"),
                s("3.4028235e+38"),
                s("1.5")
            ]
        );
        assert_eq!(
            one_text(
                &c,
                "select 1.50::numeric(5,2), 7::numeric(6,3), 0.000::numeric, -0.5::numeric(3,1), \
                 true, false, 'ab'::bytea, ''::bytea, '2000-01-01'::date, \
                 '2000-01-01 00:00:00'::timestamp, '2000-01-01 00:00:00.5'::timestamp, \
                 null::int, ''::text, 'x'::char(3), 7 / 2"
            )
            .await,
            vec![
                s("1.50"),
                s("7.000"),
                s("0.000"),
                s("-0.5"),
                s("t"),
                s("f"),
                s("\\x6162"),
                s("\\x"),
                s("2000-01-01"),
                s("2000-01-01 00:00:00"),
                s("2000-01-01 00:00:00.5"),
                None,
                s(""),
                s("x  "),
                s("3")
            ]
        );
        // several statements in one simple query
        let msgs = c
            .simple_query("select 1; select 'two', null::text; select 3 where false")
            .await
            .unwrap();
        assert_eq!(text_rows(&msgs), vec![vec![s("1")], vec![s("two"), None]]);
        assert_eq!(command_counts(&msgs), vec![1, 1, 0]);
        // errors
        let err = c.simple_query("select 'abc'::int").await.unwrap_err();
        assert_eq!(err.code(), Some(&SqlState::INVALID_TEXT_REPRESENTATION));
        let err = c.simple_query("select 1/0").await.unwrap_err();
        assert_eq!(err.code(), Some(&SqlState::DIVISION_BY_ZERO));
        let err = c
            .simple_query("select * from no_such_table_rs")
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some(&SqlState::UNDEFINED_TABLE));
        assert_eq!(
            one_text(&c, "select 'still usable'").await,
            vec![s("still usable")]
        );
    })
    .await;
    server.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_statement_reuse_and_transactions() {
    let server = TestServer::start().await;
    within_limit(async {
        let mut c = server.connect().await;
        let t = unique_table("rs_tx");
        c.batch_execute(&format!(
            "create table {t} (id int primary key, v bigint not null)"
        ))
        .await
        .unwrap();
        let ins = c
            .prepare(&format!("insert into {t} values ($1, $2)"))
            .await
            .unwrap();
        for i in 0..100i32 {
            assert_eq!(c.execute(&ins, &[&i, &(i as i64 * 3)]).await.unwrap(), 1);
        }
        {
            let tx = c.transaction().await.unwrap();
            tx.execute(
                &format!("update {t} set v = v + 1 where id < $1"),
                &[&10i32],
            )
            .await
            .unwrap();
            tx.rollback().await.unwrap();
        }
        {
            let tx = c.transaction().await.unwrap();
            let n = tx
                .execute(&format!("delete from {t} where id >= $1"), &[&50i32])
                .await
                .unwrap();
            assert_eq!(n, 50);
            tx.commit().await.unwrap();
        }
        let row = c
            .query_one(&format!("select count(*), sum(v) from {t}"), &[])
            .await
            .unwrap();
        assert_eq!(row.get::<_, i64>(0), 50);
        assert_eq!(
            row.get::<_, PgNumeric>(1),
            PgNumeric((3 * 49 * 50 / 2).to_string())
        );
        let err = c.execute(&ins, &[&1i32, &1i64]).await.unwrap_err();
        assert_eq!(err.code(), Some(&SqlState::UNIQUE_VIOLATION));
        c.batch_execute(&format!("drop table {t}")).await.unwrap();
    })
    .await;
    server.stop();
}

/// Named portals (tokio-postgres binds each to a portal of its own) fetched a few rows at a
/// time, interleaved with each other and with statements on the unnamed portal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn named_portals_fetch_in_parts_beside_the_unnamed_one() {
    let server = TestServer::start().await;
    within_limit(async {
        let mut c = server.connect().await;
        let t = unique_table("rs_portals");
        c.batch_execute(&format!("create table {t} (id int primary key, v text)"))
            .await
            .unwrap();
        let insert = c
            .prepare(&format!("insert into {t} values ($1, $2)"))
            .await
            .unwrap();
        for i in 0..10i32 {
            c.execute(&insert, &[&i, &format!("v{i}")]).await.unwrap();
        }
        let ids = |rows: Vec<tokio_postgres::Row>| -> Vec<i32> {
            rows.iter().map(|r| r.get::<_, i32>(0)).collect()
        };
        let tx = c.transaction().await.unwrap();
        let select = tx
            .prepare(&format!("select id from {t} where id >= $1 order by id"))
            .await
            .unwrap();
        let from_0 = tx.bind(&select, &[&0i32]).await.unwrap();
        let from_5 = tx.bind(&select, &[&5i32]).await.unwrap();
        assert_eq!(ids(tx.query_portal(&from_0, 3).await.unwrap()), [0, 1, 2]);
        assert_eq!(ids(tx.query_portal(&from_5, 2).await.unwrap()), [5, 6]);
        // Statements on the unnamed portal leave the named ones where they were.
        let count: i64 = tx
            .query_one(&format!("select count(*) from {t}"), &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(count, 10);
        assert_eq!(ids(tx.query(&select, &[&8i32]).await.unwrap()), [8, 9]);
        assert_eq!(
            ids(tx.query_portal(&from_0, 4).await.unwrap()),
            [3, 4, 5, 6]
        );
        assert_eq!(ids(tx.query_portal(&from_5, 10).await.unwrap()), [7, 8, 9]);
        assert_eq!(ids(tx.query_portal(&from_0, 0).await.unwrap()), [7, 8, 9]);
        tx.commit().await.unwrap();
    })
    .await;
    server.stop();
}
