"""Malformed protocol input must not crash or hang the server.

Every raw-socket case checks that the server either answers with an
ErrorResponse or closes the connection (never waits forever), and that a
separate, normal connection still works afterwards.
"""

from __future__ import annotations

import random
import socket
import struct

import psycopg
import pytest

import pgraw
from pgraw import CLOSED, RawConn, cstr, message

RESPONSE_TIMEOUT = 10.0


def assert_server_healthy(server):
    with psycopg.connect(server.conninfo(), autocommit=True) as conn:
        assert conn.execute("select 1").fetchone() == (1,)


def error_or_close(raw: RawConn) -> list:
    """Read until the server closes the connection; at most a few messages.

    Returns the messages received (the last one is CLOSED). Fails if the
    server neither answers nor closes within RESPONSE_TIMEOUT.
    """
    msgs = []
    try:
        while True:
            m = raw.recv_msg()
            msgs.append(m)
            if m == CLOSED:
                return msgs
            if m[0] == b"E":
                fields = pgraw.parse_error_fields(m[1])
                if fields.get("S") == "FATAL":
                    # after FATAL the server must close the connection
                    nxt = raw.recv_msg()
                    msgs.append(nxt)
                    assert nxt == CLOSED, f"connection still open after FATAL: {nxt!r}"
                    return msgs
            assert len(msgs) < 50, msgs
    except socket.timeout:
        pytest.fail(f"server neither answered nor closed within {RESPONSE_TIMEOUT} s; got {msgs!r}")


def answered_error_or_closed(raw: RawConn, codes: set[str] | None = None) -> list:
    msgs = error_or_close(raw)
    errs = pgraw.errors(msgs)
    non_error = [m for m in msgs if m != CLOSED and m[0] not in (b"E", b"N")]
    assert not non_error, f"unexpected messages {non_error!r}"
    if codes is not None:
        for e in errs:
            assert e.get("C") in codes, e
    return errs


def connected(server) -> RawConn:
    raw = RawConn(server.host, server.port, timeout=RESPONSE_TIMEOUT)
    msgs = raw.startup(user=server.user, database=server.dbname)
    assert pgraw.ready_status(msgs) == b"I", msgs
    return raw


# --------------------------------------------------------------------------- startup packets


@pytest.mark.parametrize("seed", range(6))
def test_random_garbage_startup(server, seed):
    rnd = random.Random(seed)
    data = bytes(rnd.randrange(256) for _ in range(rnd.choice([1, 7, 64, 1000, 20000])))
    with RawConn(server.host, server.port, timeout=RESPONSE_TIMEOUT) as raw:
        raw.send(data)
        try:
            raw.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        answered_error_or_closed(raw)
    assert_server_healthy(server)


@pytest.mark.parametrize(
    "length",
    [2**31 - 1, 3, 0, 2**32 - 1, 7, 1_000_000],
    ids=["2^31-1", "3", "0", "2^32-1", "7", "1MB"],
)
def test_bad_startup_length(server, length):
    with RawConn(server.host, server.port, timeout=RESPONSE_TIMEOUT) as raw:
        # the socket stays open for writing: the server must decide on its own
        raw.send(struct.pack("!II", length, pgraw.PROTOCOL_3_0))
        answered_error_or_closed(raw)
    assert_server_healthy(server)


def test_unsupported_protocol_version_2(server):
    with RawConn(server.host, server.port, timeout=RESPONSE_TIMEOUT) as raw:
        raw.send(pgraw.startup_packet({"user": "postgres", "database": "postgres"}, version=2 << 16))
        first = raw.recv_byte()
        # an ErrorResponse (possibly in the old format) or a plain close
        assert first in (b"E", None), first
    assert_server_healthy(server)


def test_unknown_protocol_code(server):
    with RawConn(server.host, server.port, timeout=RESPONSE_TIMEOUT) as raw:
        raw.send(pgraw.startup_packet({"user": "postgres"}, version=(9999 << 16) | 1))
        answered_error_or_closed(raw)
    assert_server_healthy(server)


def test_startup_without_user(server):
    with RawConn(server.host, server.port, timeout=RESPONSE_TIMEOUT) as raw:
        raw.send(pgraw.startup_packet({"database": "postgres"}))
        errs = answered_error_or_closed(raw)
        assert [e["S"] for e in errs] in ([], ["FATAL"])
    assert_server_healthy(server)


def test_startup_truncated_parameters(server):
    body = struct.pack("!I", pgraw.PROTOCOL_3_0) + b"user\0postgres\0database"  # no terminators
    with RawConn(server.host, server.port, timeout=RESPONSE_TIMEOUT) as raw:
        raw.send(struct.pack("!I", len(body) + 4) + body)
        answered_error_or_closed(raw)
    assert_server_healthy(server)


def test_ssl_request_answered_n(server):
    with RawConn(server.host, server.port, timeout=RESPONSE_TIMEOUT) as raw:
        raw.send(struct.pack("!II", 8, pgraw.SSL_REQUEST_CODE))
        assert raw.recv_byte() == b"N"
        msgs = raw.startup()
        assert pgraw.ready_status(msgs) == b"I"
        assert pgraw.data_rows(raw.simple_query("select 1")) == [[b"1"]]


def test_gssenc_request_answered_n(server):
    with RawConn(server.host, server.port, timeout=RESPONSE_TIMEOUT) as raw:
        raw.send(struct.pack("!II", 8, pgraw.GSSENC_REQUEST_CODE))
        answer = raw.recv_byte()
        # 'N' (no GSSAPI encryption; SteadyDB) or 'G' (a GSSAPI-enabled PostgreSQL build)
        assert answer in (b"N", b"G"), answer
        if answer == b"N":
            msgs = raw.startup()
            assert pgraw.ready_status(msgs) == b"I"
            assert pgraw.data_rows(raw.simple_query("select 1")) == [[b"1"]]


def test_bogus_cancel_request_is_ignored(server):
    conn = psycopg.connect(server.conninfo(), autocommit=True)
    try:
        with RawConn(server.host, server.port, timeout=RESPONSE_TIMEOUT) as raw:
            raw.send(struct.pack("!IIII", 16, pgraw.CANCEL_REQUEST_CODE, 12345, 67890))
            assert raw.recv_msg() == CLOSED  # no reply, just close
        assert conn.execute("select 2").fetchone() == (2,)
    finally:
        conn.close()
    assert_server_healthy(server)


def test_normal_startup_reports_backend_key_and_params(server):
    with RawConn(server.host, server.port, timeout=RESPONSE_TIMEOUT) as raw:
        msgs = raw.startup()
        kinds = [m[0] for m in msgs if m != CLOSED]
        assert kinds[0] == b"R" and kinds[-1] == b"Z"
        assert b"K" in kinds
        assert raw.params.get("server_version", "").split(".")[0] == "15"
        assert raw.params.get("client_encoding") == "UTF8"


# --------------------------------------------------------------------------- messages after startup


@pytest.mark.parametrize("kind", [b"Q", b"P", b"B", b"X"])
def test_oversized_message_length(server, kind):
    with connected(server) as raw:
        raw.send(kind + struct.pack("!I", 1 << 30) + b"select 1")
        answered_error_or_closed(raw, codes={"08P01", "54000"})
    assert_server_healthy(server)


def test_max_message_length(server):
    with connected(server) as raw:
        raw.send(b"Q" + struct.pack("!I", 0xFFFFFFFF) + b"x")
        answered_error_or_closed(raw, codes={"08P01", "54000"})
    assert_server_healthy(server)


def test_message_length_below_minimum(server):
    with connected(server) as raw:
        raw.send(b"Q" + struct.pack("!I", 2))
        answered_error_or_closed(raw, codes={"08P01"})
    assert_server_healthy(server)


def test_unknown_message_type(server):
    with connected(server) as raw:
        raw.send(message(b"z", b"hello"))
        errs = answered_error_or_closed(raw, codes={"08P01"})
        assert len(errs) <= 1
    assert_server_healthy(server)


def _usable_after_error(raw: RawConn, msgs_so_far: list, codes: set[str]):
    """After a non-fatal protocol error the connection must resync and work."""
    errs = pgraw.errors(msgs_so_far)
    assert errs, msgs_so_far
    assert errs[0]["C"] in codes, errs
    if msgs_so_far[-1] == CLOSED:
        return
    assert pgraw.ready_status(msgs_so_far) is not None, msgs_so_far
    rows = pgraw.data_rows(raw.simple_query("select 1"))
    assert rows == [[b"1"]]


def _read_after_extended(raw: RawConn) -> list:
    """Send Sync and read up to ReadyForQuery or close."""
    raw.send(message(b"S"))
    try:
        return raw.read_until_ready()
    except socket.timeout:
        pytest.fail("no ReadyForQuery (or close) after Sync")


def test_truncated_bind_message(server):
    with connected(server) as raw:
        raw.send(message(b"P", cstr("") + cstr("select $1::int") + struct.pack("!HI", 1, 23)))
        # Bind: portal "", statement "", then the frame ends in the middle of the
        # format-code count: the length header is consistent, the content is short.
        raw.send(message(b"B", cstr("") + cstr("") + b"\x00"))
        msgs = _read_after_extended(raw)
        _usable_after_error(raw, msgs, {"08P01"})
    assert_server_healthy(server)


def test_bind_with_string_missing_terminator(server):
    with connected(server) as raw:
        raw.send(message(b"B", b"portal_without_nul"))
        msgs = _read_after_extended(raw)
        _usable_after_error(raw, msgs, {"08P01"})
    assert_server_healthy(server)


def test_bind_parameter_length_past_end(server):
    with connected(server) as raw:
        raw.send(message(b"P", cstr("") + cstr("select $1::text") + struct.pack("!HI", 1, 25)))
        payload = cstr("") + cstr("") + struct.pack("!H", 0) + struct.pack("!H", 1)
        payload += struct.pack("!i", 1000) + b"abc"  # claims 1000 bytes, has 3
        raw.send(message(b"B", payload))
        msgs = _read_after_extended(raw)
        _usable_after_error(raw, msgs, {"08P01"})
    assert_server_healthy(server)


def test_invalid_utf8_in_query(server):
    with connected(server) as raw:
        msgs = raw.simple_query(b"select '\xff\xfe\xc3('")
        errs = pgraw.errors(msgs)
        assert len(errs) == 1, msgs
        assert errs[0]["C"] in ("22021", "08P01"), errs
        if msgs[-1] != CLOSED:
            assert pgraw.ready_status(msgs) == b"I"
            assert pgraw.data_rows(raw.simple_query("select 'ok'")) == [[b"ok"]]
    assert_server_healthy(server)


def test_query_without_nul_terminator(server):
    with connected(server) as raw:
        raw.send(message(b"Q", b"select 1"))
        msgs = raw.read_until_ready()
        errs = pgraw.errors(msgs)
        assert len(errs) == 1 and errs[0]["C"] == "08P01", msgs
        if msgs[-1] != CLOSED:
            assert pgraw.data_rows(raw.simple_query("select 1")) == [[b"1"]]
    assert_server_healthy(server)


def test_bind_more_parameters_than_declared(server):
    with connected(server) as raw:
        raw.send(message(b"P", cstr("s1") + cstr("select $1::int + 1") + struct.pack("!HI", 1, 23)))
        payload = cstr("") + cstr("s1") + struct.pack("!H", 0) + struct.pack("!H", 2)
        payload += struct.pack("!i", 1) + b"5" + struct.pack("!i", 1) + b"6"
        payload += struct.pack("!H", 0)
        raw.send(message(b"B", payload))
        raw.send(message(b"E", cstr("") + struct.pack("!I", 0)))
        msgs = _read_after_extended(raw)
        errs = pgraw.errors(msgs)
        assert len(errs) == 1 and errs[0]["C"] == "08P01", msgs
        assert errs[0]["S"] == "ERROR"
        assert pgraw.ready_status(msgs) == b"I"
        # the connection and the prepared statement are still usable
        payload = cstr("") + cstr("s1") + struct.pack("!H", 0) + struct.pack("!H", 1)
        payload += struct.pack("!i", 1) + b"5" + struct.pack("!H", 0)
        raw.send(message(b"B", payload))
        raw.send(message(b"E", cstr("") + struct.pack("!I", 0)))
        msgs = _read_after_extended(raw)
        assert pgraw.errors(msgs) == []
        assert pgraw.data_rows(msgs) == [[b"6"]]
        assert pgraw.data_rows(raw.simple_query("select 1")) == [[b"1"]]
    assert_server_healthy(server)


def test_bind_fewer_parameters_than_declared(server):
    with connected(server) as raw:
        raw.send(message(b"P", cstr("") + cstr("select $1::int, $2::text") + struct.pack("!HII", 2, 23, 25)))
        payload = cstr("") + cstr("") + struct.pack("!H", 0) + struct.pack("!H", 1)
        payload += struct.pack("!i", 1) + b"5" + struct.pack("!H", 0)
        raw.send(message(b"B", payload))
        raw.send(message(b"E", cstr("") + struct.pack("!I", 0)))
        msgs = _read_after_extended(raw)
        errs = pgraw.errors(msgs)
        assert len(errs) == 1 and errs[0]["C"] == "08P01", msgs
        assert pgraw.data_rows(raw.simple_query("select 3")) == [[b"3"]]
    assert_server_healthy(server)


def test_execute_unknown_portal_and_statement(server):
    with connected(server) as raw:
        raw.send(message(b"E", cstr("no_such_portal") + struct.pack("!I", 0)))
        msgs = _read_after_extended(raw)
        errs = pgraw.errors(msgs)
        assert len(errs) == 1 and errs[0]["C"] == "34000", msgs
        raw.send(message(b"B", cstr("") + cstr("no_such_stmt") + struct.pack("!HHH", 0, 0, 0)))
        msgs = _read_after_extended(raw)
        errs = pgraw.errors(msgs)
        assert len(errs) == 1 and errs[0]["C"] == "26000", msgs
        assert pgraw.data_rows(raw.simple_query("select 4")) == [[b"4"]]
    assert_server_healthy(server)


@pytest.mark.parametrize("value", [b"\x00\x01", b"\x00\x00\x00\x00\x00\x01"], ids=["short", "long"])
def test_binary_parameter_with_wrong_length(server, value):
    with connected(server) as raw:
        raw.send(message(b"P", cstr("") + cstr("select $1::int4") + struct.pack("!HI", 1, 23)))
        # a binary int4 parameter that is not 4 bytes long
        payload = cstr("") + cstr("") + struct.pack("!HH", 1, 1) + struct.pack("!H", 1)
        payload += struct.pack("!i", len(value)) + value + struct.pack("!H", 0)
        raw.send(message(b"B", payload))
        raw.send(message(b"E", cstr("") + struct.pack("!I", 0)))
        msgs = _read_after_extended(raw)
        errs = pgraw.errors(msgs)
        assert len(errs) == 1 and errs[0]["C"] in ("22P03", "08P01"), msgs
        assert errs[0]["S"] == "ERROR"
        assert pgraw.data_rows(raw.simple_query("select 5")) == [[b"5"]]
    assert_server_healthy(server)


def test_abrupt_disconnect_mid_transaction(server, db):
    t = db.table("abrupt")
    with db.connect() as c:
        c.execute(f"create table {t} (id int primary key)")
    raw = connected(server)
    raw.simple_query("begin")
    raw.simple_query(f"insert into {t} values (1)")
    raw.sock.close()  # no Terminate
    # the open transaction is rolled back and its lock released
    with psycopg.connect(server.conninfo(), autocommit=True) as c:
        c.execute(f"insert into {t} values (1)")  # would block forever if the lock leaked
        assert c.execute(f"select count(*) from {t}").fetchone() == (1,)


def test_terminate_message(server):
    with connected(server) as raw:
        raw.send(message(b"X"))
        assert raw.recv_msg() == CLOSED
    assert_server_healthy(server)


# --------------------------------------------------------------------------- SQL level


def test_unknown_sql_is_syntax_error(conn):
    for sql in ["frobnicate the table", "selec 1", "insert into", "create tabel x (a int)", ";;;garbage"]:
        with pytest.raises(psycopg.Error) as ei:
            conn.execute(sql)
        assert ei.value.sqlstate == "42601", (sql, ei.value.sqlstate, str(ei.value))
    assert conn.execute("select 1").fetchone() == (1,)


def test_empty_query(conn):
    cur = conn.cursor()
    cur.execute("")
    assert cur.pgresult.status == psycopg.pq.ExecStatus.EMPTY_QUERY
    assert conn.execute("select 1").fetchone() == (1,)


@pytest.mark.steadydb_only
def test_unsupported_features_0a000(db, conn):
    a, b = db.table("ua"), db.table("ub")
    conn.execute(f"create table {a} (id int primary key, v int)")
    conn.execute(f"create table {b} (id int primary key, w int)")
    for sql in [
        f"select * from {a}, lateral (select {a}.v) l",
        f"create index {a}_v on {a} ((v + 1))",
        f"create materialized view {a}_view as select * from {a}",
    ]:
        with pytest.raises(psycopg.Error) as ei:
            conn.execute(sql)
        assert ei.value.sqlstate == "0A000", (sql, ei.value.sqlstate, str(ei.value))
    assert conn.execute("select 1").fetchone() == (1,)


def test_very_long_query_text(conn):
    big = " + ".join(["1"] * 1000)
    assert conn.execute(f"select {big}").fetchone() == (1000,)
    s = "x" * 1_000_000
    assert conn.execute("select length(%s)", (s,)).fetchone() == (1_000_000,)
