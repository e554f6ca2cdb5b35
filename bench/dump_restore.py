#!/usr/bin/env python3
"""pg_dump and restore round trip, side by side with PostgreSQL.

A SteadyDB database made by `pgbench -i --foreign-keys` (scale 10: 1,000,000 accounts),
with a secondary index, a view and a sequence, is dumped with PostgreSQL 15's `pg_dump`
and restored with `psql` into an empty SteadyDB and an empty PostgreSQL. Every table's
checksum (row count and the MD5 of its rows in key order) must be the same on all
three; the dump and the restores are timed, and PostgreSQL's own dump of its restored
copy is timed beside SteadyDB's.

    python3 bench/dump_restore.py [--scale 10] [--out DIR]

Writes `results.json` and `results.md` into DIR (default: a new directory under
/tmp). Exits 1 if any checksum differs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import servers  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent

SCHEMA_EXTRAS = [
    "create index pgbench_accounts_bid on pgbench_accounts (bid)",
    "create view branch_totals as select b.bid, b.bbalance, count(a.aid) as accounts"
    " from pgbench_branches b join pgbench_accounts a on a.bid = b.bid group by b.bid, b.bbalance",
    "create sequence audit_seq start 1000",
    "select nextval('audit_seq'), nextval('audit_seq')",
]

# Per relation: the query whose single row is its checksum.
CHECKSUMS = {
    "pgbench_accounts": "select count(*), md5(string_agg(aid || ',' || bid || ',' || abalance || ','"
                        " || filler, ';' order by aid)) from pgbench_accounts",
    "pgbench_branches": "select count(*), md5(string_agg(bid || ',' || bbalance, ';' order by bid))"
                        " from pgbench_branches",
    "pgbench_tellers": "select count(*), md5(string_agg(tid || ',' || bid || ',' || tbalance, ';'"
                       " order by tid)) from pgbench_tellers",
    "pgbench_history": "select count(*), md5(coalesce(string_agg(tid || ',' || bid || ',' || aid || ','"
                       " || delta, ';' order by tid, bid, aid, delta), '')) from pgbench_history",
    "branch_totals": "select count(*), md5(string_agg(bid || ',' || bbalance || ',' || accounts, ';'"
                     " order by bid)) from branch_totals",
    "audit_seq": "select last_value, is_called::text from audit_seq",
}


def psql(server, pg_bin: Path, args: list[str], timeout: float = 3600) -> str:
    cmd = [str(pg_bin / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1",
           "-p", str(server.port), "-U", "postgres", "-d", "postgres", *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"psql {args} on {server.label} failed:\n{r.stderr[-2000:]}")
    return r.stdout


def checksums(server, pg_bin: Path) -> dict[str, str]:
    return {name: psql(server, pg_bin, ["-At", "-F", " ", "-c", q]).strip() for name, q in CHECKSUMS.items()}


def timed(fn) -> tuple[object, float]:
    start = time.monotonic()
    out = fn()
    return out, round(time.monotonic() - start, 2)


def dump(server, pg_bin: Path, path: Path) -> float:
    def run():
        with open(path, "w") as f:
            subprocess.run([str(pg_bin / "pg_dump"), "-h", "127.0.0.1", "-p", str(server.port),
                            "-U", "postgres", "postgres"], stdout=f, check=True, timeout=3600)
    return timed(run)[1]


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=int, default=10, help="pgbench scale (100,000 accounts each)")
    p.add_argument("--out", help="directory for results.json and results.md")
    p.add_argument("--pg-bin-dir", default=str(servers.PG_BIN_DEFAULT))
    p.add_argument("--steadydb-bin", help="the SteadyDB binary (default: target/release/steadydb)")
    a = p.parse_args(argv)
    pg_bin = Path(a.pg_bin_dir)
    servers.ensure_postgres_installed(pg_bin)
    servers.install_signal_handlers()
    root = servers.make_tempdir("sbdump-", None)
    root.chmod(0o711)
    out = Path(a.out) if a.out else servers.make_tempdir("sbdump-out-", None)
    out.mkdir(parents=True, exist_ok=True)
    _, binary, info = servers.resolve_steadydb_binary(a.steadydb_bin, REPO_ROOT, root)
    user = servers.ensure_bench_user()
    settings = {"shared_buffers": "256MB", "max_wal_size": "4GB"}

    def steadydb(name: str):
        (root / name).mkdir()
        s = servers.SteadyDBServer(binary, root / name, out / f"{name}.log", settings)
        s.start()
        return s

    def postgres(name: str):
        (root / name).mkdir()
        s = servers.PostgresServer(pg_bin, root / name, out / f"{name}.log", settings, user)
        s._own(root / name)
        s.start()
        return s

    results: dict = {"scale": a.scale, "steadydb": info, "times_s": {}}
    try:
        source = steadydb("steadydb-source")
        _, results["times_s"]["pgbench_init_steadydb"] = timed(lambda: subprocess.run(
            [str(pg_bin / "pgbench"), "-i", "-q", "--foreign-keys", "-s", str(a.scale), "-h", "127.0.0.1",
             "-p", str(source.port), "-U", "postgres", "postgres"], check=True, capture_output=True, timeout=3600))
        for s in SCHEMA_EXTRAS:
            psql(source, pg_bin, ["-c", s])
        want = checksums(source, pg_bin)
        dump_file = root / "steadydb.sql"
        results["times_s"]["pg_dump_of_steadydb"] = dump(source, pg_bin, dump_file)
        results["dump_bytes"] = dump_file.stat().st_size
        source.cleanup()
        got = {}
        for label, make in (("steadydb", steadydb), ("postgres", postgres)):
            target = make(f"{label}-target")
            _, results["times_s"][f"restore_into_{label}"] = timed(
                lambda: psql(target, pg_bin, ["-f", str(dump_file)]))
            got[label] = checksums(target, pg_bin)
            if label == "postgres":
                results["times_s"]["pg_dump_of_postgres"] = dump(target, pg_bin, root / "postgres.sql")
            target.cleanup()
    finally:
        servers.REGISTRY.cleanup()
    results["checksums"] = {"source": want, **got}
    same = all(g == want for g in got.values())
    results["same_contents"] = same
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    t = results["times_s"]
    lines = [
        f"# pg_dump round trip, pgbench scale {a.scale} ({a.scale * 100000:,} accounts)", "",
        "| step | seconds |", "|---|---:|",
        f"| pgbench -i --foreign-keys into SteadyDB | {t['pgbench_init_steadydb']} |",
        f"| pg_dump of SteadyDB ({results['dump_bytes']:,} bytes) | {t['pg_dump_of_steadydb']} |",
        f"| psql restore into SteadyDB | {t['restore_into_steadydb']} |",
        f"| psql restore into PostgreSQL | {t['restore_into_postgres']} |",
        f"| pg_dump of PostgreSQL (the restored copy) | {t['pg_dump_of_postgres']} |", "",
        "| relation | source (SteadyDB) | restored into SteadyDB | restored into PostgreSQL |",
        "|---|---|---|---|",
    ]
    for name in CHECKSUMS:
        lines.append(f"| {name} | {want[name]} | {got['steadydb'][name]} | {got['postgres'][name]} |")
    lines += ["", f"Same contents everywhere: {'yes' if same else 'NO'}", ""]
    (out / "results.md").write_text("\n".join(lines))
    print("\n".join(lines))
    print(f"results in {out}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
