"""Workload definitions: the pgbench script each one runs and the data it needs."""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from .servers import Server, clean_env

WORKLOAD_DIR = Path(__file__).resolve().parent.parent / "workloads"
UPDATE_PK_SCRIPT_ROWS = 1_000_000  # the id range hard-coded in workloads/update_pk.sql


@dataclass
class Workload:
    name: str
    script: str | None          # file in bench/workloads/, None = pgbench's built-in TPC-B
    description: str
    tables_grow: bool = False    # the run inserts rows
    pgbench_init: bool = False   # needs `pgbench -i -s <scale>`
    ddl: list[str] = field(default_factory=list)
    # run after `pgbench -i`; "{scale}" is replaced by the scale
    after_init: list[str] = field(default_factory=list)


WORKLOADS: dict[str, Workload] = {w.name: w for w in [
    Workload("insert_serial", "insert_serial.sql", "single-row INSERT into a table with a serial primary key",
             tables_grow=True,
             ddl=["create table test(id serial primary key, info text, crt_time timestamp)"]),
    Workload("insert_nopk", "insert_nopk.sql", "single-row INSERT into a table without indexes",
             tables_grow=True, ddl=["create table test_nopk(id int, info text)"]),
    Workload("upsert", "upsert.sql",
             "INSERT ... ON CONFLICT DO UPDATE with random keys in 1..100M (table starts empty)",
             tables_grow=True,
             ddl=["create table test_ups(id int primary key, info text, crt_time timestamp)"]),
    Workload("update_pk", "update_pk.sql", "UPDATE of one random row by primary key (table of N rows)",
             ddl=["create table tbl(id int primary key, info text, crt_time timestamp)"]),
    Workload("select_pk", "select_pk.sql", "SELECT of one random pgbench_accounts row by primary key",
             pgbench_init=True),
    Workload("join_pk", "join_pk.sql",
             "SELECT joining one random pgbench_accounts row to its branch and a teller on keys",
             pgbench_init=True),
    Workload("join_history", "join_history.sql",
             "join_pk's SELECT, then one random account joined to its rows in pgbench_history "
             "(one per account) through a secondary index on pgbench_history.aid",
             pgbench_init=True,
             after_init=["insert into pgbench_history (tid, bid, aid, delta, mtime) select (g % (10 * {scale})) + 1, (g % {scale}) + 1, g, g % 1000, now() from generate_series(1, 100000 * {scale}) g",
                         "create index pgbench_history_aid on pgbench_history (aid)"]),
    Workload("join_order", "join_order.sql",
             "SELECT joining pgbench_accounts, pgbench_tellers and pgbench_branches, written with "
             "the accounts first though only the teller's condition narrows the rows: the planner "
             "must read the teller first and the others by key (after ANALYZE)",
             pgbench_init=True, after_init=["analyze"]),
    Workload("update_balance", "update_balance.sql", "UPDATE of one random pgbench_accounts row by primary key",
             pgbench_init=True),
    Workload("tpcb", None, "pgbench's built-in TPC-B-like transaction (5 statements)", pgbench_init=True),
    Workload("tpcb_fk", None,
             "tpcb with the foreign keys `pgbench -i --foreign-keys` adds: each history insert "
             "checks its account, teller and branch",
             pgbench_init=True,
             after_init=[f"alter table pgbench_{child} add constraint pgbench_{child}_{col}_fkey "
                         f"foreign key ({col}) references pgbench_{parent}"
                         for child, col, parent in [("tellers", "bid", "branches"),
                                                    ("accounts", "bid", "branches"),
                                                    ("history", "bid", "branches"),
                                                    ("history", "tid", "tellers"),
                                                    ("history", "aid", "accounts")]]),
]}

STANDARD_SET = ["insert_serial", "upsert", "update_pk", "tpcb"]


def prepare_script(w: Workload, script_dir: Path, update_pk_rows: int) -> Path | None:
    """Copy the workload's script into the results (the exact file that is run); for
    update_pk, make the random id range match the number of rows loaded."""
    if w.script is None:
        return None
    text = (WORKLOAD_DIR / w.script).read_text()
    if w.name == "update_pk" and update_pk_rows != UPDATE_PK_SCRIPT_ROWS:
        pattern = re.compile(r"random\(\s*1\s*,\s*%d\s*\)" % UPDATE_PK_SCRIPT_ROWS)
        if not pattern.search(text):
            raise RuntimeError(f"{w.script} no longer contains random(1,{UPDATE_PK_SCRIPT_ROWS}); "
                               "cannot adapt it to --update-pk-rows")
        text = pattern.sub(f"random(1,{update_pk_rows})", text)
    script_dir.mkdir(parents=True, exist_ok=True)
    out = script_dir / w.script
    out.write_text(text)
    return out


def conn_args(server: Server) -> list[str]:
    return ["-h", server.client_host(), "-p", str(server.port), "-U", "postgres"]


def setup(w: Workload, server: Server, pg_bin: Path, scale: int, update_pk_rows: int,
          log_path: Path) -> list[dict]:
    """Create and load what the workload needs. Returns the steps run (for the report)."""
    steps: list[dict] = []
    with server.connect() as c:
        for sql in w.ddl:
            t0 = time.monotonic()
            c.query(sql)
            steps.append({"sql": sql, "seconds": round(time.monotonic() - t0, 3)})
    if w.pgbench_init:
        cmd = server.client_command([str(pg_bin / "pgbench"), "-i", "-s", str(scale)] + conn_args(server)
                                    + ["postgres"])
        t0 = time.monotonic()
        with open(log_path, "ab") as lf:
            lf.write(("$ " + " ".join(cmd) + "\n").encode())
            lf.flush()
            r = subprocess.run(cmd, stdout=lf, stderr=subprocess.STDOUT, env=clean_env(), timeout=7200)
        steps.append({"command": cmd, "seconds": round(time.monotonic() - t0, 3), "exit_code": r.returncode})
        if r.returncode != 0:
            raise RuntimeError(f"pgbench -i failed (exit {r.returncode}); see {log_path}")
        with server.connect() as c:
            got = int(c.query("select count(*) from pgbench_accounts").scalar())
        if got != 100_000 * scale:
            raise RuntimeError(f"pgbench_accounts has {got} rows after pgbench -i, expected {100_000 * scale}")
        with server.connect() as c:
            for template in w.after_init:
                sql = template.replace("{scale}", str(scale))
                t0 = time.monotonic()
                c.query(sql)
                steps.append({"sql": sql, "seconds": round(time.monotonic() - t0, 3)})
    if w.name == "update_pk":
        steps.append(load_tbl(server, pg_bin, update_pk_rows, log_path))
    return steps


def _id_lines(rows: int, chunk: int = 50_000):
    for lo in range(1, rows + 1, chunk):
        hi = min(lo + chunk, rows + 1)
        yield ("\n".join(map(str, range(lo, hi))) + "\n").encode()


def load_tbl(server: Server, pg_bin: Path, rows: int, log_path: Path) -> dict:
    """COPY ids 1..rows into tbl, streamed from a generator through psql."""
    sql = "copy tbl (id) from stdin"
    cmd = server.client_command([str(pg_bin / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1"] + conn_args(server)
                                + ["-d", "postgres", "-c", sql])
    t0 = time.monotonic()
    with open(log_path, "ab") as lf:
        lf.write(("$ <ids 1.." + str(rows) + "> | " + " ".join(cmd) + "\n").encode())
        lf.flush()
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=lf, stderr=subprocess.STDOUT, env=clean_env())
        try:
            try:
                for chunk in _id_lines(rows):
                    p.stdin.write(chunk)
                p.stdin.close()
            except BrokenPipeError:
                pass  # psql gave up; its exit code and log say why
            rc = p.wait(timeout=7200)
        except BaseException:
            p.kill()
            p.wait()
            raise
    seconds = time.monotonic() - t0
    if rc != 0:
        raise RuntimeError(f"COPY into tbl failed (psql exit {rc}); see {log_path}")
    with server.connect() as c:
        got = c.query("select count(*), min(id), max(id) from tbl").rows[0]
    if [int(x) for x in got] != [rows, 1, rows]:
        raise RuntimeError(f"tbl after COPY: count/min/max = {got}, expected {rows}/1/{rows}")
    return {"command": cmd, "stdin": f"ids 1..{rows}, one per line", "sql": sql,
            "seconds": round(seconds, 3), "exit_code": rc}
