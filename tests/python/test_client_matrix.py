"""The client matrix: the same checks (connect, typed round trips, prepared and batched
statements, a transaction with a savepoint, an error's fields, metadata, arrays, COPY in
and out) run by real drivers in their own languages against the server: node-postgres,
pgx, pgjdbc, asyncpg and tokio-postgres; and Django's migrate (foreign keys, unique
constraints, indexes, contenttypes' own migrations) with its ORM. Each program lives in `tests/clients/` (the
tokio-postgres one is this crate's example `client_checks`), is built here from its
registry (npm, the Go module proxy, Maven Central, PyPI, crates.io), and prints one JSON line per
check. The matrix is printed; every check passes on PostgreSQL 15, and on SteadyDB every
check passes but those listed in KNOWN_GAPS, which must still fail (so the list stays
true)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXTERNAL_ENV

CLIENTS = Path(__file__).resolve().parent.parent / "clients"
BUILD_TIMEOUT = 900
RUN_TIMEOUT = 300

# What SteadyDB cannot do yet, by (client, check): the reason.
KNOWN_GAPS: dict[tuple[str, str], str] = {}


def run(cmd: list[str], cwd: Path, timeout: int, env: dict | None = None) -> str:
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    if res.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stdout}\n{res.stderr}")
    return res.stdout


def build(client: str) -> list[str]:
    """Build a client's program (once per checkout); its command line."""
    if client == "node-postgres":
        d = CLIENTS / "node"
        if not (d / "node_modules" / "pg").exists():
            run(["npm", "ci", "--no-audit", "--no-fund"], d, BUILD_TIMEOUT)
        return ["node", str(d / "checks.js")]
    if client == "pgx":
        d = CLIENTS / "go"
        binary = d / "clientcheck"
        run(["go", "build", "-o", str(binary), "."], d, BUILD_TIMEOUT)
        return [str(binary)]
    if client == "pgjdbc":
        d = CLIENTS / "java"
        if not (d / "target" / "lib").exists():
            run(["mvn", "-q", "-B", "dependency:copy-dependencies", "-DoutputDirectory=target/lib"], d, BUILD_TIMEOUT)
        classes = d / "target" / "classes"
        classes.mkdir(parents=True, exist_ok=True)
        sources = d / "src" / "main" / "java" / "steadydb"
        run(["javac", "-encoding", "UTF-8", "-cp", str(d / "target" / "lib" / "*"), "-d", str(classes),
             str(sources / "Checks.java"), str(sources / "AuthChecks.java")], d, BUILD_TIMEOUT)
        return ["java", "-cp", f"{classes}{os.pathsep}{d / 'target' / 'lib' / '*'}", "steadydb.Checks"]
    if client == "asyncpg":
        return [sys.executable, str(CLIENTS / "python" / "asyncpg_checks.py")]
    if client == "django":
        return [sys.executable, str(CLIENTS / "django" / "django_checks.py")]
    if client == "tokio-postgres":
        # An example of this crate: tokio-postgres is one of its dev-dependencies.
        root = CLIENTS.parent.parent
        run(["cargo", "build", "--release", "--example", "client_checks"], root, BUILD_TIMEOUT)
        target = Path(os.environ.get("CARGO_TARGET_DIR", root / "target"))
        return [str(target / "release" / "examples" / "client_checks")]
    raise ValueError(client)


TOOLS = {
    "node-postgres": "npm",
    "pgx": "go",
    "pgjdbc": "mvn",
    "asyncpg": None,
    "django": None,
    "tokio-postgres": "cargo",
}

CHECK_ORDER = [
    "connect", "types", "prepared", "batch", "transaction_savepoint", "error_fields",
    "metadata", "metadata_tables", "metadata_columns", "metadata_primary_keys",
    "metadata_result_set", "arrays", "copy_in", "copy_out", "time_zone",
    # Django: a migration of an app with foreign keys, unique constraints and indexes,
    # then its ORM.
    "migrate", "introspection", "crud", "bulk_create", "unique_violation",
    "foreign_key_violation", "deferred_order", "savepoints", "cascade_delete",
    "functions_and_date_lookups",
    # Authentication (test_auth.py's servers): SCRAM over TLS, verify-full, a wrong
    # password (28P01), a plain connection to a hostssl-only server (28000).
    "auth_scram_tls", "auth_verify_full", "auth_wrong_password", "auth_plain_refused",
]


@pytest.fixture(scope="module")
def matrix():
    results: dict[str, dict[str, dict]] = {}
    yield results
    seen = {c for r in results.values() for c in r}
    checks = [c for c in CHECK_ORDER if c in seen] + sorted(seen - set(CHECK_ORDER))
    clients = list(results)
    lines = ["", "| check | " + " | ".join(clients) + " |", "|---|" + "---|" * len(clients)]
    for check in checks:
        cells = []
        for client in clients:
            r = results[client].get(check)
            cells.append("-" if r is None else ("pass" if r["ok"] else "FAIL"))
        lines.append(f"| {check} | " + " | ".join(cells) + " |")
    print("\n".join(lines))


@pytest.mark.parametrize("client", list(TOOLS))
def test_client(server, matrix, client):
    tool = TOOLS[client]
    if tool is not None and shutil.which(tool) is None:
        raise AssertionError(f"{tool} is not installed: the client matrix needs it")
    cmd = build(client)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update(
        PGHOST=server.host,
        PGPORT=str(server.port),
        PGUSER=server.user,
        PGDATABASE=server.dbname,
        PGPASSWORD="",
        CLIENT_PREFIX=f"cm_{client.replace('-', '_')}",
    )
    out = run(cmd, CLIENTS, RUN_TIMEOUT, env)
    results = {}
    for line in out.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            results[r["check"]] = r
    matrix[client] = results
    assert results, f"{client} printed no checks:\n{out}"
    failed = {c: r.get("detail") for c, r in results.items() if not r["ok"]}
    external = bool(os.environ.get(EXTERNAL_ENV))
    expected = {} if external else {c: why for (cl, c), why in KNOWN_GAPS.items() if cl == client}
    assert set(failed) == set(expected), (
        f"{client}: failed {failed}; expected to fail only {sorted(expected)}"
    )
