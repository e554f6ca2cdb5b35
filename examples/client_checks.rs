//! The client matrix's tokio-postgres program (`tests/python/test_client_matrix.py`): the
//! same checks as the other clients', each printed as one JSON line
//! `{"check", "ok", "detail"}`. Connection from PGHOST, PGPORT, PGUSER and PGDATABASE;
//! its table is prefixed by CLIENT_PREFIX.

use std::env;

use bytes::Bytes;
use futures_util::{pin_mut, SinkExt, TryStreamExt};
use tokio_postgres::{Client, NoTls};

type Check = Result<(), String>;

fn eq<T: PartialEq + std::fmt::Debug>(got: T, want: T, what: &str) -> Check {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, want {want:?}"))
    }
}

fn failed(e: impl std::fmt::Display) -> String {
    e.to_string()
}

async fn connect(c: &Client, _: &str) -> Check {
    let one: i32 = c.query_one("select 1", &[]).await.map_err(failed)?.get(0);
    eq(one, 1, "select 1")
}

async fn types(c: &Client, _: &str) -> Check {
    let ts = chrono::DateTime::parse_from_rfc3339("2024-01-02T03:04:05.123Z")
        .map_err(failed)?
        .with_timezone(&chrono::Utc);
    let day = chrono::NaiveDate::from_ymd_opt(2024, 2, 29).ok_or("date")?;
    let row = c
        .query_one(
            "select $1::int4, $2::int8, $3::text, $4::bool, $5::timestamptz, $6::bytea, $7::float8, $8::date, $9::text",
            &[&42i32, &9007199254740993i64, &"héllo", &true, &ts, &vec![0u8, 1, 255], &1.5f64, &day, &None::<String>],
        )
        .await
        .map_err(failed)?;
    eq(row.get::<_, i32>(0), 42, "int4")?;
    eq(row.get::<_, i64>(1), 9007199254740993, "int8")?;
    eq(row.get::<_, String>(2), "héllo".to_string(), "text")?;
    eq(row.get::<_, bool>(3), true, "bool")?;
    eq(
        row.get::<_, chrono::DateTime<chrono::Utc>>(4),
        ts,
        "timestamptz",
    )?;
    eq(row.get::<_, Vec<u8>>(5), vec![0, 1, 255], "bytea")?;
    eq(row.get::<_, f64>(6), 1.5, "float8")?;
    eq(row.get::<_, chrono::NaiveDate>(7), day, "date")?;
    eq(row.get::<_, Option<String>>(8), None, "null")
}

async fn prepared(c: &Client, t: &str) -> Check {
    let ins = c
        .prepare(&format!("insert into {t} (id, name) values ($1, $2)"))
        .await
        .map_err(failed)?;
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        c.execute(&ins, &[&(i as i32 + 1), name])
            .await
            .map_err(failed)?;
    }
    let get = c
        .prepare(&format!("select name from {t} where id = $1"))
        .await
        .map_err(failed)?;
    let name: String = c.query_one(&get, &[&2i32]).await.map_err(failed)?.get(0);
    eq(name, "b".to_string(), "prepared select")
}

async fn batch(c: &Client, t: &str) -> Check {
    let ins = c
        .prepare(&format!("insert into {t} (id, name) values ($1, $2)"))
        .await
        .map_err(failed)?;
    // Pipelined: every insert is sent before the first reply is read.
    let ins = &ins;
    let pending = (10..110).map(|id: i32| async move {
        let name = format!("n{id}");
        c.execute(ins, &[&id, &name]).await
    });
    futures_util::future::try_join_all(pending)
        .await
        .map_err(failed)?;
    let n: i64 = c
        .query_one(&format!("select count(*) from {t} where id >= 10"), &[])
        .await
        .map_err(failed)?
        .get(0);
    eq(n, 100, "count")
}

async fn transaction_savepoint(c: &mut Client, t: &str) -> Check {
    let mut tx = c.transaction().await.map_err(failed)?;
    tx.execute(
        &format!("insert into {t} (id, name) values (200, 'kept')"),
        &[],
    )
    .await
    .map_err(failed)?;
    {
        let sp = tx.savepoint("undo").await.map_err(failed)?;
        sp.execute(
            &format!("insert into {t} (id, name) values (201, 'undone')"),
            &[],
        )
        .await
        .map_err(failed)?;
        sp.rollback().await.map_err(failed)?;
    }
    tx.commit().await.map_err(failed)?;
    let ids: Vec<i32> = c
        .query(
            &format!("select id from {t} where id >= 200 order by id"),
            &[],
        )
        .await
        .map_err(failed)?
        .iter()
        .map(|r| r.get(0))
        .collect();
    eq(ids, vec![200], "rows")
}

async fn error_fields(c: &Client, t: &str) -> Check {
    let err = match c
        .execute(
            &format!("insert into {t} (id, name) values (1, 'dup')"),
            &[],
        )
        .await
    {
        Ok(_) => return Err("no error".into()),
        Err(e) => e,
    };
    let db = err.as_db_error().ok_or("not a server error")?;
    eq(
        (db.code().code(), db.constraint(), db.table(), db.schema()),
        (
            "23505",
            Some(format!("{t}_pkey").as_str()),
            Some(t),
            Some("public"),
        ),
        "fields",
    )
}

async fn metadata(c: &Client, t: &str) -> Check {
    let rows = c
        .query(
            "select column_name::text, data_type::text from information_schema.columns where table_name = $1 order by ordinal_position",
            &[&t],
        )
        .await
        .map_err(failed)?;
    let got: Vec<(String, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    let want: Vec<(String, String)> = [("id", "integer"), ("name", "text"), ("tags", "ARRAY")]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    eq(got, want, "columns")
}

async fn arrays(c: &Client, t: &str) -> Check {
    let tags = vec![Some("x".to_string()), Some("y z".to_string()), None];
    c.execute(&format!("update {t} set tags = $1 where id = 1"), &[&tags])
        .await
        .map_err(failed)?;
    let got: Vec<Option<String>> = c
        .query_one(&format!("select tags from {t} where id = 1"), &[])
        .await
        .map_err(failed)?
        .get(0);
    eq(got, tags, "tags")
}

async fn copy_in(c: &Client, t: &str) -> Check {
    let sink = c
        .copy_in(&format!("copy {t} (id, name, tags) from stdin"))
        .await
        .map_err(failed)?;
    pin_mut!(sink);
    sink.send(Bytes::from_static(b"1000\tcopied\t{a}\n1001\t\\N\t\\N\n"))
        .await
        .map_err(failed)?;
    let n = sink.finish().await.map_err(failed)?;
    eq(n, 2, "rows copied")?;
    let name: String = c
        .query_one(&format!("select name from {t} where id = 1000"), &[])
        .await
        .map_err(failed)?
        .get(0);
    eq(name, "copied".to_string(), "copied row")
}

async fn copy_out(c: &Client, t: &str) -> Check {
    let stream = c
        .copy_out(&format!(
            "copy (select id, name from {t} where id in (1, 2) order by id) to stdout with (format csv)"
        ))
        .await
        .map_err(failed)?;
    let chunks: Vec<Bytes> = stream.try_collect().await.map_err(failed)?;
    eq(chunks.concat(), b"1,a\n2,b\n".to_vec(), "csv")
}

fn report(check: &str, result: Check) {
    let line = match result {
        Ok(()) => serde_json::json!({"check": check, "ok": true}),
        Err(detail) => serde_json::json!({"check": check, "ok": false, "detail": detail}),
    };
    println!("{line}");
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let var = |k: &str, d: &str| env::var(k).unwrap_or_else(|_| d.to_string());
    let conninfo = format!(
        "host={} port={} user={} dbname={}",
        var("PGHOST", "127.0.0.1"),
        var("PGPORT", "5432"),
        var("PGUSER", "postgres"),
        var("PGDATABASE", "postgres")
    );
    let (mut c, connection) = match tokio_postgres::connect(&conninfo, NoTls).await {
        Ok(pair) => pair,
        Err(e) => return report("connect", Err(e.to_string())),
    };
    tokio::spawn(connection);
    let t = format!("{}_items", var("CLIENT_PREFIX", "cm_tokio_postgres"));
    let setup = async {
        c.batch_execute(&format!(
            "drop table if exists {t}; create table {t} (id int primary key, name text, tags text[])"
        ))
        .await
    };
    if let Err(e) = setup.await {
        return report("connect", Err(e.to_string()));
    }
    report("connect", connect(&c, &t).await);
    report("types", types(&c, &t).await);
    report("prepared", prepared(&c, &t).await);
    report("batch", batch(&c, &t).await);
    report(
        "transaction_savepoint",
        transaction_savepoint(&mut c, &t).await,
    );
    report("error_fields", error_fields(&c, &t).await);
    report("metadata", metadata(&c, &t).await);
    report("arrays", arrays(&c, &t).await);
    report("copy_in", copy_in(&c, &t).await);
    report("copy_out", copy_out(&c, &t).await);
    let _ = c.batch_execute(&format!("drop table if exists {t}")).await;
}
