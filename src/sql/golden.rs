//! Golden-script tests: each `testscripts/NAME.sql` is run statement by statement through a
//! fresh engine and session; the transcript (results, command tags, errors with SQLSTATE)
//! must equal `testscripts/NAME.golden`. Run with `STEADYDB_UPDATE_GOLDEN=1` to rewrite the
//! golden files after checking the new transcript by eye.
//!
//! A line `-- session N` switches to session N (sessions are created on first use), so
//! scripts can interleave transactions.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::{Outcome, Session};
use crate::engine::Engine;
use crate::settings::Settings;
use crate::types::{encode_text, Value};

fn render(v: &Value) -> String {
    if v.is_null() {
        return "NULL".into();
    }
    let mut out = Vec::new();
    encode_text(v, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn run_script(text: &str) -> String {
    let engine = Arc::new(Engine::new(Arc::new(Settings::default())));
    let mut sessions: BTreeMap<u32, Session> = BTreeMap::new();
    let mut current = 1;
    let mut out = String::new();
    let mut pending = String::new();
    for line in text.lines() {
        if let Some(n) = line.trim().strip_prefix("-- session ") {
            current = n.trim().parse().expect("session number");
            out.push_str(&format!("-- session {current}\n"));
            continue;
        }
        if line.trim().is_empty() || (line.trim_start().starts_with("--") && pending.is_empty()) {
            continue;
        }
        pending.push_str(line);
        pending.push('\n');
        if !line.trim_end().ends_with(';') {
            continue;
        }
        let sql = std::mem::take(&mut pending);
        out.push_str(&format!("> {}\n", sql.trim()));
        let session = sessions
            .entry(current)
            .or_insert_with(|| Session::new(engine.clone()));
        match session.prepare_simple(&sql) {
            Err(e) => out.push_str(&format!("ERROR {}: {}\n", e.code, e.message)),
            Ok(stmts) => {
                for stmt in stmts {
                    match session.execute(&stmt, &[]) {
                        Ok(Outcome::Rows { fields, rows, tag }) => {
                            let tag = tag.complete(rows.len());
                            let names: Vec<String> = fields
                                .iter()
                                .map(|f| format!("{}:{}", f.name, f.data_type.name()))
                                .collect();
                            out.push_str(&format!("  {}\n", names.join(" | ")));
                            for r in rows {
                                out.push_str(&format!(
                                    "  {}\n",
                                    r.iter().map(render).collect::<Vec<_>>().join(" | ")
                                ));
                            }
                            out.push_str(&format!("{tag}\n"));
                        }
                        Ok(Outcome::Command { tag }) => out.push_str(&format!("{tag}\n")),
                        Ok(Outcome::Empty) => out.push_str("EMPTY\n"),
                        Ok(Outcome::CopyIn(_)) => out.push_str("COPY IN (not driven by scripts)\n"),
                        Ok(Outcome::WaitForLock) => {
                            out.push_str("LOCK WAIT (not driven by scripts)\n")
                        }
                        Err(e) => {
                            out.push_str(&format!("ERROR {}: {}\n", e.code, e.message));
                            if let Some(d) = e.detail {
                                out.push_str(&format!("DETAIL: {d}\n"));
                            }
                            break;
                        }
                    }
                }
                if let Err(e) = session.sync() {
                    out.push_str(&format!("ERROR {}: {}\n", e.code, e.message));
                }
            }
        }
    }
    out
}

#[test]
fn golden_scripts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sql/testscripts");
    let update = std::env::var("STEADYDB_UPDATE_GOLDEN").is_ok();
    let mut failures = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .expect("testscripts dir")
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    let mut ran = 0;
    for path in entries {
        if path.extension().and_then(|e| e.to_str()) != Some("sql") {
            continue;
        }
        ran += 1;
        let got = run_script(&std::fs::read_to_string(&path).expect("read script"));
        let golden = path.with_extension("golden");
        if update {
            std::fs::write(&golden, &got).expect("write golden");
            continue;
        }
        let want = std::fs::read_to_string(&golden).unwrap_or_default();
        if got != want {
            failures.push(format!(
                "{}:\n--- want\n{want}\n--- got\n{got}",
                path.display()
            ));
        }
    }
    assert!(ran > 0, "no golden scripts found");
    assert!(
        failures.is_empty(),
        "golden mismatches:\n{}",
        failures.join("\n")
    );
}
