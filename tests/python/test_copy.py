"""COPY TO STDOUT (text, CSV and binary, of a table or a query) and COPY FROM STDIN in
binary format, byte for byte as PostgreSQL 15 writes and reads them.

Every expectation holds on PostgreSQL 15 too (``STEADYDB_TEST_EXTERNAL``), except the
tests marked ``steadydb_only``. Rows are inserted in key order, so a table's heap order
in PostgreSQL and its key order here agree.
"""

from __future__ import annotations

import datetime
import decimal
import struct

import psycopg
import pytest

SIGNATURE = b"PGCOPY\n\xff\r\n\x00"


def copy_out(conn: psycopg.Connection, sql: str) -> bytes:
    out = bytearray()
    with conn.cursor().copy(sql) as copy:
        for chunk in copy:
            out += chunk
    return bytes(out)


@pytest.fixture
def typed(db, conn):
    """A table of the types COPY must render, with awkward text."""
    t = db.table("copy_typed")
    conn.execute(
        f"create table {t} (k int primary key, s text, n numeric(10,2), f float8, b bool,"
        " d date, ts timestamp, raw bytea)"
    )
    conn.execute(
        f"insert into {t} values"
        " (1, 'plain', 1.50, 0.5, true, '2024-02-29', '2024-02-29 12:34:56.789', '\\x00ff'),"
        " (2, E'tab\\there, back\\\\slash\\nnew line, \"q\", comma', -3.00, -1e10, false,"
        "  '1999-12-31', '2000-01-01 00:00:00', ''),"
        " (3, '', null, null, null, null, null, null),"
        " (4, '\\N', 0, 'NaN', true, '2000-01-01', '2000-01-01 00:00:01', '\\x5c')"
    )
    return t


def test_copy_table_to_stdout_in_text(conn, typed):
    assert copy_out(conn, f"copy {typed} to stdout").decode() == (
        "1\tplain\t1.50\t0.5\tt\t2024-02-29\t2024-02-29 12:34:56.789\t\\\\x00ff\n"
        "2\ttab\\there, back\\\\slash\\nnew line, \"q\", comma\t-3.00\t-10000000000\tf\t"
        "1999-12-31\t2000-01-01 00:00:00\t\\\\x\n"
        "3\t\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\n"
        "4\t\\\\N\t0.00\tNaN\tt\t2000-01-01\t2000-01-01 00:00:01\t\\\\x5c\n"
    )


def test_copy_columns_to_stdout_in_csv_with_header(conn, typed):
    got = copy_out(conn, f"copy {typed} (k, s, n) to stdout with (format csv, header)")
    assert got.decode() == (
        "k,s,n\n"
        "1,plain,1.50\n"
        "2,\"tab\there, back\\slash\nnew line, \"\"q\"\", comma\",-3.00\n"
        "3,\"\",\n"
        "4,\\N,0.00\n"
    )


def test_csv_and_text_options(conn, typed):
    got = copy_out(conn, f"copy {typed} (k, s) to stdout (format csv, delimiter ';', null 'NULL',"
                         " quote '''', escape '\\')")
    assert got.decode().splitlines()[1] == "2;'tab\there, back\\\\slash"
    got = copy_out(conn, f"copy (select k, n from {typed} where k > 2 order by k desc) to stdout"
                         " with delimiter '|' null ''")
    assert got == b"4|0.00\n3|\n"
    # PostgreSQL 15: HEADER in text format too.
    got = copy_out(conn, f"copy (select k from {typed} where k = 1) to stdout (header)")
    assert got == b"k\n1\n"


def test_copy_query_to_stdout(conn, typed):
    got = copy_out(conn, f"copy (select k * 10 as ten, upper(s) from {typed} where k in (1, 3)"
                         " order by k) to stdout with csv header")
    assert got.decode() == "ten,upper\n10,PLAIN\n30,\"\"\n"
    cur = conn.cursor()
    with cur.copy("copy (select 1 where false) to stdout") as copy:
        assert list(copy) == []
    assert cur.rowcount == 0
    with cur.copy(f"copy {typed} to stdout") as copy:
        for _ in copy:
            pass
    assert cur.rowcount == 4


def test_copy_to_sees_the_transactions_own_writes(db, conn):
    t = db.table("copy_own")
    conn.execute(f"create table {t} (k int primary key, v text)")
    conn.execute(f"insert into {t} values (1, 'a'), (3, 'c')")
    with conn.transaction():
        conn.execute(f"insert into {t} values (2, 'b')")
        conn.execute(f"update {t} set v = 'C' where k = 3")
        conn.execute(f"delete from {t} where k = 1")
        assert copy_out(conn, f"copy {t} to stdout") == b"2\tb\n3\tC\n"


def test_a_large_table_streams_in_order(db, conn):
    t = db.table("copy_large")
    conn.execute(f"create table {t} (k int primary key, v text)")
    rows = 30_000
    with conn.cursor().copy(f"copy {t} from stdin") as copy:
        for i in range(rows):
            copy.write_row((i, f"row {i:06d} " + "x" * 40))
    lines = copy_out(conn, f"copy {t} to stdout").decode().splitlines()
    assert len(lines) == rows
    assert lines[0] == "0\trow 000000 " + "x" * 40
    assert [int(line.split("\t")[0]) for line in lines] == list(range(rows))


def test_binary_copy_out_format(conn, typed):
    got = copy_out(conn, f"copy (select k, s from {typed} where k in (1, 3) order by k)"
                         " to stdout (format binary)")
    want = SIGNATURE + struct.pack("!ii", 0, 0)
    want += struct.pack("!hi", 2, 4) + struct.pack("!i", 1) + struct.pack("!i", 5) + b"plain"
    want += struct.pack("!hi", 2, 4) + struct.pack("!i", 3) + struct.pack("!i", 0)
    want += struct.pack("!h", -1)
    assert got == want


def test_binary_copy_round_trip(db, conn, typed):
    data = copy_out(conn, f"copy {typed} to stdout (format binary)")
    t2 = db.table("copy_typed2")
    conn.execute(f"create table {t2} (k int primary key, s text, n numeric(10,2), f float8,"
                 " b bool, d date, ts timestamp, raw bytea)")
    with conn.cursor().copy(f"copy {t2} from stdin (format binary)") as copy:
        # In pieces that split rows and fields.
        for i in range(0, len(data), 7):
            copy.write(data[i:i + 7])
    cols = "k, s, n, f::text, b, d, ts, raw"
    assert conn.execute(f"select {cols} from {t2} order by k").fetchall() == \
        conn.execute(f"select {cols} from {typed} order by k").fetchall()


def test_psycopg_binary_copy_in(db, conn):
    t = db.table("copy_bin")
    conn.execute(f"create table {t} (k int8 primary key, v text, n numeric, at timestamptz)")
    when = datetime.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=datetime.timezone.utc)
    with conn.cursor().copy(f"copy {t} (k, v, n, at) from stdin (format binary)") as copy:
        copy.set_types(["int8", "text", "numeric", "timestamptz"])
        copy.write_row((1, "one", decimal.Decimal("1.25"), when))
        copy.write_row((2, None, None, None))
    rows = conn.execute(f"select k, v, n, at from {t} order by k").fetchall()
    assert rows == [(1, "one", decimal.Decimal("1.25"), when), (2, None, None, None)]


def test_bad_binary_copy_in(db, conn):
    t = db.table("copy_badbin")
    conn.execute(f"create table {t} (k int primary key, v text)")
    with pytest.raises(psycopg.Error) as ei:
        with conn.cursor().copy(f"copy {t} from stdin (format binary)") as copy:
            copy.write(b"not a copy file at all")
    assert ei.value.sqlstate == "22P04"
    assert ei.value.diag.message_primary == "COPY file signature not recognized"
    one_field = SIGNATURE + struct.pack("!ii", 0, 0) + struct.pack("!hi", 1, 4) + struct.pack("!i", 1)
    with pytest.raises(psycopg.Error) as ei:
        with conn.cursor().copy(f"copy {t} from stdin (format binary)") as copy:
            copy.write(one_field + struct.pack("!h", -1))
    assert ei.value.sqlstate == "22P04"
    assert ei.value.diag.message_primary == "row field count is 1, expected 2"
    assert conn.execute(f"select count(*) from {t}").fetchone() == (0,)


@pytest.mark.parametrize("sql, sqlstate, message", [
    ("copy {t} to stdout (format binary, header)", "0A000", "cannot specify HEADER in BINARY mode"),
    ("copy {t} to stdout (format binary, null 'x')", "42601", "cannot specify NULL in BINARY mode"),
    ("copy {t} to stdout (quote '''')", "0A000", "COPY quote available only in CSV mode"),
    ("copy {t} to stdout (delimiter 'a')", "22023", "COPY delimiter cannot be \"a\""),
    ("copy {t} (nope) to stdout", "42703", "column \"nope\" of relation \"{t}\" does not exist"),
    ("copy nosuchtable_x to stdout", "42P01", "relation \"nosuchtable_x\" does not exist"),
])
def test_copy_to_errors(conn, typed, sql, sqlstate, message):
    with pytest.raises(psycopg.Error) as ei:
        copy_out(conn, sql.format(t=typed))
    assert ei.value.sqlstate == sqlstate
    assert ei.value.diag.message_primary == message.format(t=typed)


@pytest.mark.steadydb_only
@pytest.mark.parametrize("sql", [
    "copy {t} to '/tmp/steadydb-copy-out'",
    "copy {t} to program 'cat'",
    "copy (delete from {t} returning k) to stdout",
])
def test_copy_to_what_is_not_supported(conn, typed, sql):
    with pytest.raises(psycopg.Error) as ei:
        copy_out(conn, sql.format(t=typed))
    assert ei.value.sqlstate == "0A000"
    assert conn.execute(f"select count(*) from {typed}").fetchone() == (4,)


def test_psql_copy_to_and_from_a_file(db, conn, typed, tmp_path):
    path = tmp_path / "out.csv"
    db.psql(command=f"\\copy {typed} to '{path}' with (format csv, header)")
    t2 = db.table("copy_psql")
    conn.execute(f"create table {t2} (k int primary key, s text, n numeric(10,2), f float8,"
                 " b bool, d date, ts timestamp, raw bytea)")
    db.psql(command=f"\\copy {t2} from '{path}' with (format csv, header)")
    cols = "k, s, n, f::text, b, d, ts, raw"
    assert conn.execute(f"select {cols} from {t2} order by k").fetchall() == \
        conn.execute(f"select {cols} from {typed} order by k").fetchall()
