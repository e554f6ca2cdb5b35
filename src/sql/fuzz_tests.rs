//! Property-based fuzzing of the SQL front end (parse, bind, plan, execute): seeded
//! mutations of valid statements (words dropped, repeated, swapped and replaced by hostile
//! tokens) must give a result or a clean error, never a panic. The run is bounded by a
//! count of inputs, so it takes the same work on any machine; a failing input is printed
//! whole, to be added to `fuzz_regressions.sql`, which runs first on every test run. (The
//! message decoder's fuzzing is in `wire/frontend_tests.rs`.)

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use rand::{Rng, SeedableRng};

use super::{Outcome, Session};
use crate::engine::Engine;
use crate::settings::Settings;

/// Statements the mutations start from: each kind of statement the server runs.
const SEEDS: &[&str] = &[
    "create table f (id int primary key, v text, n numeric(6,2), d date, b boolean)",
    "insert into f values (1, 'a', 1.5, '2020-01-02', true), (2, null, -3, null, false)",
    "insert into f (id, v) values (3, 'x') on conflict (id) do update set v = excluded.v",
    "insert into f (id) values (4) on conflict do nothing returning id, v",
    "update f set v = v || 'y', n = n + 1 where id between 1 and 3 returning *",
    "update f set n = n * 2 where id = 2",
    "delete from f where id >= 4 and v is null returning id",
    "select id, v, n from f where id > 1 and id <= 3 order by id desc limit 2 offset 1",
    "select count(*), sum(n), min(v), max(d), avg(id) from f group by b having count(*) > 0",
    "select coalesce(v, 'none'), case when n > 0 then 'p' else 'n' end, n::int, length(v) from f",
    "select * from f where v like 'a%' or v in ('x', 'y') or d < now() for update nowait",
    "select id from f where id = $1 and v = 'q' for share skip locked",
    "select 1 + 2 * 3 - 4 / 2, -5 % 3, 2 ^ 10, abs(-1.5), round(2.567, 2), 'a' || 1",
    "select extract(year from date '2020-03-04'), now() - interval '1 day', '12:00'::time",
    "select distinct b from f order by b nulls first",
    "begin isolation level serializable read only",
    "savepoint s1",
    "rollback to savepoint s1",
    "release savepoint s1",
    "commit and chain",
    "rollback",
    "set lock_timeout = '1s'",
    "set transaction isolation level repeatable read",
    "show transaction_isolation",
    "truncate f",
    "alter table f add primary key (id)",
    "drop table if exists f, g",
    "select * from pg_stat_activity",
    "checkpoint",
    "deallocate all",
];

const TOKENS: &[&str] = &[
    "select",
    "from",
    "where",
    "(",
    ")",
    ",",
    "'",
    "''",
    "$1",
    "$0",
    "$99999999999",
    "::",
    "int",
    "text",
    "numeric(1000,999)",
    "null",
    "not",
    "and",
    "or",
    "between",
    "in",
    "is",
    "-",
    "+",
    "*",
    "/",
    "%",
    "^",
    "||",
    "=",
    "<",
    ">=",
    "9999999999999999999999",
    "1e400",
    "-2147483648",
    "'2020-13-45'",
    "'\\x'",
    "e'\\u0000'",
    "interval",
    "date",
    "for",
    "update",
    "limit",
    "-1",
    "offset",
    "order",
    "by",
    "group",
    "having",
    "count(*)",
    "sum",
    "case",
    "when",
    "then",
    "else",
    "end",
    "on",
    "conflict",
    "do",
    "nothing",
    "returning",
    "*",
    ";",
    "values",
    "into",
    "set",
    "table",
    "f",
    "id",
    "v",
    "n",
    "d",
    "b",
    "\u{1F600}",
];

fn mutate(rng: &mut impl Rng, sql: &str) -> String {
    let mut words: Vec<String> = sql.split(' ').map(str::to_string).collect();
    for _ in 0..rng.gen_range(1..4) {
        let i = rng.gen_range(0..words.len().max(1));
        match rng.gen_range(0..5) {
            0 if words.len() > 1 => {
                words.remove(i.min(words.len() - 1));
            }
            1 => {
                let w = words.get(i).cloned().unwrap_or_default();
                words.insert(i.min(words.len()), w);
            }
            2 => {
                let j = rng.gen_range(0..words.len().max(1));
                if i < words.len() && j < words.len() {
                    words.swap(i, j);
                }
            }
            3 => {
                let t = TOKENS[rng.gen_range(0..TOKENS.len())].to_string();
                words.insert(i.min(words.len()), t);
            }
            _ => {
                if i < words.len() {
                    words[i] = TOKENS[rng.gen_range(0..TOKENS.len())].to_string();
                }
            }
        }
    }
    words.join(" ")
}

/// Run `sql` as a simple query and end it as the wire layer does.
fn run(session: &mut Session, sql: &str) -> std::thread::Result<()> {
    catch_unwind(AssertUnwindSafe(|| {
        if let Ok(stmts) = session.prepare_simple(sql) {
            for stmt in stmts {
                // The scripts' sessions block at locks, but a fuzzed session is alone.
                if let Ok(Outcome::CopyIn(_)) | Err(_) = session.execute(&stmt, &[]) {
                    break;
                }
            }
        }
        let _ = session.sync();
    }))
}

fn fresh_session() -> Session {
    let engine = Arc::new(Engine::new(Arc::new(Settings::default())));
    let mut session = Session::new(engine);
    for seed in &SEEDS[..2] {
        let _ = run(&mut session, seed);
    }
    session
}

#[test]
fn the_sql_front_end_never_panics() {
    let mut failures = Vec::new();
    // Inputs that once failed, run first.
    let regressions = include_str!("fuzz_regressions.sql");
    let mut session = fresh_session();
    for sql in regressions
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("--"))
    {
        if run(&mut session, sql).is_err() {
            failures.push(sql.to_string());
            session = fresh_session();
        }
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(2026);
    for i in 0..20_000 {
        if i % 500 == 0 {
            session = fresh_session();
        }
        let seed = SEEDS[rng.gen_range(0..SEEDS.len())];
        let sql = mutate(&mut rng, seed);
        if run(&mut session, &sql).is_err() {
            failures.push(sql);
            session = fresh_session();
        }
    }
    assert!(
        failures.is_empty(),
        "inputs that panicked:\n{}",
        failures.join("\n")
    );
}
