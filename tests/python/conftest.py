"""Shared fixtures for the SteadyDB acceptance tests.

By default a fresh SteadyDB server (``STEADYDB_BIN``, default
``target/release/steadydb``) is started once per test run on a free port
with a temporary data directory, and stopped with SIGTERM at the end.

To run the suite against an already running server instead (for example a
PostgreSQL 15 cluster, to validate the tests themselves), set
``STEADYDB_TEST_EXTERNAL`` to a libpq keyword/value connection string::

    STEADYDB_TEST_EXTERNAL="host=127.0.0.1 port=5432 user=postgres" pytest tests/python

In external mode tests marked ``steadydb_only`` are skipped.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

REPO_ROOT = Path(__file__).resolve().parents[2]
EXTERNAL_ENV = "STEADYDB_TEST_EXTERNAL"
DEFAULT_TEST_TIMEOUT = int(os.environ.get("STEADYDB_TEST_TIMEOUT", "120"))
PG_BIN_DIRS = ["/usr/lib/postgresql/15/bin"]

# Settings given to every libpq based client (psycopg, psql, pgbench).
CONNECT_TIMEOUT = 10


def find_pg_tool(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    for d in PG_BIN_DIRS:
        p = Path(d) / name
        if p.exists():
            return str(p)
    pytest.fail(f"{name} not found on PATH or in {PG_BIN_DIRS}")
    raise AssertionError("unreachable")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    host: str
    port: int
    user: str
    dbname: str
    external: bool
    proc: subprocess.Popen | None = None
    datadir: str | None = None
    log_path: str | None = None

    def conninfo(self, **overrides) -> str:
        params = {
            "host": self.host,
            "port": str(self.port),
            "user": self.user,
            "dbname": self.dbname,
            "connect_timeout": str(CONNECT_TIMEOUT),
        }
        params.update({k: str(v) for k, v in overrides.items()})
        return " ".join(f"{k}={_quote_conninfo(v)}" for k, v in params.items())

    def connect(self, autocommit: bool = True, **kwargs) -> psycopg.Connection:
        return psycopg.connect(self.conninfo(), autocommit=autocommit, **kwargs)

    def client_env(self) -> dict:
        """Environment for psql/pgbench subprocesses."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env.update(
            PGHOST=self.host,
            PGPORT=str(self.port),
            PGUSER=self.user,
            PGDATABASE=self.dbname,
            PGCONNECT_TIMEOUT=str(CONNECT_TIMEOUT),
            PGCLIENTENCODING="UTF8",
            LC_ALL="C.UTF-8",
            LANG="C.UTF-8",
        )
        return env

    def log_tail(self, lines: int = 60) -> str:
        if not self.log_path or not os.path.exists(self.log_path):
            return "(no server log)"
        with open(self.log_path, "rb") as f:
            data = f.read().decode("utf-8", "replace").splitlines()
        return "\n".join(data[-lines:])


def _quote_conninfo(v: str) -> str:
    if v and all(c not in v for c in " '\\"):
        return v
    return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _server_ready(server: Server) -> bool:
    try:
        with psycopg.connect(server.conninfo(connect_timeout=2), autocommit=True) as conn:
            return conn.execute("select 1").fetchone() == (1,)
    except psycopg.Error:
        return False


def _resolve_bin() -> Path:
    raw = os.environ.get("STEADYDB_BIN", "target/release/steadydb")
    p = Path(raw)
    if not p.is_absolute():
        cwd_candidate = Path.cwd() / p
        p = cwd_candidate if cwd_candidate.exists() else REPO_ROOT / p
    return p


def _start_server() -> Server:
    binary = _resolve_bin()
    if not binary.exists():
        pytest.exit(f"server binary {binary} does not exist (set STEADYDB_BIN)", returncode=3)
    tmp = tempfile.mkdtemp(prefix="steadydb-pytest-")
    datadir = os.path.join(tmp, "data")
    log_path = os.path.join(tmp, "server.log")
    # No autoanalyzer: a test's plans must not change when a minute has passed
    # (test_statistics.py runs servers of its own with it).
    extra = ["-c", "autovacuum=off"]
    for item in os.environ.get("STEADYDB_SERVER_ARGS", "").split():
        extra += ["-c", item]
    last_err = ""
    for _attempt in range(3):  # a free port can be taken by someone else in between
        port = free_port()
        log = open(log_path, "ab")
        proc = subprocess.Popen(
            [str(binary), "server", "--auth", "trust", "-D", datadir, "-p", str(port), *extra],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
        log.close()
        server = Server("127.0.0.1", port, "postgres", "postgres", False, proc, datadir, log_path)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            if _server_ready(server):
                return server
            time.sleep(0.2)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
            last_err = "server did not become ready within 30 s"
            break
        last_err = f"server exited with code {proc.returncode} during startup"
    pytest.exit(f"{last_err}; log {log_path}:\n{server.log_tail()}", returncode=3)
    raise AssertionError("unreachable")


@pytest.fixture(scope="session")
def server():
    external = os.environ.get(EXTERNAL_ENV)
    if external:
        info = conninfo_to_dict(external)
        srv = Server(
            host=info.get("host", os.environ.get("PGHOST", "127.0.0.1")),
            port=int(info.get("port", os.environ.get("PGPORT", "5432"))),
            user=info.get("user", os.environ.get("PGUSER", "postgres")),
            dbname=info.get("dbname", "postgres"),
            external=True,
        )
        if not _server_ready(srv):
            pytest.exit(f"external server {external!r} is not reachable", returncode=3)
        yield srv
        return

    srv = _start_server()
    _run_state["server"] = srv
    try:
        yield srv
    finally:
        proc = srv.proc
        assert proc is not None
        if proc.poll() is not None:
            pytest.fail(f"server died during the test run with code {proc.returncode}:\n{srv.log_tail()}")
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            pytest.fail(f"server did not exit within 10 s of SIGTERM:\n{srv.log_tail()}")
        elapsed = time.monotonic() - start
        assert rc == 0, f"server exited with code {rc} after SIGTERM:\n{srv.log_tail()}"
        print(f"\nserver stopped cleanly in {elapsed:.2f} s (log: {srv.log_path})")
        if srv.datadir:
            shutil.rmtree(srv.datadir, ignore_errors=True)


_run_state: dict = {}


def pytest_collection_modifyitems(config, items):
    if not os.environ.get(EXTERNAL_ENV):
        return
    skip = pytest.mark.skip(reason=f"steadydb_only test skipped ({EXTERNAL_ENV} is set)")
    for item in items:
        if "steadydb_only" in item.keywords:
            item.add_marker(skip)


class TimeLimitExceeded(Exception):
    pass


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """Fail (instead of hanging forever) when a test exceeds its time limit."""
    marker = item.get_closest_marker("timeout")
    seconds = int(marker.args[0]) if marker else DEFAULT_TEST_TIMEOUT
    use_alarm = threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGALRM")
    if use_alarm:

        def on_alarm(signum, frame):
            raise TimeLimitExceeded(f"test exceeded its {seconds} s time limit")

        old = signal.signal(signal.SIGALRM, on_alarm)
        signal.alarm(seconds)
    try:
        yield
    finally:
        if use_alarm:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    srv = _run_state.get("server")
    if srv is not None and exitstatus != 0:
        terminalreporter.write_sep("-", f"last lines of the server log {srv.log_path}")
        terminalreporter.write_line(srv.log_tail(80))


_name_counter = itertools.count(1)


def unique_name(prefix: str = "t") -> str:
    """A table name that no other test (or concurrent test run) uses."""
    return f"{prefix}_{uuid.uuid4().hex[:10]}_{next(_name_counter)}".lower()


@dataclass
class DB:
    """Per-test helper: connections, psql, unique table names, cleanup."""

    server: Server
    _conns: list = field(default_factory=list)
    _tables: list = field(default_factory=list)

    @property
    def external(self) -> bool:
        return self.server.external

    def connect(self, autocommit: bool = True, **kwargs) -> psycopg.Connection:
        conn = self.server.connect(autocommit=autocommit, **kwargs)
        self._conns.append(conn)
        return conn

    def table(self, prefix: str = "t") -> str:
        name = unique_name(prefix)
        self._tables.append(name)
        return name

    def drop_later(self, *names: str) -> None:
        self._tables.extend(names)

    def psql(
        self,
        sql: str | None = None,
        *args: str,
        command: str | None = None,
        check: bool = True,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess:
        """Run the real psql binary.

        ``sql`` is fed on stdin (psql splits it into statements itself);
        ``command`` is passed with ``-c`` (sent to the server as one Query message).
        """
        cmd = [
            find_pg_tool("psql"),
            "-X",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            self.server.host,
            "-p",
            str(self.server.port),
            "-U",
            self.server.user,
            "-d",
            self.server.dbname,
            *args,
        ]
        if command is not None:
            cmd += ["-c", command]
        res = subprocess.run(
            cmd,
            input=sql if sql is not None else "",
            capture_output=True,
            text=True,
            timeout=timeout,
            env=self.server.client_env(),
        )
        if check and res.returncode != 0:
            raise AssertionError(
                f"psql failed with code {res.returncode}\nstdout:\n{res.stdout}\nstderr:\n{res.stderr}"
            )
        return res

    def close(self) -> None:
        for conn in self._conns:
            try:
                if conn.info.transaction_status == psycopg.pq.TransactionStatus.ACTIVE:
                    conn.cancel()  # a query left blocked by a failed test
            except Exception:
                pass
            try:
                conn.close()
            except Exception:
                pass
        self._conns.clear()
        if self._tables:
            try:
                with self.server.connect(autocommit=True) as conn:
                    conn.execute("drop table if exists " + ", ".join(self._tables))
            except psycopg.Error as e:  # the test itself reports real failures
                print(f"cleanup of {self._tables} failed: {e}", file=sys.stderr)
            self._tables.clear()


@pytest.fixture
def db(server):
    helper = DB(server)
    try:
        yield helper
    finally:
        helper.close()


@pytest.fixture
def conn(db):
    """An autocommit connection."""
    return db.connect()


@pytest.fixture
def cur(conn):
    with conn.cursor() as c:
        yield c


def module_tables(server, names: str, setup: list[str]):
    """Create a module's shared tables (`names`, comma-separated) with `setup`, yield, and
    drop them: the body of a module-scoped fixture."""
    with server.connect(autocommit=True) as c:
        c.execute(f"drop table if exists {names}")
        for sql in setup:
            c.execute(sql)
    yield
    with server.connect(autocommit=True) as c:
        c.execute(f"drop table if exists {names}")


def run_steps(conn: psycopg.Connection, steps: list) -> None:
    """Run (statement, expected) pairs in order: expected rows (a list), a command tag
    (a string), or an error as a tuple of its SQLSTATE, primary message and, when the
    tuple is longer, its detail and constraint name."""
    for sql, want in steps:
        if isinstance(want, tuple):
            with pytest.raises(psycopg.Error) as ei:
                conn.execute(sql)
            d = ei.value.diag
            got = (ei.value.sqlstate, d.message_primary, d.message_detail, d.constraint_name)
            assert got[: len(want)] == want, sql
            continue
        cur = conn.execute(sql)
        assert (cur.fetchall() if cur.description else cur.statusmessage) == want, sql


def run_steps_clean(server, steps: list, cleanup: list[str]) -> None:
    """`run_steps` on a connection of its own, with `cleanup` (statements dropping what
    the steps make) run before and after, an open block rolled back first."""
    with server.connect() as c:
        for sql in cleanup:
            c.execute(sql)
        try:
            run_steps(c, steps)
        finally:
            if c.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                c.execute("rollback")
            for sql in cleanup:
                c.execute(sql)
