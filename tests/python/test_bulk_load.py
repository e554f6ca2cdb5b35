"""Bulk loads: COPY into a table created or truncated in the same transaction writes pages,
not log records, and is as durable and as transactional as any other commit."""

from __future__ import annotations

import psycopg
import pytest

from crash_util import nodes  # noqa: F401  (fixture)

pytestmark = pytest.mark.steadydb_only

# Bulk loads write pages beside the log only with wal_level = minimal (no standby could
# replay them).
ROWS = 50_000


def wal_bytes(conn) -> int:
    return int(conn.execute("select wal_bytes from pg_stat_wal").fetchone()[0])


def copy_rows(conn, table: str, first: int, rows: int, width: int = 100) -> None:
    with conn.cursor().copy(f"copy {table} from stdin") as copy:
        for i in range(first, first + rows):
            copy.write_row((i, f"{i:08d}" + "v" * width))


def contents(conn, table: str = "t") -> tuple[int, int, int]:
    return conn.execute(f"select count(*), coalesce(sum(k), 0), coalesce(sum(length(v)), 0) from {table}").fetchone()


def expected(first: int, rows: int, width: int = 100) -> tuple[int, int, int]:
    return (rows, sum(range(first, first + rows)), rows * (8 + width))


@pytest.mark.timeout(180)
def test_truncate_and_copy_writes_pages_not_log_and_survives_a_crash(nodes):
    node = nodes({"wal_level": "minimal"}).start()
    with node.connect() as conn:
        conn.execute("create table t (k int, v text)")
        copy_rows(conn, "t", 1, 1000)
        before = wal_bytes(conn)
        with conn.transaction():
            conn.execute("truncate t")
            copy_rows(conn, "t", 10_001, ROWS)
        logged = wal_bytes(conn) - before
        # The rows are about 5.4 MB; the commit record names pages (16 bytes each).
        assert logged < 200_000, logged
        assert contents(conn) == expected(10_001, ROWS)
        # Committed bulk rows take ordinary changes afterwards.
        conn.execute("update t set v = 'changed' where k = 10001")
        conn.execute("delete from t where k = 10002")
    node.kill()
    node.start()
    with node.connect() as conn:
        count, total, _ = contents(conn)
        assert (count, total) == (ROWS - 1, sum(range(10_001, 10_001 + ROWS)) - 10_002)
        assert conn.execute("select v from t where k = 10001").fetchone() == ("changed",)
        conn.execute("checkpoint")
        conn.execute("insert into t values (1, 'after')")
    # From the checkpoint this time: the load is in its image, not replayed.
    node.kill()
    node.start()
    with node.connect() as conn:
        assert contents(conn)[0] == ROWS
    _, records, _ = node.redo_done()
    assert records == 1, node.log()


@pytest.mark.timeout(120)
def test_a_load_that_fails_or_rolls_back_leaves_nothing(nodes):
    node = nodes({"wal_level": "minimal"}).start()
    with node.connect() as conn:
        conn.execute("create table t (k int primary key, v text)")
        copy_rows(conn, "t", 1, 100)
        # A duplicate key in the load: 23505, and the transaction is gone with the load.
        with pytest.raises(psycopg.errors.UniqueViolation):
            with conn.transaction():
                conn.execute("truncate t")
                with conn.cursor().copy("copy t from stdin") as copy:
                    for i in (5, 6, 7, 6):
                        copy.write_row((i, "dup"))
        assert contents(conn) == expected(1, 100)
        # Rolled back explicitly.
        conn.execute("begin")
        conn.execute("truncate t")
        copy_rows(conn, "t", 1000, 5000)
        conn.execute("rollback")
        assert contents(conn) == expected(1, 100)
        # A table created and loaded in one transaction that rolls back does not exist.
        conn.execute("begin")
        conn.execute("create table u (k int, v text)")
        copy_rows(conn, "u", 1, 5000)
        conn.execute("rollback")
        with pytest.raises(psycopg.errors.UndefinedTable):
            conn.execute("select * from u")
    node.kill()
    node.start()
    with node.connect() as conn:
        assert contents(conn) == expected(1, 100)


@pytest.mark.timeout(120)
def test_the_loading_transaction_reads_its_load_and_others_keep_their_snapshot(nodes):
    node = nodes({"wal_level": "minimal"}).start()
    with node.connect() as conn, node.connect() as reader:
        conn.execute("create table t (k int primary key, v text)")
        copy_rows(conn, "t", 1, 10)
        conn.execute("create table s (k int)")
        # The reader's snapshot, taken without reading t: a transaction block that read t
        # would hold it, and the TRUNCATE below would wait for it, as in PostgreSQL.
        reader.execute("begin isolation level repeatable read")
        reader.execute("select count(*) from s")
        conn.execute("begin")
        conn.execute("create table u (k bigint, v text)")
        copy_rows(conn, "u", 1, 3000)
        conn.execute("truncate t")
        copy_rows(conn, "t", 100, 3000)
        assert contents(conn) == expected(100, 3000)
        assert contents(conn, "u") == expected(1, 3000)
        assert conn.execute("select k from t where k = 2500").fetchone() == (2500,)
        assert conn.execute("select count(*) from t where k between 200 and 299").fetchone() == (100,)
        # Only more COPY may change a loaded table before commit.
        with pytest.raises(psycopg.errors.FeatureNotSupported):
            conn.execute("update t set v = 'x' where k = 100")
        conn.execute("rollback")
        conn.execute("begin")
        conn.execute("truncate t")
        copy_rows(conn, "t", 100, 3000)
        copy_rows(conn, "t", 3100, 10)
        conn.execute("commit")
        assert contents(conn) == expected(100, 3010)
        # The reader's snapshot predates the load: it still sees the old rows (older
        # versions outlive a TRUNCATE for older snapshots; PostgreSQL's TRUNCATE is not
        # MVCC-safe and would show it an empty table).
        assert contents(reader) == expected(1, 10)
        reader.execute("commit")
        assert contents(reader) == expected(100, 3010)


@pytest.mark.timeout(180)
def test_add_primary_key_writes_pages_not_log_and_survives_a_crash(nodes):
    node = nodes({"wal_level": "minimal"}).start()
    keys = list(range(1, ROWS + 1, 2)) + list(range(2, ROWS + 1, 2))
    with node.connect() as conn:
        conn.execute("create table t (k int, v text)")
        # Not in key order: the new tree is not built by appends alone.
        with conn.cursor().copy("copy t from stdin") as copy:
            for i in keys:
                copy.write_row((i, f"{i:08d}" + "v" * 100))
        conn.execute("update t set v = 'changed' where k = 7")
        before = wal_bytes(conn)
        conn.execute("alter table t add primary key (k)")
        logged = wal_bytes(conn) - before
        # The rows are about 5.4 MB again; the record names the new tree's pages.
        assert logged < 200_000, logged
        assert contents(conn)[:2] == (ROWS, sum(keys))
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute("insert into t values (3, 'dup')")
    # Replayed from the log: the record's pages are taken back, not rebuilt.
    node.kill()
    node.start()
    with node.connect() as conn:
        assert contents(conn)[:2] == (ROWS, sum(keys))
        assert conn.execute("select v from t where k = 7").fetchone() == ("changed",)
        assert conn.execute("select k from t order by k limit 3").fetchall() == [(1,), (2,), (3,)]
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute("insert into t values (%s, 'dup')", (ROWS,))
        conn.execute(f"insert into t values ({ROWS + 1}, 'new')")
        conn.execute("checkpoint")
    node.kill()
    node.start()
    with node.connect() as conn:
        assert contents(conn)[:2] == (ROWS + 1, sum(keys) + ROWS + 1)
        assert conn.execute("select v from t where k = %s", (ROWS + 1,)).fetchone() == ("new",)


@pytest.mark.timeout(180)
def test_char_columns_read_back_padded_from_pages_and_from_the_log(nodes):
    """char(n) values are stored without their trailing blanks (in pages and in log
    records) and read back padded, however the row reached storage."""
    node = nodes({"wal_level": "minimal"}).start()
    with node.connect() as conn:
        with conn.transaction():
            conn.execute("create table c (k int primary key, f char(84), s char(3))")
            with conn.cursor().copy("copy c (k, s) from stdin") as copy:
                for i in range(1, 2001):
                    copy.write_row((i, "é"))
        conn.execute("update c set f = 'x' where k = 1")
        conn.execute("insert into c values (5000, 'héllo ', '')")

    def check(conn):
        rows = conn.execute("select k, f, s from c where k in (1, 2, 5000) order by k").fetchall()
        assert rows == [
            (1, "x" + " " * 83, "é  "),
            (2, None, "é  "),
            (5000, "héllo" + " " * 79, "   "),
        ]
        assert conn.execute("select count(*), sum(octet_length(s)) from c").fetchone() == (2001, 2000 * 4 + 3)

    with node.connect() as conn:
        check(conn)
    node.kill()  # the update and the insert come back from the log
    node.start()
    with node.connect() as conn:
        check(conn)
        conn.execute("checkpoint")
    node.kill()  # and now from the checkpoint's pages
    node.start()
    with node.connect() as conn:
        check(conn)
