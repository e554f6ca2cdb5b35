"""Unix-domain sockets: `unix_socket_directories`, as psql, pgbench and libpq use them."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import subprocess
import tempfile
import time

import psycopg
import pytest

from conftest import _resolve_bin, find_pg_tool
from crash_util import nodes  # noqa: F401  (nodes is a fixture)

pytestmark = pytest.mark.steadydb_only


@pytest.fixture
def sockdir():
    with tempfile.TemporaryDirectory(prefix="sdbsock-") as d:
        yield d


def socket_path(d: str, port: int) -> str:
    return os.path.join(d, f".s.PGSQL.{port}")


def test_clients_connect_through_the_socket(nodes, sockdir):
    node = nodes({"unix_socket_directories": sockdir}).start()
    path = socket_path(sockdir, node.port)
    mode = os.stat(path).st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o777
    with psycopg.connect(host=sockdir, port=node.port, user="postgres", dbname="postgres",
                         autocommit=True) as conn:
        assert conn.execute("show unix_socket_directories").fetchone() == (sockdir,)
        conn.execute("create table via_socket (id int primary key)")
        conn.execute("insert into via_socket values (1), (2)")
    out = subprocess.run(
        [find_pg_tool("psql"), "-X", "-At", "-h", sockdir, "-p", str(node.port), "-U", "postgres",
         "-c", "select count(*) from via_socket"],
        capture_output=True, text=True, timeout=30)
    assert (out.returncode, out.stdout, out.stderr) == (0, "2\n", "")
    # TCP still works beside it.
    with node.connect() as conn:
        assert conn.execute("select count(*) from via_socket").fetchone() == (2,)
        # pg_stat_activity tells the two apart, as PostgreSQL does.
        addr, port = conn.execute(
            "select client_addr, client_port from pg_stat_activity where pid = pg_backend_pid()"
        ).fetchone()
        assert addr == "127.0.0.1" and port > 0, (addr, port)
    with psycopg.connect(host=sockdir, port=node.port, user="postgres", dbname="postgres",
                         autocommit=True) as conn:
        assert conn.execute(
            "select client_addr, client_hostname, client_port from pg_stat_activity "
            "where pid = pg_backend_pid()").fetchone() == (None, None, -1)
    node.stop_clean()
    assert not os.path.exists(path), "the socket file is removed at shutdown"


def test_a_stale_socket_file_is_replaced_after_a_crash(nodes, sockdir):
    node = nodes({"unix_socket_directories": sockdir}).start()
    port = node.port
    node.kill()
    assert os.path.exists(socket_path(sockdir, port)), "SIGKILL leaves the file behind"
    # The same data directory and port again: the file is probed, found dead, replaced.
    log = os.path.join(sockdir, "restart.log")
    with server_process(node.datadir, port, sockdir, log):
        wait_for_socket(sockdir, port)
        with open(log) as f:
            assert "removing stale socket file" in f.read()


def test_a_second_server_on_the_same_socket_is_refused(nodes, sockdir):
    first = nodes({"unix_socket_directories": sockdir}).start()
    # Another data directory, and another TCP address, but the same port and socket
    # directory, hence the same socket file.
    with tempfile.TemporaryDirectory(prefix="sdbsecond-") as other:
        proc = subprocess.run(
            [str(_resolve_bin()), "server", "--auth", "trust", "-D", other, "-p", str(first.port),
             "-c", f"unix_socket_directories={sockdir}", "-c", "listen_addresses=127.0.0.2"],
            capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "another server is listening on the socket" in proc.stderr, proc.stderr
    # The first server is untouched and still reachable through its socket.
    with psycopg.connect(host=sockdir, port=first.port, user="postgres", dbname="postgres") as conn:
        assert conn.execute("select 1").fetchone() == (1,)


def test_an_empty_setting_means_no_socket(nodes, sockdir):
    node = nodes({"unix_socket_directories": ""}).start()
    # Nothing listens at the default path. (A file may be there all the same, left by an
    # earlier server on this port that was killed, so the check is a connection attempt.)
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with pytest.raises((FileNotFoundError, ConnectionRefusedError)):
            probe.connect(socket_path("/tmp", node.port))
    finally:
        probe.close()
    with node.connect() as conn:
        assert conn.execute("show unix_socket_directories").fetchone() == ("",)


@contextlib.contextmanager
def server_process(datadir: str, port: int, sockdir: str, log: str):
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(_resolve_bin()), "server", "--auth", "trust", "-D", datadir, "-p", str(port),
             "-c", f"unix_socket_directories={sockdir}"],
            stdin=subprocess.DEVNULL, stdout=out, stderr=out)
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait(timeout=30)


def wait_for_socket(d: str, port: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            with psycopg.connect(host=d, port=port, user="postgres", dbname="postgres",
                                 connect_timeout=2) as conn:
                conn.execute("select 1")
                return
        except psycopg.Error as e:
            last = e
            time.sleep(0.05)
    raise AssertionError(f"no server on the socket in {d} port {port}: {last}")


def test_socket_permissions_and_group_are_applied(nodes, sockdir):
    gid = os.getgid()
    node = nodes({"unix_socket_directories": sockdir, "unix_socket_permissions": "0770",
                  "unix_socket_group": str(gid)}).start()
    st = os.stat(socket_path(sockdir, node.port))
    assert stat.S_IMODE(st.st_mode) == 0o770 and st.st_gid == gid
    with psycopg.connect(host=sockdir, port=node.port, user="postgres", dbname="postgres",
                         autocommit=True) as conn:
        assert conn.execute("show unix_socket_permissions").fetchone() == ("0770",)
        assert conn.execute("show unix_socket_group").fetchone() == (str(gid),)
        with pytest.raises(psycopg.errors.CantChangeRuntimeParam):
            conn.execute("set unix_socket_permissions = '0700'")
    node.stop_clean()
