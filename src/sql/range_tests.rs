//! Range predicates on a table's key against a model: any bounds, open or closed, empty
//! or reversed, read inside a transaction with its own inserts, updates and deletes.

use std::collections::BTreeMap;
use std::sync::Arc;

use rand::{Rng, SeedableRng};

use super::{Outcome, Session};
use crate::engine::Engine;
use crate::settings::Settings;
use crate::types::Value;

fn run(session: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    let stmts = session.prepare_simple(sql).expect("parses");
    let mut rows = Vec::new();
    for stmt in stmts {
        match session.execute(&stmt, &[]) {
            Ok(Outcome::Rows { rows: r, .. }) => rows = r,
            Ok(_) => {}
            Err(e) => panic!("{sql}: {} {}", e.code, e.message),
        }
    }
    session.sync().expect("sync");
    rows
}

/// One side of a range: `id > k`, `id >= k`, or none.
fn side(rng: &mut impl Rng, op_open: &str, op_closed: &str) -> Option<(String, i64)> {
    let k = rng.gen_range(-2..24);
    match rng.gen_range(0..3) {
        0 => None,
        1 => Some((format!("id {op_open} {k}"), k)),
        _ => Some((format!("id {op_closed} {k}"), k)),
    }
}

#[test]
fn key_ranges_match_a_model() {
    let engine = Arc::new(Engine::new(Arc::new(Settings::default())));
    let mut session = Session::new(engine);
    let mut rng = rand::rngs::StdRng::seed_from_u64(31);
    run(
        &mut session,
        "create table r (id int primary key, v int not null)",
    );
    for round in 0..40 {
        // Committed rows.
        run(&mut session, "delete from r");
        let mut model: BTreeMap<i64, i64> = BTreeMap::new();
        for _ in 0..rng.gen_range(0..15) {
            let k = rng.gen_range(0..20);
            if model.insert(k, round).is_none() {
                run(
                    &mut session,
                    &format!("insert into r values ({k}, {round})"),
                );
            } else {
                model.insert(k, round);
            }
        }
        // The transaction's own writes.
        run(&mut session, "begin");
        for _ in 0..rng.gen_range(0..8) {
            let k = rng.gen_range(0..20);
            match rng.gen_range(0..3) {
                0 if !model.contains_key(&k) => {
                    run(&mut session, &format!("insert into r values ({k}, -1)"));
                    model.insert(k, -1);
                }
                1 => {
                    run(&mut session, &format!("delete from r where id = {k}"));
                    model.remove(&k);
                }
                _ => {
                    run(
                        &mut session,
                        &format!("update r set v = v + 1 where id = {k}"),
                    );
                    if let Some(v) = model.get_mut(&k) {
                        *v += 1;
                    }
                }
            }
        }
        for _ in 0..25 {
            let (sql_where, want): (String, Vec<i64>) = if rng.gen_bool(0.3) {
                let (a, b) = (rng.gen_range(-2..24), rng.gen_range(-2..24));
                let want = model
                    .keys()
                    .copied()
                    .filter(|&k| a <= k && k <= b)
                    .collect();
                (format!("id between {a} and {b}"), want)
            } else {
                let low = side(&mut rng, ">", ">=");
                let high = side(&mut rng, "<", "<=");
                let want = model
                    .keys()
                    .copied()
                    .filter(|&k| match &low {
                        Some((s, a)) if s.contains(">=") => k >= *a,
                        Some((_, a)) => k > *a,
                        None => true,
                    })
                    .filter(|&k| match &high {
                        Some((s, b)) if s.contains("<=") => k <= *b,
                        Some((_, b)) => k < *b,
                        None => true,
                    })
                    .collect();
                let conds: Vec<String> =
                    [low, high].into_iter().flatten().map(|(s, _)| s).collect();
                let cond = if conds.is_empty() {
                    "true".to_string()
                } else {
                    conds.join(" and ")
                };
                (cond, want)
            };
            let rows = run(
                &mut session,
                &format!("select id from r where {sql_where} order by id"),
            );
            let got: Vec<i64> = rows
                .iter()
                .map(|r| match r[0] {
                    Value::Int4(v) => i64::from(v),
                    ref other => panic!("not an int: {other:?}"),
                })
                .collect();
            assert_eq!(got, want, "where {sql_where}");
        }
        if rng.gen_bool(0.5) {
            run(&mut session, "commit");
        } else {
            run(&mut session, "rollback");
            // Back to the committed rows.
            model.clear();
            for r in run(&mut session, "select id, v from r") {
                if let (Value::Int4(k), Value::Int4(v)) = (&r[0], &r[1]) {
                    model.insert(i64::from(*k), i64::from(*v));
                }
            }
        }
    }
}
