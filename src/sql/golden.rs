//! Golden-script tests: each `NAME.sql` in `sql/testscripts` (statements) and
//! `txn/testscripts` (interleaved transactions) is run statement by statement through a
//! fresh engine; the transcript (results, command tags, errors with SQLSTATE) must equal
//! `NAME.golden` beside it. Run with `STEADYDB_UPDATE_GOLDEN=1` to rewrite the golden
//! files after checking the new transcript by eye.
//!
//! A line `-- session N` switches to session N (sessions are created on first use), so
//! scripts interleave transactions. A statement that meets a row lock held by another
//! session prints `(waiting)`, and its session is parked: the wait is a future polled on
//! this one thread after every later statement, so which statement ends a wait is
//! deterministic. When it is granted (or fails, with a deadlock say) the transcript shows
//! `-- session N resumes` and the rest of that session's statement. A statement sent to a
//! parked session is an error of the script. Scripts must not make a statement wait after
//! it has changed rows, or wait at a table's gate: those waits block the thread.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use super::{Outcome, Prepared, Session};
use crate::engine::Engine;
use crate::error::Result;
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

type LockWait = Pin<Box<dyn Future<Output = (Session, Result<()>)>>>;

/// A session waiting for a row lock, and the statements of its message still to run
/// (the first of them the one that waits).
struct Parked {
    wait: LockWait,
    stmts: Vec<Arc<Prepared>>,
}

struct Script {
    rt: tokio::runtime::Runtime,
    engine: Arc<Engine>,
    sessions: BTreeMap<u32, Session>,
    parked: BTreeMap<u32, Parked>,
    out: String,
}

impl Script {
    fn print_outcome(&mut self, r: Result<Outcome>) -> bool {
        let out = &mut self.out;
        match r {
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
            Ok(Outcome::CopyOut(_)) => out.push_str("COPY OUT (not driven by scripts)\n"),
            Ok(Outcome::RowStream { .. }) => out.push_str("ROW STREAM (scripts do not stream)\n"),
            Ok(Outcome::WaitForLock) => out.push_str("(waiting)\n"),
            Err(e) => {
                out.push_str(&format!("ERROR {}: {}\n", e.code, e.message));
                if let Some(d) = e.detail {
                    out.push_str(&format!("DETAIL: {d}\n"));
                }
                return false;
            }
        }
        true
    }

    /// Run `stmts` in session `n` until one waits for a lock (the session is parked) or
    /// all have run (the message ends: its implicit transaction commits).
    fn run(&mut self, n: u32, mut session: Session, stmts: Vec<Arc<Prepared>>) {
        for (i, stmt) in stmts.iter().enumerate() {
            let r = session.execute(stmt, &[]);
            let _ = self.rt.block_on(session.finish_commit());
            for warning in session.take_notices() {
                self.out
                    .push_str(&format!("WARNING {}: {}\n", warning.code, warning.message));
            }
            let waits = matches!(r, Ok(Outcome::WaitForLock));
            let ok = self.print_outcome(r);
            if waits {
                let rest = stmts[i..].to_vec();
                let wait: LockWait = Box::pin(async move {
                    let r = session.wait_for_lock().await;
                    (session, r)
                });
                self.parked.insert(n, Parked { wait, stmts: rest });
                return;
            }
            if !ok {
                break;
            }
        }
        self.sync(n, session);
    }

    fn sync(&mut self, n: u32, mut session: Session) {
        let r = session.sync();
        let _ = self.rt.block_on(session.finish_commit());
        if let Err(e) = r {
            self.out
                .push_str(&format!("ERROR {}: {}\n", e.code, e.message));
        }
        self.sessions.insert(n, session);
    }

    /// Poll every parked session until none can go on.
    fn progress(&mut self) {
        loop {
            let mut woke = None;
            for (n, parked) in self.parked.iter_mut() {
                let polled = self.rt.block_on(std::future::poll_fn(|cx| {
                    Poll::Ready(parked.wait.as_mut().poll(cx))
                }));
                if let Poll::Ready(done) = polled {
                    woke = Some((*n, done));
                    break;
                }
            }
            let Some((n, (session, granted))) = woke else {
                return;
            };
            let Some(parked) = self.parked.remove(&n) else {
                return;
            };
            self.out.push_str(&format!("-- session {n} resumes\n"));
            match granted {
                Ok(()) => self.run(n, session, parked.stmts),
                Err(e) => {
                    self.print_outcome(Err(e));
                    self.sync(n, session);
                }
            }
        }
    }

    fn statement(&mut self, n: u32, sql: &str) {
        if self.parked.contains_key(&n) {
            self.out
                .push_str(&format!("SCRIPT ERROR: session {n} is waiting\n"));
            return;
        }
        let mut session = self.sessions.remove(&n).unwrap_or_else(|| {
            let mut s = Session::new(self.engine.clone());
            s.defer_commits();
            s
        });
        match session.prepare_simple(sql) {
            Err(e) => {
                self.print_outcome(Err(e));
                self.sessions.insert(n, session);
            }
            Ok(stmts) => self.run(n, session, stmts),
        }
        self.progress();
    }
}

fn run_script(text: &str) -> String {
    let mut script = Script {
        rt: tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime for the script"),
        engine: Arc::new(Engine::new(Arc::new(Settings::default()))),
        sessions: BTreeMap::new(),
        parked: BTreeMap::new(),
        out: String::new(),
    };
    let mut current = 1;
    let mut pending = String::new();
    for line in text.lines() {
        if let Some(n) = line.trim().strip_prefix("-- session ") {
            current = n.trim().parse().expect("session number");
            script.out.push_str(&format!("-- session {current}\n"));
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
        script.out.push_str(&format!("> {}\n", sql.trim()));
        script.statement(current, &sql);
    }
    for n in script.parked.keys() {
        script.out.push_str(&format!(
            "SCRIPT ERROR: session {n} still waits at the end\n"
        ));
    }
    script.out
}

fn check_dir(dir: &Path, update: bool, failures: &mut Vec<String>) -> usize {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
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
    ran
}

#[test]
fn golden_scripts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let update = std::env::var("STEADYDB_UPDATE_GOLDEN").is_ok();
    let mut failures = Vec::new();
    for dir in ["sql/testscripts", "txn/testscripts"] {
        let ran = check_dir(&root.join(dir), update, &mut failures);
        assert!(ran > 0, "no golden scripts in {dir}");
    }
    assert!(
        failures.is_empty(),
        "golden mismatches:\n{}",
        failures.join("\n")
    );
}
