"""Transaction features as PostgreSQL 15 implements them: transaction control commands
(command tags, warnings, errors), SET TRANSACTION, read-only transactions, savepoints,
lock_timeout / statement_timeout, row-level locking clauses, COMMIT/ROLLBACK AND CHAIN,
transactional DDL and SERIALIZABLE.

Every expectation was checked against PostgreSQL 15 (``STEADYDB_TEST_EXTERNAL``).
Statements that may block run in a background thread (``Bg``) with a bounded wait, and
the module has a per-test time limit, so a hang fails the test instead of the run.
"""

from __future__ import annotations

import os
import time

import psycopg
import pytest

# The known differences from PostgreSQL are expected failures on SteadyDB only: against an
# external server (PostgreSQL itself) the same tests must pass.
from psycopg.pq import TransactionStatus

from test_isolation import FINISH, Bg, q, val

pytestmark = pytest.mark.timeout(60)

BLOCK_CHECK = 0.5  # how long a statement must stay blocked to count as "waiting"
QUICK = 5.0  # how long a statement that must not wait may take
RW_CONFLICT = "could not serialize access due to read/write dependencies among transactions"


# --------------------------------------------------------------------- helpers


def error_of(conn: psycopg.Connection, sql: str, params=None) -> psycopg.Error:
    """Run ``sql`` on the calling thread and return the error it must raise."""
    with pytest.raises(psycopg.Error) as ei:
        conn.execute(sql, params)
    return ei.value


def assert_error(err: BaseException | None, sqlstate: str, message: str | None = None) -> None:
    assert isinstance(err, psycopg.Error), f"expected SQLSTATE {sqlstate}, got {err!r}"
    assert err.sqlstate == sqlstate, f"expected SQLSTATE {sqlstate}, got {err.sqlstate}: {err}"
    if message is not None:
        assert err.diag.message_primary == message


def fails(conn: psycopg.Connection, sql: str, sqlstate: str, message: str | None = None) -> None:
    assert_error(error_of(conn, sql), sqlstate, message)


def tag(conn: psycopg.Connection, sql: str) -> str | None:
    """The command tag of ``sql`` (CommandComplete), e.g. ``'START TRANSACTION'``."""
    return conn.execute(sql).statusmessage


def collect_notices(conn: psycopg.Connection) -> list[tuple[str, str, str]]:
    """Record (severity, sqlstate, message) of every notice the server sends on ``conn``.

    The Diagnostic object is only valid inside the callback, so its fields are copied."""
    got: list[tuple[str, str, str]] = []
    conn.add_notice_handler(
        lambda d: got.append((d.severity_nonlocalized, d.sqlstate, d.message_primary))
    )
    return got


def read_only_error(command: str) -> str:
    return f"cannot execute {command} in a read-only transaction"


def status(conn: psycopg.Connection) -> TransactionStatus:
    return conn.info.transaction_status


def quick(conn: psycopg.Connection, sql: str, params=None):
    """Run a statement that must not wait on a lock; its rows (or None)."""
    return Bg(conn, sql, params).ok(timeout=QUICK)


def blocked(conn: psycopg.Connection, sql: str) -> Bg:
    """Start ``sql`` in the background and check that it waits."""
    bg = Bg(conn, sql)
    assert bg.still_blocked(BLOCK_CHECK), f"{sql!r} did not wait: {bg.error or bg.result!r}"
    return bg


@pytest.fixture
def kv(db):
    """A table kv(id int primary key, v int) with rows (1,10), (2,20), (3,30)."""
    t = db.table("kv")
    with db.connect() as c:
        c.execute(f"create table {t} (id int primary key, v int)")
        c.execute(f"insert into {t} values (1, 10), (2, 20), (3, 30)")
    return t


@pytest.fixture
def two(db):
    return db.connect(), db.connect()


def rows(conn, t):
    return q(conn, f"select id, v from {t} order by id")


# --------------------------------------------------- BEGIN / COMMIT / ROLLBACK


def test_start_transaction_command_tag(conn):
    """START TRANSACTION answers with the command tag START TRANSACTION; BEGIN with BEGIN."""
    assert tag(conn, "start transaction") == "START TRANSACTION"
    assert status(conn) == TransactionStatus.INTRANS
    assert tag(conn, "commit") == "COMMIT"
    assert tag(conn, "begin") == "BEGIN"
    assert tag(conn, "rollback") == "ROLLBACK"
    assert tag(conn, "begin work") == "BEGIN"
    assert tag(conn, "end") == "COMMIT"  # END is COMMIT
    assert tag(conn, "start transaction") == "START TRANSACTION"
    assert tag(conn, "abort") == "ROLLBACK"  # ABORT is ROLLBACK
    assert status(conn) == TransactionStatus.IDLE


@pytest.mark.parametrize(
    "start, expected_tag, isolation, read_only",
    [
        ("begin isolation level repeatable read", "BEGIN", "repeatable read", "off"),
        ("start transaction read only", "START TRANSACTION", "read committed", "on"),
        ("begin read write", "BEGIN", "read committed", "off"),
        ("begin isolation level serializable", "BEGIN", "serializable", "off"),
        ("begin isolation level read uncommitted", "BEGIN", "read uncommitted", "off"),
        (
            "start transaction isolation level repeatable read, read only",
            "START TRANSACTION",
            "repeatable read",
            "on",
        ),
        ("begin transaction read only isolation level serializable", "BEGIN", "serializable", "on"),
    ],
)
def test_begin_with_transaction_modes(conn, start, expected_tag, isolation, read_only):
    """BEGIN / START TRANSACTION with modes: SHOW transaction_isolation and
    transaction_read_only report them inside the transaction (PostgreSQL shows
    'read uncommitted' as given, though it behaves as read committed), and the
    session defaults come back after COMMIT."""
    assert tag(conn, start) == expected_tag
    assert val(conn, "show transaction_isolation") == isolation
    assert val(conn, "show transaction_read_only") == read_only
    assert val(conn, "select 1") == 1
    assert tag(conn, "commit") == "COMMIT"
    assert val(conn, "show transaction_isolation") == "read committed"
    assert val(conn, "show transaction_read_only") == "off"


def test_begin_inside_transaction_warns_25001(db, conn, kv):
    """BEGIN inside a transaction: WARNING 25001 'there is already a transaction in progress',
    tag BEGIN, and the transaction goes on (one COMMIT ends it)."""
    notices = collect_notices(conn)
    conn.execute("begin")
    conn.execute(f"insert into {kv} values (4, 40)")
    assert notices == []
    assert tag(conn, "begin") == "BEGIN"
    assert notices == [("WARNING", "25001", "there is already a transaction in progress")]
    assert status(conn) == TransactionStatus.INTRANS
    other = db.connect()
    assert quick(other, f"select count(*) from {kv}") == [(3,)], "the second BEGIN committed"
    conn.execute("start transaction")
    assert notices[-1] == ("WARNING", "25001", "there is already a transaction in progress")
    assert tag(conn, "commit") == "COMMIT"
    assert status(conn) == TransactionStatus.IDLE
    assert quick(other, f"select count(*) from {kv}") == [(4,)]
    assert len(notices) == 2


@pytest.mark.parametrize(
    "command, expected_tag",
    [("commit", "COMMIT"), ("rollback", "ROLLBACK"), ("end", "COMMIT"), ("abort", "ROLLBACK")],
)
def test_commit_or_rollback_outside_transaction_warns_25p01(conn, command, expected_tag):
    """COMMIT / ROLLBACK (END / ABORT) outside a transaction: WARNING 25P01 'there is no
    transaction in progress', the usual command tag, no error."""
    notices = collect_notices(conn)
    assert tag(conn, command) == expected_tag
    assert notices == [("WARNING", "25P01", "there is no transaction in progress")]
    assert status(conn) == TransactionStatus.IDLE
    assert val(conn, "select 1") == 1


def test_transaction_warnings_in_psql(db):
    """psql prints the server's warnings for a nested BEGIN and a stray COMMIT on stderr."""
    res = db.psql("begin;\nbegin;\ncommit;\ncommit;\nrollback;\n")
    assert res.stdout.split() == ["BEGIN", "BEGIN", "COMMIT", "COMMIT", "ROLLBACK"]
    warnings = [line for line in res.stderr.splitlines() if line.startswith("WARNING:")]
    assert warnings == [
        "WARNING:  there is already a transaction in progress",
        "WARNING:  there is no transaction in progress",
        "WARNING:  there is no transaction in progress",
    ], res.stderr


def test_commit_of_failed_transaction_reports_rollback(db, conn, kv):
    """COMMIT of a transaction that had an error rolls it back and answers with tag ROLLBACK;
    statements before that are ignored with 25P02."""
    conn.execute("begin")
    conn.execute(f"insert into {kv} values (4, 40)")
    fails(conn, "select 1/0", "22012", "division by zero")
    assert status(conn) == TransactionStatus.INERROR
    fails(
        conn,
        "select 1",
        "25P02",
        "current transaction is aborted, commands ignored until end of transaction block",
    )
    assert tag(conn, "commit") == "ROLLBACK"
    assert status(conn) == TransactionStatus.IDLE
    assert val(conn, f"select count(*) from {kv}") == 3


# ------------------------------------------------------------- SET TRANSACTION


def test_set_transaction_isolation_after_first_query_fails_25001(conn):
    """SET TRANSACTION ISOLATION LEVEL (to another level) after the transaction's first query:
    ERROR 25001 'SET TRANSACTION ISOLATION LEVEL must be called before any query', and the
    transaction is aborted."""
    conn.execute("begin")
    assert val(conn, "select 1") == 1
    fails(
        conn,
        "set transaction isolation level repeatable read",
        "25001",
        "SET TRANSACTION ISOLATION LEVEL must be called before any query",
    )
    assert status(conn) == TransactionStatus.INERROR
    fails(conn, "show transaction_isolation", "25P02")
    conn.execute("rollback")
    conn.execute("begin isolation level repeatable read")
    assert val(conn, "select 1") == 1
    fails(
        conn,
        "set transaction isolation level read committed",
        "25001",
        "SET TRANSACTION ISOLATION LEVEL must be called before any query",
    )
    conn.execute("rollback")


def test_set_transaction_same_isolation_after_first_query_is_allowed(conn):
    """PostgreSQL only rejects a *change* of isolation level after the first query:
    setting the level the transaction already has succeeds (tag SET)."""
    conn.execute("begin isolation level repeatable read")
    assert val(conn, "select 1") == 1
    assert tag(conn, "set transaction isolation level repeatable read") == "SET"
    assert val(conn, "show transaction_isolation") == "repeatable read"
    conn.execute("commit")


def test_set_transaction_isolation_before_first_query(kv, two):
    """SET TRANSACTION ISOLATION LEVEL right after BEGIN is accepted (tag SET), may be
    repeated, SHOW transaction_isolation reflects it, and the level is really used: a
    REPEATABLE READ transaction keeps its snapshot."""
    a, b = two
    a.execute("begin")
    assert tag(a, "set transaction isolation level repeatable read") == "SET"
    assert val(a, "show transaction_isolation") == "repeatable read"
    assert tag(a, "set transaction isolation level read committed") == "SET"
    assert val(a, "show transaction_isolation") == "read committed"
    assert tag(a, "set transaction isolation level repeatable read") == "SET"
    assert val(a, "show transaction_isolation") == "repeatable read"
    assert val(a, f"select v from {kv} where id = 1") == 10
    quick(b, f"update {kv} set v = 11 where id = 1")
    assert val(a, f"select v from {kv} where id = 1") == 10  # snapshot kept
    a.execute("commit")
    assert val(a, "show transaction_isolation") == "read committed"
    assert val(a, f"select v from {kv} where id = 1") == 11


def test_set_transaction_outside_transaction_warns_25p01(conn):
    """SET TRANSACTION outside a transaction block: WARNING 25P01 'SET TRANSACTION can only
    be used in transaction blocks', tag SET, and it has no effect on the next transaction."""
    notices = collect_notices(conn)
    assert tag(conn, "set transaction isolation level repeatable read") == "SET"
    assert notices == [
        ("WARNING", "25P01", "SET TRANSACTION can only be used in transaction blocks")
    ]
    conn.execute("begin")
    assert val(conn, "show transaction_isolation") == "read committed"
    conn.execute("commit")


def test_default_transaction_isolation(kv, two):
    """SET default_transaction_isolation = 'repeatable read': later transactions (and SHOW
    transaction_isolation outside one) use that level, until it is set back."""
    a, b = two
    assert tag(a, "set default_transaction_isolation = 'repeatable read'") == "SET"
    assert val(a, "show default_transaction_isolation") == "repeatable read"
    assert val(a, "show transaction_isolation") == "repeatable read"
    a.execute("begin")
    assert val(a, "show transaction_isolation") == "repeatable read"
    assert val(a, f"select v from {kv} where id = 1") == 10
    quick(b, f"update {kv} set v = 11 where id = 1")
    assert val(a, f"select v from {kv} where id = 1") == 10  # snapshot kept
    a.execute("commit")
    a.execute("set default_transaction_isolation = 'read committed'")
    assert val(a, "show transaction_isolation") == "read committed"


def test_session_characteristics_set_the_default(conn):
    """SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL sets
    default_transaction_isolation, which every later transaction starts with."""
    sql = "set session characteristics as transaction isolation level repeatable read"
    assert tag(conn, sql) == "SET"
    assert val(conn, "show default_transaction_isolation") == "repeatable read"
    conn.execute("begin")
    assert val(conn, "show transaction_isolation") == "repeatable read"
    conn.execute("commit")
    conn.execute("set session characteristics as transaction isolation level read committed")
    assert val(conn, "show default_transaction_isolation") == "read committed"


# ------------------------------------------------------------------- READ ONLY


@pytest.mark.parametrize(
    "stmt, command",
    [
        ("insert into {t} values (4, 40)", "INSERT"),
        ("update {t} set v = 0 where id = 1", "UPDATE"),
        ("delete from {t} where id = 1", "DELETE"),
        ("create table {new} (a int)", "CREATE TABLE"),
        ("drop table {t}", "DROP TABLE"),
        ("truncate {t}", "TRUNCATE TABLE"),
        ("select * from {t} for update", "SELECT FOR UPDATE"),
        ("select * from {t} for share", "SELECT FOR SHARE"),
    ],
)
def test_read_only_transaction_rejects_writes_25006(db, conn, kv, stmt, command):
    """In BEGIN READ ONLY every write (and a row-locking SELECT) fails with 25006
    'cannot execute <COMMAND> in a read-only transaction'; nothing changes."""
    new = db.table("ro_new")
    conn.execute("begin read only")
    assert val(conn, "show transaction_read_only") == "on"
    fails(
        conn,
        stmt.format(t=kv, new=new),
        "25006",
        read_only_error(command),
    )
    conn.execute("rollback")
    assert rows(conn, kv) == [(1, 10), (2, 20), (3, 30)]
    fails(conn, f"select * from {new}", "42P01", f'relation "{new}" does not exist')


def test_read_only_transaction_allows_reads(conn, kv):
    """A READ ONLY transaction runs SELECTs (and plain SELECT ... FOR UPDATE without a
    table) and commits normally."""
    assert tag(conn, "begin read only") == "BEGIN"
    assert rows(conn, kv) == [(1, 10), (2, 20), (3, 30)]
    assert val(conn, f"select sum(v) from {kv} where id > 1") == 50
    assert tag(conn, "commit") == "COMMIT"
    assert val(conn, "show transaction_read_only") == "off"


def test_set_transaction_read_only(conn, kv):
    """SET TRANSACTION READ ONLY inside a transaction, even after a write and a query, makes
    the rest of it read only (25006); the earlier write still commits."""
    conn.execute("begin")
    conn.execute(f"insert into {kv} values (4, 40)")
    assert val(conn, "show transaction_read_only") == "off"
    assert tag(conn, "set transaction read only") == "SET"
    assert val(conn, "show transaction_read_only") == "on"
    fails(conn, f"update {kv} set v = 0", "25006", read_only_error("UPDATE"))
    conn.execute("rollback")
    conn.execute("begin")
    conn.execute(f"insert into {kv} values (4, 40)")
    conn.execute("set transaction read only")
    assert val(conn, f"select count(*) from {kv}") == 4
    conn.execute("commit")
    assert val(conn, f"select count(*) from {kv}") == 4


def test_set_transaction_read_write_after_query_fails_25001(conn, kv):
    """In a read-only transaction, SET TRANSACTION READ WRITE after the first query fails with
    25001 'transaction read-write mode must be set before any query'; before any query it
    is allowed and writes work."""
    conn.execute("begin read only")
    assert val(conn, f"select count(*) from {kv}") == 3
    assert tag(conn, "set transaction read only") == "SET"  # no change: allowed
    fails(
        conn,
        "set transaction read write",
        "25001",
        "transaction read-write mode must be set before any query",
    )
    conn.execute("rollback")
    conn.execute("begin read only")
    assert tag(conn, "set transaction read write") == "SET"
    assert val(conn, "show transaction_read_only") == "off"
    conn.execute(f"insert into {kv} values (4, 40)")
    conn.execute("commit")
    assert val(conn, f"select count(*) from {kv}") == 4


def test_default_transaction_read_only(conn, kv):
    """SET default_transaction_read_only = on: autocommit writes fail with 25006, reads work,
    BEGIN READ WRITE overrides it for one transaction; setting it off again restores writes."""
    assert tag(conn, "set default_transaction_read_only = on") == "SET"
    assert val(conn, "show transaction_read_only") == "on"
    fails(conn, f"insert into {kv} values (4, 40)", "25006", read_only_error("INSERT"))
    assert val(conn, f"select count(*) from {kv}") == 3
    conn.execute("begin")
    assert val(conn, "show transaction_read_only") == "on"
    fails(conn, f"delete from {kv}", "25006", read_only_error("DELETE"))
    conn.execute("rollback")
    conn.execute("begin read write")
    assert val(conn, "show transaction_read_only") == "off"
    conn.execute(f"insert into {kv} values (4, 40)")
    conn.execute("commit")
    assert val(conn, "show transaction_read_only") == "on"
    conn.execute("set default_transaction_read_only = off")
    assert val(conn, "show transaction_read_only") == "off"
    conn.execute(f"insert into {kv} values (5, 50)")
    assert val(conn, f"select count(*) from {kv}") == 5


# ------------------------------------------------------------------ savepoints


def test_rollback_to_savepoint_undoes_later_changes(conn, kv):
    """ROLLBACK TO SAVEPOINT undoes the inserts, updates and deletes made after the savepoint
    and keeps those before it; tags SAVEPOINT / ROLLBACK / RELEASE."""
    conn.execute("begin")
    conn.execute(f"insert into {kv} values (4, 40)")
    assert tag(conn, "savepoint s1") == "SAVEPOINT"
    conn.execute(f"insert into {kv} values (5, 50)")
    conn.execute(f"update {kv} set v = v + 1 where id in (1, 4)")
    conn.execute(f"delete from {kv} where id = 2")
    assert rows(conn, kv) == [(1, 11), (3, 30), (4, 41), (5, 50)]
    assert tag(conn, "rollback to savepoint s1") == "ROLLBACK"
    assert status(conn) == TransactionStatus.INTRANS
    assert rows(conn, kv) == [(1, 10), (2, 20), (3, 30), (4, 40)]
    conn.execute(f"update {kv} set v = 0 where id = 3")
    assert tag(conn, "release savepoint s1") == "RELEASE"
    assert tag(conn, "commit") == "COMMIT"
    assert rows(conn, kv) == [(1, 10), (2, 20), (3, 0), (4, 40)]


def test_savepoint_can_be_rolled_back_to_repeatedly(conn, kv):
    """After ROLLBACK TO the savepoint still exists: it can be rolled back to again. The short
    forms ROLLBACK TO name and RELEASE name work too."""
    conn.execute("begin")
    conn.execute("savepoint s")
    conn.execute(f"delete from {kv}")
    conn.execute("rollback to s")
    assert val(conn, f"select count(*) from {kv}") == 3
    conn.execute(f"update {kv} set v = -1")
    assert tag(conn, "rollback to s") == "ROLLBACK"
    assert val(conn, f"select sum(v) from {kv}") == 60
    assert tag(conn, "release s") == "RELEASE"
    fails(conn, "rollback to s", "3B001", 'savepoint "s" does not exist')
    conn.execute("rollback")


def test_nested_savepoints(conn, kv):
    """Nested savepoints: ROLLBACK TO the inner one keeps the outer one's changes; ROLLBACK TO
    the outer one undoes both and destroys the inner savepoint; RELEASE of the outer one
    releases the inner one too."""
    conn.execute("begin")
    conn.execute("savepoint a")
    conn.execute(f"insert into {kv} values (4, 40)")
    conn.execute("savepoint b")
    conn.execute(f"insert into {kv} values (5, 50)")
    conn.execute("savepoint c")
    conn.execute(f"insert into {kv} values (6, 60)")
    conn.execute("rollback to savepoint b")
    assert [r[0] for r in rows(conn, kv)] == [1, 2, 3, 4]
    conn.execute(f"insert into {kv} values (7, 70)")
    conn.execute("rollback to savepoint a")
    assert [r[0] for r in rows(conn, kv)] == [1, 2, 3]
    fails(conn, "release savepoint b", "3B001", 'savepoint "b" does not exist')
    conn.execute("rollback")

    conn.execute("begin")
    conn.execute("savepoint a")
    conn.execute(f"insert into {kv} values (4, 40)")
    conn.execute("savepoint b")
    conn.execute(f"insert into {kv} values (5, 50)")
    conn.execute("release savepoint a")  # releases b as well, keeps the changes
    fails(conn, "rollback to savepoint b", "3B001", 'savepoint "b" does not exist')
    conn.execute("rollback")
    conn.execute("begin")
    conn.execute("savepoint a")
    conn.execute(f"insert into {kv} values (4, 40)")
    conn.execute("savepoint b")
    conn.execute(f"insert into {kv} values (5, 50)")
    conn.execute("release savepoint a")
    conn.execute("commit")
    assert [r[0] for r in rows(conn, kv)] == [1, 2, 3, 4, 5]


def test_same_savepoint_name_twice_innermost_wins(conn, kv):
    """PostgreSQL docs (SAVEPOINT): with two savepoints of the same name, ROLLBACK TO and
    RELEASE act on the newer one; after releasing it the older one is reachable again."""
    conn.execute("begin")
    conn.execute(f"delete from {kv}")
    conn.execute(f"insert into {kv} values (1, 1)")
    conn.execute("savepoint my_savepoint")
    conn.execute(f"insert into {kv} values (2, 2)")
    conn.execute("savepoint my_savepoint")
    conn.execute(f"insert into {kv} values (3, 3)")
    conn.execute("rollback to savepoint my_savepoint")
    assert rows(conn, kv) == [(1, 1), (2, 2)]
    conn.execute("release savepoint my_savepoint")
    conn.execute("rollback to savepoint my_savepoint")
    assert rows(conn, kv) == [(1, 1)]
    conn.execute("commit")
    assert rows(conn, kv) == [(1, 1)]


def test_rollback_to_savepoint_recovers_failed_transaction(conn, kv):
    """An error after a savepoint aborts the transaction (25P02 for everything but
    ROLLBACK [TO]); ROLLBACK TO SAVEPOINT recovers it, and the work before the savepoint
    commits."""
    conn.execute("begin")
    conn.execute(f"insert into {kv} values (4, 40)")
    conn.execute("savepoint s")
    conn.execute(f"insert into {kv} values (5, 50)")
    fails(conn, f"insert into {kv} values (1, 0)", "23505")
    assert status(conn) == TransactionStatus.INERROR
    fails(
        conn,
        f"select count(*) from {kv}",
        "25P02",
        "current transaction is aborted, commands ignored until end of transaction block",
    )
    fails(conn, "savepoint t", "25P02")
    fails(conn, "release savepoint s", "25P02")
    assert tag(conn, "rollback to savepoint s") == "ROLLBACK"
    assert status(conn) == TransactionStatus.INTRANS
    assert [r[0] for r in rows(conn, kv)] == [1, 2, 3, 4]
    conn.execute(f"insert into {kv} values (6, 60)")
    assert tag(conn, "commit") == "COMMIT"
    assert [r[0] for r in rows(conn, kv)] == [1, 2, 3, 4, 6]


def test_error_without_savepoint_cannot_be_recovered(conn, kv):
    """Without a savepoint set before the error there is nothing to roll back to: ROLLBACK TO
    an unknown name in a failed transaction fails with 3B001 and COMMIT rolls back."""
    conn.execute("begin")
    conn.execute(f"insert into {kv} values (4, 40)")
    fails(conn, "select 1/0", "22012")
    fails(conn, "rollback to savepoint s", "3B001", 'savepoint "s" does not exist')
    assert tag(conn, "commit") == "ROLLBACK"
    assert val(conn, f"select count(*) from {kv}") == 3


@pytest.mark.parametrize("stmt", ["release savepoint x", "rollback to savepoint x"])
def test_unknown_savepoint_fails_3b001(conn, kv, stmt):
    """RELEASE / ROLLBACK TO of a savepoint that does not exist: ERROR 3B001
    'savepoint "x" does not exist', and the transaction is aborted."""
    conn.execute("begin")
    conn.execute("savepoint y")
    conn.execute(f"insert into {kv} values (4, 40)")
    fails(conn, stmt, "3B001", 'savepoint "x" does not exist')
    assert status(conn) == TransactionStatus.INERROR
    fails(conn, "select 1", "25P02")
    conn.execute("rollback")
    assert val(conn, f"select count(*) from {kv}") == 3


@pytest.mark.parametrize(
    "stmt, message",
    [
        ("savepoint x", "SAVEPOINT can only be used in transaction blocks"),
        ("release savepoint x", "RELEASE SAVEPOINT can only be used in transaction blocks"),
        ("rollback to savepoint x", "ROLLBACK TO SAVEPOINT can only be used in transaction blocks"),
    ],
)
def test_savepoint_commands_outside_transaction_fail_25p01(conn, stmt, message):
    """SAVEPOINT, RELEASE SAVEPOINT and ROLLBACK TO SAVEPOINT outside a transaction block:
    ERROR 25P01 '<command> can only be used in transaction blocks'."""
    fails(conn, stmt, "25P01", message)
    assert status(conn) == TransactionStatus.IDLE
    assert val(conn, "select 1") == 1


@pytest.mark.parametrize(
    "locking",
    ["update {t} set v = v + 1 where id = 1", "select v from {t} where id = 1 for update"],
)
def test_rollback_to_savepoint_releases_row_locks(kv, two, locking):
    """Row locks taken after a savepoint (by UPDATE or SELECT FOR UPDATE) are released by
    ROLLBACK TO SAVEPOINT: another session's UPDATE waiting on the row proceeds at once,
    while the locks taken before the savepoint are kept."""
    a, b = two
    a.execute("begin")
    a.execute(f"update {kv} set v = v + 1 where id = 2")
    a.execute("savepoint s")
    a.execute(locking.format(t=kv))
    bg = blocked(b, f"update {kv} set v = v * 100 where id = 1 returning v")
    a.execute("rollback to savepoint s")
    assert bg.ok() == [(1000,)]
    blocked2 = blocked(b, f"update {kv} set v = 0 where id = 2")
    a.execute("commit")
    blocked2.ok()
    assert rows(a, kv) == [(1, 1000), (2, 0), (3, 30)]


def test_psycopg_nested_transaction_blocks(db, kv):
    """psycopg's nested `with conn.transaction()` blocks use SAVEPOINT / RELEASE SAVEPOINT /
    ROLLBACK TO SAVEPOINT: an exception in the inner block rolls back only the inner block,
    the outer block commits."""
    conn = db.connect()
    with conn.transaction():
        conn.execute(f"insert into {kv} values (4, 40)")
        with conn.transaction():
            conn.execute(f"insert into {kv} values (5, 50)")
        with pytest.raises(ZeroDivisionError):
            with conn.transaction():
                conn.execute(f"insert into {kv} values (6, 60)")
                raise ZeroDivisionError("application error")
        with pytest.raises(psycopg.errors.UniqueViolation):
            with conn.transaction():
                conn.execute(f"insert into {kv} values (7, 70)")
                conn.execute(f"insert into {kv} values (1, 0)")
        with conn.transaction():
            conn.execute(f"insert into {kv} values (8, 80)")
            with conn.transaction():
                conn.execute(f"insert into {kv} values (9, 90)")
                raise psycopg.Rollback()  # rolls back only this block, silently
        assert status(conn) == TransactionStatus.INTRANS
    assert status(conn) == TransactionStatus.IDLE
    assert [r[0] for r in rows(conn, kv)] == [1, 2, 3, 4, 5, 8]


def test_psycopg_outer_transaction_block_rolls_back_everything(db, kv):
    """An exception in the outer `with conn.transaction()` block rolls back the inner,
    already released, savepoint blocks too."""
    conn = db.connect()
    with pytest.raises(RuntimeError):
        with conn.transaction():
            with conn.transaction():
                conn.execute(f"insert into {kv} values (4, 40)")
            conn.execute(f"update {kv} set v = 0")
            raise RuntimeError("boom")
    assert rows(conn, kv) == [(1, 10), (2, 20), (3, 30)]


# -------------------------------------------- lock_timeout / statement_timeout


def test_lock_timeout_55p03(kv, two):
    """SET lock_timeout = '100ms': an UPDATE waiting for another session's row lock fails
    with 55P03 'canceling statement due to lock timeout'; inside a transaction block the
    transaction is then aborted."""
    a, b = two
    a.execute("begin")
    a.execute(f"update {kv} set v = 0 where id = 1")
    assert tag(b, "set lock_timeout = '100ms'") == "SET"
    assert val(b, "show lock_timeout") == "100ms"
    start = time.monotonic()
    bg = Bg(b, f"update {kv} set v = v + 1 where id = 1")
    bg.wait(QUICK)
    assert_error(bg.error, "55P03", "canceling statement due to lock timeout")
    assert time.monotonic() - start < QUICK
    assert val(b, "select 1") == 1  # autocommit: usable at once
    b.execute("begin")
    bg = Bg(b, f"select * from {kv} where id = 1 for update")
    bg.wait(QUICK)
    assert_error(bg.error, "55P03", "canceling statement due to lock timeout")
    fails(b, "select 1", "25P02")
    b.execute("rollback")
    # rows not locked by a are not affected by the timeout
    assert quick(b, f"update {kv} set v = v + 1 where id = 2 returning v") == [(21,)]
    a.execute("rollback")
    assert rows(b, kv) == [(1, 10), (2, 21), (3, 30)]


def test_lock_timeout_on_table_lock(kv, two):
    """lock_timeout also ends a wait for a table lock (a SELECT behind another session's
    uncommitted DROP TABLE): 55P03."""
    a, b = two
    a.execute("begin")
    a.execute(f"drop table {kv}")
    b.execute("set lock_timeout = '100ms'")
    bg = Bg(b, f"select * from {kv}")
    bg.wait(QUICK)
    assert_error(bg.error, "55P03", "canceling statement due to lock timeout")
    a.execute("rollback")
    assert quick(b, f"select count(*) from {kv}") == [(3,)]


@pytest.mark.parametrize("ddl", ["drop table {t}", "truncate {t}"])
@pytest.mark.parametrize("isolation", ["read committed", "repeatable read"])
def test_table_read_in_a_block_holds_off_drop_and_truncate(kv, two, ddl, isolation):
    """A transaction block that read a table holds it (PostgreSQL's ACCESS SHARE lock)
    until it ends: a DROP TABLE or TRUNCATE elsewhere waits, and the block keeps reading
    the table as it was."""
    a, b = two
    b.execute(f"begin isolation level {isolation}")
    assert val(b, f"select count(*) from {kv}") == 3
    bg = blocked(a, ddl.format(t=kv))
    assert val(b, f"select count(*) from {kv}") == 3
    b.execute("commit")
    bg.ok()
    if ddl.startswith("truncate"):
        assert quick(b, f"select count(*) from {kv}") == [(0,)]
    else:
        assert_error(error_of(b, f"select count(*) from {kv}"), "42P01")


def test_lone_select_does_not_hold_the_table(kv, two):
    """Outside a block, a finished SELECT holds nothing: a DROP TABLE goes ahead."""
    a, b = two
    assert val(b, f"select count(*) from {kv}") == 3
    quick(a, f"drop table {kv}")


def test_statement_timeout_57014(kv, two):
    """SET statement_timeout = '200ms': an UPDATE blocked on another session's row lock is
    canceled with 57014 'canceling statement due to statement timeout'; a fast statement
    is unaffected."""
    a, b = two
    a.execute("begin")
    a.execute(f"update {kv} set v = 0 where id = 3")
    assert tag(b, "set statement_timeout = '200ms'") == "SET"
    assert val(b, "show statement_timeout") == "200ms"
    start = time.monotonic()
    bg = Bg(b, f"update {kv} set v = v + 1 where id = 3")
    bg.wait(QUICK)
    assert_error(bg.error, "57014", "canceling statement due to statement timeout")
    assert time.monotonic() - start < QUICK
    assert val(b, f"select count(*) from {kv}") == 3
    a.execute("commit")
    assert quick(b, f"update {kv} set v = v + 1 where id = 3 returning v") == [(1,)]
    b.execute("set statement_timeout = 0")


def test_a_long_statement_holds_up_no_other_connection(db):
    """While one connection runs a statement that would take many minutes, every other
    connection (more of them than the machine has cores, so some share its thread) still
    answers; then a CancelRequest stops the long statement with 57014."""
    others = [db.connect() for _ in range(min(2 * (os.cpu_count() or 2) + 1, 40))]
    long_conn = db.connect()
    pid = val(long_conn, "select pg_backend_pid()")
    long = Bg(long_conn, "select count(*) from generate_series(1, 100000) a, "
                         "generate_series(1, 100000) b")
    watcher = others[0]
    deadline = time.monotonic() + FINISH
    while val(watcher, f"select state from pg_stat_activity where pid = {pid}") != "active":
        assert time.monotonic() < deadline, "the long statement never started"
        time.sleep(0.01)
    answers = [Bg(c, "select 1") for c in others]
    for a in answers:
        assert a.ok() == [(1,)]
    assert not long.done.is_set()
    long_conn.cancel()
    assert_error(long.wait().error, "57014", "canceling statement due to user request")
    for c in others + [long_conn]:
        c.close()


# ------------------------------------------------------------- row-level locks


def test_for_update_blocks_update_until_commit(kv, two):
    """SELECT ... FOR UPDATE blocks another session's UPDATE of the row until the locker
    commits; other rows stay writable."""
    a, b = two
    a.execute("begin")
    assert q(a, f"select v from {kv} where id = 1 for update") == [(10,)]
    assert quick(b, f"update {kv} set v = v + 1 where id = 2 returning v") == [(21,)]
    bg = blocked(b, f"update {kv} set v = v + 1 where id = 1 returning v")
    a.execute("commit")
    assert bg.ok() == [(11,)]


def test_for_update_blocks_for_update_and_sees_new_version(kv, two):
    """A second SELECT ... FOR UPDATE of a row locked by an UPDATE waits, and at READ
    COMMITTED returns the row version committed by the lock holder."""
    a, b = two
    a.execute("begin")
    a.execute(f"update {kv} set v = 100 where id = 1")
    b.execute("begin")
    bg = blocked(b, f"select v from {kv} where id = 1 for update")
    a.execute("commit")
    assert bg.ok() == [(100,)]
    # now b holds the lock: a's FOR UPDATE waits for b
    bg2 = blocked(a, f"select v from {kv} where id = 1 for update")
    b.execute("rollback")
    assert bg2.ok() == [(100,)]


def test_for_update_of_row_deleted_by_lock_holder_returns_nothing(kv, two):
    """At READ COMMITTED, a FOR UPDATE waiting on a row that the holder deletes returns no
    row once the holder commits."""
    a, b = two
    a.execute("begin")
    a.execute(f"delete from {kv} where id = 2")
    bg = blocked(b, f"select id from {kv} where id >= 2 order by id for update")
    a.execute("commit")
    assert bg.ok() == [(3,)]


def test_for_share_does_not_block_for_share_but_blocks_update(kv, two, db):
    """FOR SHARE locks are shared: two sessions hold one on the same row at once, and an
    UPDATE of that row waits until both have ended."""
    a, b = two
    c = db.connect()
    a.execute("begin")
    b.execute("begin")
    assert q(a, f"select v from {kv} where id = 1 for share") == [(10,)]
    assert quick(b, f"select v from {kv} where id = 1 for share") == [(10,)]
    bg = blocked(c, f"update {kv} set v = 0 where id = 1")
    a.execute("commit")
    assert bg.still_blocked(), "UPDATE went ahead although another FOR SHARE lock remained"
    b.execute("commit")
    bg.ok()
    assert val(a, f"select v from {kv} where id = 1") == 0


@pytest.mark.parametrize(
    "held, stmt, waits",
    [
        ("for key share", "update {t} set v = v + 1 where id = 1", False),  # non-key update
        ("for key share", "delete from {t} where id = 1", True),
        ("for key share", "update {t} set id = 10 where id = 1", True),  # key update
        ("for share", "update {t} set v = v + 1 where id = 1", True),
        ("for no key update", "update {t} set v = v + 1 where id = 1", True),
        ("for update", "delete from {t} where id = 1", True),
        ("for update", "select v from {t} where id = 1", False),  # plain reads never wait
    ],
)
def test_row_lock_modes_against_writes(kv, two, held, stmt, waits):
    """Which writes wait for a row lock (PostgreSQL docs 13.3.2): an UPDATE of non-key
    columns takes FOR NO KEY UPDATE, so a FOR KEY SHARE lock does not block it; DELETE and
    key updates take FOR UPDATE; a plain SELECT never waits."""
    a, b = two
    a.execute("begin")
    assert q(a, f"select v from {kv} where id = 1 {held}") == [(10,)]
    sql = stmt.format(t=kv)
    if waits:
        bg = blocked(b, sql)
        a.execute("commit")
        bg.ok()
    else:
        quick(b, sql)
        a.execute("commit")


LOCK_MODES = ["for key share", "for share", "for no key update", "for update"]
# PostgreSQL docs table 13.3 "Conflicting Row-Level Locks"
CONFLICTS = {
    "for key share": {"for update"},
    "for share": {"for no key update", "for update"},
    "for no key update": {"for share", "for no key update", "for update"},
    "for update": set(LOCK_MODES),
}


@pytest.mark.parametrize("requested", LOCK_MODES)
@pytest.mark.parametrize("held", LOCK_MODES)
def test_row_lock_conflict_matrix_with_nowait(kv, two, held, requested):
    """The row-level lock conflict table: a conflicting request with NOWAIT fails at once with
    55P03 'could not obtain lock on row in relation "<table>"', a compatible one succeeds."""
    a, b = two
    a.execute("begin")
    assert q(a, f"select id from {kv} where id = 1 {held}") == [(1,)]
    b.execute("begin")
    bg = Bg(b, f"select id from {kv} where id = 1 {requested} nowait")
    bg.wait(QUICK)
    if requested in CONFLICTS[held]:
        assert_error(bg.error, "55P03", f'could not obtain lock on row in relation "{kv}"')
    else:
        assert bg.error is None, f"{requested} conflicted with {held}: {bg.error!r}"
        assert bg.result == [(1,)]
    b.execute("rollback")
    a.execute("rollback")


def test_nowait_on_row_locked_by_update(kv, two):
    """FOR UPDATE NOWAIT on a row being updated by another transaction: 55P03
    'could not obtain lock on row in relation "<table>"'; unlocked rows are returned."""
    a, b = two
    a.execute("begin")
    a.execute(f"update {kv} set v = 0 where id = 2")
    bg = Bg(b, f"select id from {kv} where id = 2 for update nowait")
    bg.wait(QUICK)
    assert_error(bg.error, "55P03", f'could not obtain lock on row in relation "{kv}"')
    others = f"select id from {kv} where id <> 2 order by id for update nowait"
    assert quick(b, others) == [(1,), (3,)]
    a.execute("rollback")


def test_skip_locked_job_queue(db, two):
    """Job queue: two workers each take `select id from jobs order by id limit 1 for update
    skip locked` and get different jobs without waiting; a third worker gets the next free
    one; after the first workers commit their deletes, the remaining job is left."""
    jobs = db.table("jobs")
    a, b = two
    c = db.connect()
    a.execute(f"create table {jobs} (id int primary key, payload text)")
    a.execute(f"insert into {jobs} values (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
    take = f"select id from {jobs} order by id limit 1 for update skip locked"
    a.execute("begin")
    b.execute("begin")
    c.execute("begin")
    assert quick(a, take) == [(1,)]
    assert quick(b, take) == [(2,)]
    assert quick(c, take) == [(3,)]
    c.execute("rollback")  # worker c gives its job back
    assert quick(c, f"select id from {jobs} order by id for update skip locked") == [(3,), (4,)]
    quick(a, f"delete from {jobs} where id = 1")
    quick(b, f"delete from {jobs} where id = 2")
    a.execute("commit")
    b.execute("commit")
    assert quick(c, take) == [(3,)]
    assert q(c, f"select id from {jobs} order by id") == [(3,), (4,)]


def test_skip_locked_returns_nothing_when_all_locked(kv, two):
    """SKIP LOCKED with every matching row locked in a conflicting mode returns no rows instead
    of waiting; a mode that does not conflict (FOR KEY SHARE against FOR NO KEY UPDATE)
    still gets them all."""
    a, b = two
    a.execute("begin")
    q(a, f"select id from {kv} for no key update")
    assert quick(b, f"select id from {kv} for update skip locked") == []
    assert quick(b, f"select id from {kv} for share skip locked") == []
    assert quick(b, f"select id from {kv} for key share skip locked") == [(1,), (2,), (3,)]
    a.execute("rollback")


def test_repeatable_read_for_update_of_changed_row_fails_40001(kv, two):
    """At REPEATABLE READ, SELECT ... FOR UPDATE of a row changed (and committed) by another
    transaction since the snapshot fails with 40001 'could not serialize access due to
    concurrent update'; unchanged rows can be locked."""
    a, b = two
    a.execute("begin isolation level repeatable read")
    assert val(a, f"select v from {kv} where id = 1") == 10
    quick(b, f"update {kv} set v = 11 where id = 1")
    assert q(a, f"select v from {kv} where id = 2 for update") == [(20,)]
    assert_error(
        error_of(a, f"select v from {kv} where id = 1 for update"),
        "40001",
        "could not serialize access due to concurrent update",
    )
    a.execute("rollback")


def test_repeatable_read_for_update_waits_then_fails_40001(kv, two):
    """At REPEATABLE READ, FOR UPDATE of a row being updated by another transaction waits; it
    fails with 40001 if that transaction commits, and locks the row if it rolls back."""
    a, b = two
    a.execute("begin isolation level repeatable read")
    assert val(a, f"select count(*) from {kv}") == 3
    b.execute("begin")
    b.execute(f"update {kv} set v = 0 where id = 1")
    bg = blocked(a, f"select v from {kv} where id = 1 for update")
    b.execute("commit")
    bg.wait()
    assert_error(bg.error, "40001", "could not serialize access due to concurrent update")
    a.execute("rollback")
    a.execute("begin isolation level repeatable read")
    assert val(a, f"select count(*) from {kv}") == 3
    b.execute("begin")
    b.execute(f"update {kv} set v = 5 where id = 2")
    bg = blocked(a, f"select v from {kv} where id = 2 for update")
    b.execute("rollback")
    assert bg.ok() == [(20,)]
    a.execute("commit")


# ------------------------------------------------------------------- AND CHAIN


def test_commit_and_chain_keeps_characteristics(db, conn, kv):
    """COMMIT AND CHAIN commits (tag COMMIT) and at once starts a new transaction with the
    same isolation level and read-only mode, which takes a new snapshot."""
    other = db.connect()
    conn.execute("begin isolation level repeatable read")
    conn.execute(f"insert into {kv} values (4, 40)")
    assert tag(conn, "commit and chain") == "COMMIT"
    assert status(conn) == TransactionStatus.INTRANS
    assert quick(other, f"select count(*) from {kv}") == [(4,)], "not committed"
    assert val(conn, "show transaction_isolation") == "repeatable read"
    assert val(conn, "show transaction_read_only") == "off"
    quick(other, f"insert into {kv} values (5, 50)")
    assert val(conn, f"select count(*) from {kv}") == 5  # new snapshot
    quick(other, f"insert into {kv} values (6, 60)")
    assert val(conn, f"select count(*) from {kv}") == 5  # repeatable read again
    conn.execute("commit")
    assert status(conn) == TransactionStatus.IDLE

    conn.execute("start transaction isolation level serializable, read only")
    assert val(conn, "select 1") == 1
    assert tag(conn, "commit and chain") == "COMMIT"
    assert val(conn, "show transaction_isolation") == "serializable"
    assert val(conn, "show transaction_read_only") == "on"
    fails(conn, f"delete from {kv}", "25006", read_only_error("DELETE"))
    conn.execute("rollback")
    assert val(conn, "show transaction_isolation") == "read committed"
    assert val(conn, "show transaction_read_only") == "off"


def test_rollback_and_chain_keeps_characteristics(conn, kv):
    """ROLLBACK AND CHAIN undoes the transaction (tag ROLLBACK) and starts a new one with the
    same isolation level and read-only mode; AND NO CHAIN is plain ROLLBACK."""
    conn.execute("begin isolation level repeatable read")
    conn.execute(f"delete from {kv}")
    assert tag(conn, "rollback and chain") == "ROLLBACK"
    assert status(conn) == TransactionStatus.INTRANS
    assert val(conn, "show transaction_isolation") == "repeatable read"
    assert val(conn, f"select count(*) from {kv}") == 3
    conn.execute("set transaction read only")
    assert tag(conn, "rollback and chain") == "ROLLBACK"
    assert val(conn, "show transaction_read_only") == "on"
    assert val(conn, "show transaction_isolation") == "repeatable read"
    assert tag(conn, "rollback and no chain") == "ROLLBACK"
    assert status(conn) == TransactionStatus.IDLE
    assert val(conn, "show transaction_read_only") == "off"


def test_commit_and_chain_of_failed_transaction(conn, kv):
    """COMMIT AND CHAIN in a failed transaction rolls it back (tag ROLLBACK) and still starts
    a new, usable transaction. (PostgreSQL 15 gives that one the session defaults rather
    than the failed transaction's modes, which the abort had already reset; not pinned.)"""
    conn.execute("begin")
    conn.execute(f"insert into {kv} values (4, 40)")
    fails(conn, "select 1/0", "22012")
    assert tag(conn, "commit and chain") == "ROLLBACK"
    assert status(conn) == TransactionStatus.INTRANS
    assert val(conn, f"select count(*) from {kv}") == 3
    conn.execute(f"insert into {kv} values (5, 50)")
    fails(conn, "select 1/0", "22012")
    assert tag(conn, "rollback and chain") == "ROLLBACK"
    assert status(conn) == TransactionStatus.INTRANS
    conn.execute(f"insert into {kv} values (6, 60)")
    conn.execute("commit")
    assert [r[0] for r in rows(conn, kv)] == [1, 2, 3, 6]


@pytest.mark.parametrize(
    "stmt, message",
    [
        ("commit and chain", "COMMIT AND CHAIN can only be used in transaction blocks"),
        ("rollback and chain", "ROLLBACK AND CHAIN can only be used in transaction blocks"),
    ],
)
def test_and_chain_outside_transaction_fails_25p01(conn, stmt, message):
    """COMMIT AND CHAIN / ROLLBACK AND CHAIN outside a transaction block: ERROR 25P01
    '<command> AND CHAIN can only be used in transaction blocks'; no transaction is left open."""
    fails(conn, stmt, "25P01", message)
    assert status(conn) == TransactionStatus.IDLE
    assert val(conn, "select 1") == 1


# ----------------------------------------------------------- transactional DDL


def test_create_table_in_transaction_is_invisible_and_rolls_back(db, two):
    """CREATE TABLE in an open transaction: another session gets 42P01 'relation "x" does not
    exist' at once; after ROLLBACK the table does not exist for anyone."""
    a, b = two
    x = db.table("ddl_new")
    a.execute("begin")
    assert tag(a, f"create table {x} (id int primary key, v text)") == "CREATE TABLE"
    a.execute(f"insert into {x} values (1, 'one')")
    assert q(a, f"select id, v from {x}") == [(1, "one")]
    bg = Bg(b, f"insert into {x} values (2, 'two')")
    bg.wait(QUICK)
    assert_error(bg.error, "42P01", f'relation "{x}" does not exist')
    a.execute("rollback")
    fails(a, f"select * from {x}", "42P01", f'relation "{x}" does not exist')
    fails(b, f"select * from {x}", "42P01", f'relation "{x}" does not exist')


def test_create_table_in_transaction_visible_after_commit(db, two):
    """A table created in a transaction is visible to others, with its rows, after COMMIT."""
    a, b = two
    x = db.table("ddl_new")
    a.execute("begin")
    a.execute(f"create table {x} (id int)")
    a.execute(f"insert into {x} values (1), (2)")
    a.execute("commit")
    assert quick(b, f"select count(*) from {x}") == [(2,)]


@pytest.mark.parametrize("end", ["commit", "rollback"])
def test_drop_table_in_transaction_blocks_readers(kv, two, end):
    """DROP TABLE in an open transaction takes an ACCESS EXCLUSIVE lock: another session's
    SELECT waits until it ends, then fails with 42P01 after COMMIT or returns the rows after
    ROLLBACK."""
    a, b = two
    a.execute("begin")
    assert tag(a, f"drop table {kv}") == "DROP TABLE"
    bg = blocked(b, f"select id, v from {kv} order by id")
    a.execute(end)
    bg.wait()
    if end == "commit":
        assert_error(bg.error, "42P01", f'relation "{kv}" does not exist')
    else:
        assert bg.error is None, repr(bg.error)
        assert bg.result == [(1, 10), (2, 20), (3, 30)]


def test_truncate_waiting_for_a_writer_that_waits_for_it_is_a_deadlock(db, kv, two):
    """T1 holds a row; T2 writes table x, then waits for T1's row; T1's TRUNCATE x waits for
    T2 to finish with x: a deadlock. One of the two fails with 40P01 (which one differs:
    PostgreSQL aborts whichever detects it first) and the other then completes."""
    a, b = two
    x = db.table("ddl_x")
    quick(a, f"create table {x} (id int primary key)")
    a.execute("begin")
    quick(a, f"update {kv} set v = 11 where id = 1")
    b.execute("begin")
    quick(b, f"insert into {x} values (1)")
    update = blocked(b, f"update {kv} set v = 12 where id = 1")
    truncate = Bg(a, f"truncate {x}")
    truncate.wait(QUICK)
    update.wait(QUICK)
    errors = [s.error for s in (truncate, update) if s.error is not None]
    assert len(errors) == 1, f"expected one deadlock victim, got {errors}"
    assert isinstance(errors[0], psycopg.Error) and errors[0].sqlstate == "40P01"
    a.execute("rollback")
    b.execute("rollback")


@pytest.mark.parametrize("end", ["commit", "rollback"])
def test_truncate_in_transaction_blocks_readers(kv, two, end):
    """TRUNCATE in an open transaction blocks another session's SELECT until it ends; the
    reader then sees an empty table after COMMIT, all rows after ROLLBACK."""
    a, b = two
    a.execute("begin")
    assert tag(a, f"truncate {kv}") == "TRUNCATE TABLE"
    assert val(a, f"select count(*) from {kv}") == 0
    bg = blocked(b, f"select count(*) from {kv}")
    a.execute(end)
    assert bg.ok() == [(0,) if end == "commit" else (3,)]


# ---------------------------------------------------------------- SERIALIZABLE


def test_serializable_show_transaction_isolation(conn):
    """BEGIN ISOLATION LEVEL SERIALIZABLE: SHOW transaction_isolation says serializable."""
    conn.execute("begin isolation level serializable")
    assert val(conn, "show transaction_isolation") == "serializable"
    conn.execute("commit")


def _run_steps(steps):
    """Run (conn, sql) steps in order, each in the background with a bounded wait; once a
    connection fails, its remaining steps are skipped. Returns {conn: error or None}."""
    errors: dict = {}
    for conn, sql in steps:
        if errors.get(id(conn)) is not None:
            continue
        bg = Bg(conn, sql).wait(QUICK)
        errors.setdefault(id(conn), None)
        if bg.error is not None:
            errors[id(conn)] = bg.error
    return errors


def test_serializable_write_skew_fails_40001(db, two):
    """Write skew (two doctors on call each go off call after seeing two on call): under
    SERIALIZABLE one of the two transactions fails with 40001 'could not serialize access
    due to read/write dependencies among transactions' (PostgreSQL fails the second COMMIT),
    so one doctor stays on call."""
    t = db.table("doctors")
    a, b = two
    a.execute(f"create table {t} (name text primary key, on_call boolean not null)")
    a.execute(f"insert into {t} values ('alice', true), ('bob', true)")
    a.execute("begin isolation level serializable")
    b.execute("begin isolation level serializable")
    assert val(a, f"select count(*) from {t} where on_call") == 2
    assert val(b, f"select count(*) from {t} where on_call") == 2
    errors = _run_steps(
        [
            (a, f"update {t} set on_call = false where name = 'alice'"),
            (b, f"update {t} set on_call = false where name = 'bob'"),
            (a, "commit"),
            (b, "commit"),
        ]
    )
    failed = [e for e in errors.values() if e is not None]
    assert len(failed) == 1, f"expected exactly one failure, got {errors}"
    assert_error(failed[0], "40001", RW_CONFLICT)
    for c in (a, b):
        if status(c) != TransactionStatus.IDLE:
            c.execute("rollback")
    assert val(a, f"select count(*) from {t} where on_call") == 1


def test_serializable_write_skew_second_commit_fails(db, two):
    """The same write skew, in PostgreSQL's exact order of events: both UPDATEs succeed, the
    first COMMIT succeeds and the second COMMIT fails with 40001."""
    t = db.table("doctors")
    a, b = two
    a.execute(f"create table {t} (name text primary key, on_call boolean not null)")
    a.execute(f"insert into {t} values ('alice', true), ('bob', true)")
    a.execute("begin isolation level serializable")
    b.execute("begin isolation level serializable")
    assert val(a, f"select count(*) from {t} where on_call") == 2
    assert val(b, f"select count(*) from {t} where on_call") == 2
    quick(a, f"update {t} set on_call = false where name = 'alice'")
    quick(b, f"update {t} set on_call = false where name = 'bob'")
    quick(a, "commit")
    bg = Bg(b, "commit").wait(QUICK)
    assert_error(bg.error, "40001", RW_CONFLICT)
    assert status(b) == TransactionStatus.IDLE
    assert q(a, f"select name from {t} where on_call") == [("bob",)]


def test_serializable_non_conflicting_transactions_commit(db, two):
    """Two SERIALIZABLE transactions that each read and write only their own table, and both
    insert (without reading) into a shared one, both commit."""
    a, b = two
    ta, tb, shared = db.table("ser_a"), db.table("ser_b"), db.table("ser_log")
    for t in (ta, tb):
        a.execute(f"create table {t} (id int primary key, v int)")
        a.execute(f"insert into {t} values (1, 0)")
    a.execute(f"create table {shared} (who text)")
    a.execute("begin isolation level serializable")
    b.execute("begin isolation level serializable")
    assert val(a, f"select v from {ta} where id = 1") == 0
    assert val(b, f"select v from {tb} where id = 1") == 0
    quick(a, f"update {ta} set v = v + 1 where id = 1")
    quick(b, f"update {tb} set v = v + 1 where id = 1")
    quick(a, f"insert into {shared} values ('a')")
    quick(b, f"insert into {shared} values ('b')")
    quick(a, "commit")
    quick(b, "commit")
    assert val(a, f"select v from {ta}") == 1
    assert val(a, f"select v from {tb}") == 1
    assert q(a, f"select who from {shared} order by who") == [("a",), ("b",)]


def _bank(db, conn):
    t = db.table("bank_account")
    conn.execute(f"create table {t} (id text primary key, balance numeric not null)")
    conn.execute(f"insert into {t} values ('X', 0), ('Y', 0)")
    return t


def test_serializable_read_only_anomaly_fails_40001(db, two):
    """PostgreSQL's read-only-anomaly isolation spec: once a read-only transaction s3 has seen
    s1's committed write, s2's write that would make s3's view impossible fails with 40001."""
    s1, s2 = two
    s3 = db.connect()
    t = _bank(db, s1)
    for s in (s1, s2, s3):
        s.execute("begin isolation level serializable")
    assert val(s2, f"select balance from {t} where id = 'X'") == 0
    assert val(s2, f"select balance from {t} where id = 'Y'") == 0
    assert val(s1, f"select balance from {t} where id = 'Y'") == 0
    quick(s1, f"update {t} set balance = 20 where id = 'Y'")
    quick(s1, "commit")
    assert q(s3, f"select id, balance::int from {t} where id in ('X', 'Y') order by id") == [
        ("X", 0),
        ("Y", 20),
    ]
    quick(s3, "commit")
    bg = Bg(s2, f"update {t} set balance = -11 where id = 'X'").wait(QUICK)
    assert_error(bg.error, "40001", RW_CONFLICT)
    s2.execute("rollback")


def test_serializable_without_read_only_observer_both_commit(db, two):
    """The same schedule without the read-only observer is serializable (s2 before s1): both
    transactions commit."""
    s1, s2 = two
    t = _bank(db, s1)
    for s in (s1, s2):
        s.execute("begin isolation level serializable")
    assert val(s2, f"select balance from {t} where id = 'X'") == 0
    assert val(s2, f"select balance from {t} where id = 'Y'") == 0
    assert val(s1, f"select balance from {t} where id = 'Y'") == 0
    quick(s1, f"update {t} set balance = 20 where id = 'Y'")
    quick(s1, "commit")
    quick(s2, f"update {t} set balance = -11 where id = 'X'")
    quick(s2, "commit")
    assert q(s1, f"select id, balance::int from {t} order by id") == [("X", -11), ("Y", 20)]


def test_serializable_observer_before_the_first_commit_is_harmless(db, two):
    """A READ ONLY observer whose snapshot precedes s1's commit can be placed first (s3, s2,
    s1): s2's write that follows commits, as in PostgreSQL."""
    s1, s2 = two
    s3 = db.connect()
    t = _bank(db, s1)
    for s in (s1, s2):
        s.execute("begin isolation level serializable")
    s3.execute("begin isolation level serializable read only")
    assert val(s2, f"select balance from {t} where id = 'X'") == 0
    assert val(s2, f"select balance from {t} where id = 'Y'") == 0
    assert val(s3, f"select balance from {t} where id = 'X'") == 0
    quick(s1, f"update {t} set balance = 20 where id = 'Y'")
    quick(s1, "commit")
    assert val(s3, f"select balance::int from {t} where id = 'Y'") == 0
    quick(s3, "commit")
    quick(s2, f"update {t} set balance = -11 where id = 'X'")
    quick(s2, "commit")
    assert q(s1, f"select id, balance::int from {t} order by id") == [("X", -11), ("Y", 20)]


def test_serializable_phantom_insert_fails_the_second_commit(db, two):
    """Predicate write skew: each transaction counts the rows of a group (a scan of the
    whole table) and, seeing fewer than two, inserts one. PostgreSQL lets the first COMMIT
    through and fails the second with 40001, so the group never holds three rows."""
    a, b = two
    t = db.table("ser_groups")
    a.execute(f"create table {t} (id int primary key, grp int not null)")
    a.execute(f"insert into {t} values (1, 1)")
    for s in (a, b):
        s.execute("begin isolation level serializable")
        assert val(s, f"select count(*) from {t} where grp = 1") == 1
    quick(a, f"insert into {t} values (2, 1)")
    quick(b, f"insert into {t} values (3, 1)")
    quick(a, "commit")
    bg = Bg(b, "commit").wait(QUICK)
    assert_error(bg.error, "40001", RW_CONFLICT)
    assert val(a, f"select count(*) from {t} where grp = 1") == 2


def test_serializable_reads_of_disjoint_keys_commit(db, two):
    """Point reads and writes of different keys make no dependency: both commit even though
    each reads and writes the same table."""
    a, b = two
    t = db.table("ser_points")
    a.execute(f"create table {t} (id int primary key, v int not null)")
    a.execute(f"insert into {t} values (1, 0), (2, 0)")
    for s, k in ((a, 1), (b, 2)):
        s.execute("begin isolation level serializable")
        assert val(s, f"select v from {t} where id = {k}") == 0
        quick(s, f"update {t} set v = v + 1 where id = {k}")
    quick(a, "commit")
    quick(b, "commit")
    assert q(a, f"select id, v from {t} order by id") == [(1, 1), (2, 1)]


def test_a_failed_block_refuses_statements_before_planning_them(db, conn):
    """In a failed block every statement but COMMIT and ROLLBACK gets 25P02, even one
    naming a table the block renamed or one that does not exist (not 42P01)."""
    t = db.table("fb")
    conn.execute(f"create table {t} (id int primary key)")
    conn.execute("begin")
    conn.execute(f"alter table {t} rename to {t}_renamed")
    with pytest.raises(psycopg.errors.DivisionByZero):
        conn.execute("select 1 / 0")
    for sql in (f"select * from {t}_renamed", f"select * from {t}", "select * from nosuch_fb",
                "show work_mem"):
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute(sql)
    conn.execute("rollback")
    assert conn.execute(f"select count(*) from {t}").fetchone() == (0,)
