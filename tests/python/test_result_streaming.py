"""A SELECT of one table without ORDER BY, aggregates or joins sends its rows as it reads
them, in batches by key under the statement's snapshot: results longer than a batch (1,024
rows) must be the same rows, in the same order, as PostgreSQL's, with OFFSET and LIMIT
across batches, the transaction's own writes, an error part way, and a portal fetched in
parts; and the server does not hold the whole result in memory."""

from __future__ import annotations

import struct
import time
from pathlib import Path

import psycopg
import pytest

import pgraw

ROWS = 5000


@pytest.fixture
def s(db):
    t = db.table("s")
    with db.connect() as c:
        c.execute(f"create table {t} (k int primary key, v text not null)")
        c.execute(f"insert into {t} select g, 'v' || g from generate_series(1, {ROWS}) g")
    return t


def rows(conn, sql):
    return conn.execute(sql).fetchall()


def test_whole_results_in_key_order(db, s):
    c = db.connect()
    assert rows(c, f"select k, v from {s}") == [(k, f"v{k}") for k in range(1, ROWS + 1)]
    assert rows(c, f"select v from {s} where k between 100 and 3100") == [
        (f"v{k}",) for k in range(100, 3101)
    ]
    assert rows(c, f"select k from {s} where v like '%7'") == [
        (k,) for k in range(1, ROWS + 1) if k % 10 == 7
    ]
    assert rows(c, f"select k * 2, upper(v) from {s} where k > 3000") == [
        (k * 2, f"V{k}") for k in range(3001, ROWS + 1)
    ]


@pytest.mark.parametrize(
    "offset, limit",
    [(1000, 1030), (None, 1024), (None, 1025), (2047, None), (4999, None), (5000, None),
     (None, 0), (3, "null"), (700, 400)],
)
def test_offset_and_limit_across_batches(db, s, offset, limit):
    c = db.connect()
    tail = (f" offset {offset}" if offset is not None else "") + (
        f" limit {limit}" if limit is not None else "")

    def cut(keys):
        keys = keys[offset or 0:]
        return keys if limit in (None, "null") else keys[:limit]

    assert rows(c, f"select k from {s}{tail}") == [(k,) for k in cut(list(range(1, ROWS + 1)))]
    # through a filter that drops most of each batch
    assert rows(c, f"select k from {s} where k % 7 = 0{tail}") == [
        (k,) for k in cut(list(range(7, ROWS + 1, 7)))
    ]


def test_no_row_past_limit_is_computed(db, s):
    """Rows past LIMIT are not read: their expressions never run (no division by zero
    at the fifth row, a sequence advanced once per row returned)."""
    c = db.connect()
    assert rows(c, f"select k, 10 / (k - 5) from {s} limit 3") == [(1, -2), (2, -3), (3, -5)]
    assert rows(c, f"select k from {s} where 10 / (k - 2000) <> 0 offset 3 limit 2") == [(1993,), (1994,)]
    seq = db.table("q")
    c.execute(f"create sequence {seq}")
    assert rows(c, f"select nextval('{seq}') from {s} limit 2") == [(1,), (2,)]
    assert rows(c, f"select nextval('{seq}')") == [(3,)]
    c.execute(f"drop sequence {seq}")
    big = 9223372036854775807
    assert rows(c, f"select k from {s} order by k desc limit {big} offset {ROWS - 2}") == [(2,), (1,)]


def test_the_transactions_own_writes(db, s):
    c = db.connect(autocommit=False)
    c.execute(f"insert into {s} select g, 'new' || g from generate_series({ROWS + 1}, {ROWS + 2000}) g")
    c.execute(f"delete from {s} where k <= 1000")
    c.execute(f"update {s} set v = 'changed' where k = 2500")
    got = sorted(rows(c, f"select k, v from {s}"))  # PostgreSQL moves the updated row
    expected = [(k, "changed" if k == 2500 else f"v{k}") for k in range(1001, ROWS + 1)]
    expected += [(k, f"new{k}") for k in range(ROWS + 1, ROWS + 2001)]
    assert got == expected
    c.rollback()
    assert len(rows(c, f"select k from {s}")) == ROWS
    c.rollback()


def test_an_error_part_way(db, s):
    c = db.connect()
    with pytest.raises(psycopg.errors.DivisionByZero):
        c.execute(f"select k, 10 / (k - 3000) from {s}")
    assert rows(c, "select 1") == [(1,)]
    c = db.connect(autocommit=False)
    with pytest.raises(psycopg.errors.DivisionByZero):
        c.execute(f"select k, 10 / (k - 3000) from {s}")
    with pytest.raises(psycopg.errors.InFailedSqlTransaction):
        c.execute("select 1")
    c.rollback()


def _extended(conn: pgraw.RawConn, portal: str, max_rows: int) -> bytes:
    return pgraw.message(b"E", pgraw.cstr(portal) + struct.pack("!i", max_rows))


def test_a_portal_fetched_in_parts_sees_only_its_own_snapshot(server, s):
    """Execute with a row limit suspends the portal; a statement of the same transaction
    run in between (an INSERT) is not seen by the portal's later rows, as in PostgreSQL."""
    with pgraw.RawConn(server.host, server.port) as conn:
        conn.startup(user=server.user, database=server.dbname)
        assert pgraw.errors(conn.simple_query("begin")) == []
        sql = f"select k from {s} where k > 2990"
        conn.send(
            pgraw.message(b"P", pgraw.cstr("st") + pgraw.cstr(sql) + struct.pack("!H", 0))
            + pgraw.message(b"B", pgraw.cstr("p") + pgraw.cstr("st") + struct.pack("!HHH", 0, 0, 0))
            + _extended(conn, "p", 5)
            + pgraw.message(b"S")
        )
        first = conn.read_until_ready()
        assert pgraw.errors(first) == []
        assert [int(r[0]) for r in pgraw.data_rows(first)] == list(range(2991, 2996))
        assert any(m[0] == b"s" for m in first), "no PortalSuspended"
        assert pgraw.errors(conn.simple_query(f"insert into {s} values (100000, 'late')")) == []
        conn.send(_extended(conn, "p", 0) + pgraw.message(b"S"))
        rest = conn.read_until_ready()
        assert pgraw.errors(rest) == []
        assert [int(r[0]) for r in pgraw.data_rows(rest)] == list(range(2996, ROWS + 1))
        tags = [m[1] for m in rest if m[0] == b"C"]
        assert tags == [f"SELECT {ROWS - 2995}\0".encode()]
        assert pgraw.errors(conn.simple_query("rollback")) == []


def test_an_unnamed_portal_fetched_whole(server, s):
    with pgraw.RawConn(server.host, server.port) as conn:
        conn.startup(user=server.user, database=server.dbname)
        conn.send(
            pgraw.message(b"P", pgraw.cstr("") + pgraw.cstr(f"select k from {s}") + struct.pack("!H", 0))
            + pgraw.message(b"B", pgraw.cstr("") + pgraw.cstr("") + struct.pack("!HHH", 0, 0, 0))
            + _extended(conn, "", 0)
            + _extended(conn, "", 0)
            + pgraw.message(b"S")
        )
        msgs = conn.read_until_ready()
        assert pgraw.errors(msgs) == []
        assert [int(r[0]) for r in pgraw.data_rows(msgs)] == list(range(1, ROWS + 1))
        # the second Execute finds the portal exhausted
        assert [m[1] for m in msgs if m[0] == b"C"] == [f"SELECT {ROWS}\0".encode(), b"SELECT 0\0"]


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def _reset_peak_rss_kib(pid: int) -> int:
    """Reset the process's peak resident memory to its current size, and return it."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")
    return _peak_rss_kib(pid)


def _wide_table(db, server, value_sql: str):
    """A table of 20,000 rows (k, v) of about 4 kB each, v = `value_sql` over g = k,
    written in small transactions (little freed memory for a later statement to reuse);
    skips where the server's /proc entry cannot be read."""
    if server.proc is None or not Path(f"/proc/{server.proc.pid}/clear_refs").exists():
        pytest.skip("needs the server's /proc entry")
    t = db.table("wide")
    c = db.connect()
    c.execute(f"create table {t} (k int primary key, v text)")
    for first in range(1, 20001, 1000):
        c.execute(f"insert into {t} select g, {value_sql} "
                  f"from generate_series({first}, {first + 999}) g")
    return c, t


@pytest.mark.steadydb_only  # measures the server process's memory
def test_a_portal_fetched_in_parts_is_read_as_it_is_fetched(db, server):
    """80 MB of rows fetched 500 at a time (Execute with a row limit, in a transaction, as
    pgjdbc's fetchSize and asyncpg's cursors do): the server's peak memory grows by under
    20 MiB (read whole at the first Execute, it grew by the result), between fetches the
    session is idle in its transaction, and a statement_timeout shorter than the client's
    pauses does not end the portal (each Execute is a statement of its own)."""
    c, t = _wide_table(db, server, "repeat('x', 4000)")
    pid = server.proc.pid
    before = _reset_peak_rss_kib(pid)
    with pgraw.RawConn(server.host, server.port) as conn:
        conn.startup(user=server.user, database=server.dbname)
        assert pgraw.errors(conn.simple_query("set statement_timeout = '300ms'")) == []
        assert pgraw.errors(conn.simple_query("begin")) == []
        conn.send(
            pgraw.message(b"P", pgraw.cstr("") + pgraw.cstr(f"select k, v from {t}") + struct.pack("!H", 0))
            + pgraw.message(b"B", pgraw.cstr("") + pgraw.cstr("") + struct.pack("!HHH", 0, 0, 0))
            + _extended(conn, "", 500)
            + pgraw.message(b"S")
        )
        keys: list[int] = []
        states = set()
        while True:
            msgs = conn.read_until_ready()
            assert pgraw.errors(msgs) == []
            rows = pgraw.data_rows(msgs)
            assert all(len(r[1]) == 4000 for r in rows)
            keys.extend(int(r[0]) for r in rows)
            if any(m[0] == b"C" for m in msgs):
                break
            assert any(m[0] == b"s" for m in msgs), "no PortalSuspended"
            if len(keys) in (500, 10000):
                states.add(c.execute(
                    "select state from pg_stat_activity where query like 'select k, v from%' "
                    "and pid <> pg_backend_pid()").fetchone()[0])
                time.sleep(0.5)
            conn.send(_extended(conn, "", 500) + pgraw.message(b"S"))
        assert keys == list(range(1, 20001))
        assert states == {"idle in transaction"}
        assert pgraw.errors(conn.simple_query("commit")) == []
    grown_mib = (_peak_rss_kib(pid) - before) / 1024
    assert grown_mib < 20, f"the server's peak memory grew by {grown_mib:.0f} MiB"


@pytest.mark.steadydb_only  # measures the server process's memory
def test_a_long_result_is_not_held_in_memory(db, server):
    """80 MB of rows are read through a client while the server's peak memory grows by
    under 20 MiB: they are sent as they are read (the whole result, built first, raised
    it by 58 MiB)."""
    c, t = _wide_table(db, server, "repeat('x', 4000)")
    pid = server.proc.pid
    before = _reset_peak_rss_kib(pid)
    n = 0
    with c.cursor() as cur:
        for row in cur.stream(f"select k, v from {t}"):
            assert len(row[1]) == 4000
            n += 1
    assert n == 20000
    grown_mib = (_peak_rss_kib(pid) - before) / 1024
    assert grown_mib < 20, f"the server's peak memory grew by {grown_mib:.0f} MiB"


# ------------------------------------------------------------ ORDER BY past work_mem


@pytest.fixture
def sortable(db):
    t, u = db.table("srt"), db.table("grp")
    with db.connect() as c:
        c.execute(f"create table {t} (k int primary key, g int, name text, amount numeric)")
        c.execute(
            f"insert into {t} select i, i % 37, 'n' || (i * 7919 % 1000), "
            f"case when i % 13 = 0 then null else (i % 101) / 4.0 end "
            f"from generate_series(1, 20000) i"
        )
        c.execute(f"create table {u} (g int primary key, label text)")
        c.execute(f"insert into {u} select i, 'group ' || i from generate_series(0, 36) i")
    return t, u


SORTS = [
    "select k, g, name from {t} order by g, name desc, k",
    "select k, amount from {t} order by amount nulls first, k desc",
    "select k, amount from {t} order by amount desc, k",
    "select name || '/' || k, g * 2 from {t} where g < 20 order by name, k",
    "select t.k, u.label from {t} t join {u} u on u.g = t.g order by u.label desc, t.k",
    "select k, g from {t} order by g desc, k offset 5000 limit 3000",
    "select k from {t} order by amount, k limit 0",
    "select k, (select label from {u} u where u.g = t.g) from {t} t order by 2, 1",
]


def _in_memory_and_on_disk(db, sql: str):
    """`sql`'s rows with work_mem 64MB (all in memory) and 64kB (mostly on disk)."""
    c = db.connect()
    c.execute("set work_mem = '64MB'")
    in_memory = rows(c, sql)
    c.execute("set work_mem = '64kB'")
    on_disk = rows(c, sql)
    c.execute("reset work_mem")
    return in_memory, on_disk


@pytest.mark.parametrize("sql", SORTS)
def test_order_by_past_work_mem_matches_the_in_memory_sort(db, sortable, sql):
    in_memory, on_disk = _in_memory_and_on_disk(db, sql.format(t=sortable[0], u=sortable[1]))
    assert on_disk == in_memory


UNSORTED = [
    "select t.k, u.label from {t} t join {u} u on u.g = t.g",
    "select t.k, u.label from {t} t join {u} u on u.g = t.g where t.name like 'n1%'",
    "select a.k, b.k from {t} a join {t} b on b.k = a.k + 1 where a.g = 3",
    "select k, x from {t} t, generate_series(1, 3) x where t.g = 5",
    "select s.k, u.label from (select k from {t} where g = 1) s, {u} u where u.g < 3",
]


@pytest.mark.parametrize("sql", UNSORTED)
def test_results_without_order_by_past_work_mem(db, sortable, sql):
    """Held in memory up to 16 x work_mem, then on disk: the same rows (in the same
    order on one server; PostgreSQL may join in another order with another work_mem)."""
    t, u = sortable
    sql = sql.format(t=t, u=u)
    c = db.connect()
    c.execute("set work_mem = '64MB'")
    in_memory = rows(c, sql)
    c.execute("set work_mem = '64kB'")
    on_disk = rows(c, sql)
    if db.server.external:
        assert sorted(on_disk) == sorted(in_memory)
    else:
        assert on_disk == in_memory
    if not db.server.external:
        assert rows(c, sql + " limit 7") == in_memory[:7]


def test_work_mem_is_a_setting(db):
    c = db.connect()
    assert rows(c, "show work_mem") == [("4MB",)]
    c.execute("set work_mem = '1GB'")
    assert rows(c, "show work_mem") == [("1GB",)]
    for value, message in [
        ("work_mem = '63kB'", '63 kB is outside the valid range for parameter "work_mem" (64 .. 2147483647)'),
        ("extra_float_digits = 10", '10 is outside the valid range for parameter "extra_float_digits" (-15 .. 3)'),
        ("statement_timeout = -1", '-1 ms is outside the valid range for parameter "statement_timeout" (0 .. 2147483647)'),
        ("work_mem = 'abc'", 'invalid value for parameter "work_mem": "abc"'),
    ]:
        with pytest.raises(psycopg.errors.InvalidParameterValue) as e:
            c.execute(f"set {value}")
        assert e.value.diag.message_primary == message
    assert rows(c, "select setting, unit from pg_settings where name = 'work_mem'") == [
        ("1048576", "kB")
    ]


@pytest.mark.steadydb_only  # measures the server process's memory and data directory
def test_a_sort_past_work_mem_goes_to_disk_not_memory(db, server):
    """80 MB of rows sorted with work_mem 4MB: the server's peak memory grows by under
    20 MiB (in memory the sort raised it by more than the rows' size), the rows come
    out in order, and no temporary file is left behind."""
    c, t = _wide_table(db, server, "repeat('x', 4000) || g")
    pid = server.proc.pid
    before = _reset_peak_rss_kib(pid)
    keys = []
    with c.cursor() as cur:
        for k, v in cur.stream(f"select k, v from {t} order by k % 100, k desc"):
            assert v == "x" * 4000 + str(k)
            keys.append(k)
    assert keys == sorted(range(1, 20001), key=lambda k: (k % 100, -k))
    grown_mib = (_peak_rss_kib(pid) - before) / 1024
    assert grown_mib < 20, f"the server's peak memory grew by {grown_mib:.0f} MiB"
    assert list((Path(server.datadir) / "pgsql_tmp").iterdir()) == []


# ------------------------------------------------------------ GROUP BY and DISTINCT past work_mem

GROUPINGS = [
    "select name, count(*), sum(amount), min(k), max(k) from {t} group by name order by name",
    "select k % 5000, count(*), avg(amount) from {t} group by 1 order by 1",
    "select g % 5, name, count(*) from {t} group by 1, name having count(*) > 4 order by 3 desc, 1, 2",
    "select amount, g % 2, count(*) from {t} group by 1, 2 order by 1 nulls first, 2",
    "select name, string_agg(k::text, ',' order by k), array_agg(distinct g order by g) "
    "from {t} group by name order by name",
    "select count(distinct name), count(*), sum(k) from {t}",
    "select count(*) from {t} where k < 0",
    "select u.label, count(*), sum(t.amount) from {t} t join {u} u on u.g = t.g "
    "group by u.label order by 1",
    "select k % 7000 as m, count(*) from {t} group by 1 order by m limit 5 offset 100",
    "select distinct name from {t} order by name",
    "select distinct g, amount from {t} order by 2 desc nulls last, 1",
    "select distinct k % 3000 as m from {t} order by m offset 10 limit 20",
    "select distinct count(*) from {t} group by name order by 1",
    "select count(*), sum(n), max(m) from (select name, k % 3000 as m, count(*) as n from {t} "
    "group by 1, 2) s",
    "select g, count(*) from (select k % 5000 as m, g, sum(amount) from {t} group by 1, 2) s "
    "group by g order by g",
]


@pytest.mark.parametrize("sql", GROUPINGS)
def test_grouping_past_work_mem_matches_the_in_memory_one(db, sortable, sql):
    """With work_mem 64kB most groups (or distinct rows) go to disk and are aggregated
    when read back: the same rows as all in memory, on each server."""
    in_memory, on_disk = _in_memory_and_on_disk(db, sql.format(t=sortable[0], u=sortable[1]))
    assert on_disk == in_memory


UNORDERED_GROUPINGS = [
    "select k % 3000, count(*) from {t} group by 1",
    "select distinct k % 3000, g from {t}",
    "select name, g, sum(amount) from {t} group by name, g having sum(amount) > 10",
]


@pytest.mark.parametrize("sql", UNORDERED_GROUPINGS)
def test_grouping_past_work_mem_without_order_by(db, sortable, sql):
    """Without ORDER BY the groups come in another order, but each comes once."""
    in_memory, on_disk = _in_memory_and_on_disk(db, sql.format(t=sortable[0], u=sortable[1]))
    assert len(on_disk) == len(set(on_disk))
    assert sorted(on_disk, key=repr) == sorted(in_memory, key=repr)


@pytest.mark.steadydb_only  # measures the server process's memory and data directory
@pytest.mark.parametrize("sql", [
    "select v, count(*) from {t} group by v",
    "select distinct v from {t}",
])
def test_a_grouping_past_work_mem_goes_to_disk_not_memory(db, server, sql):
    """20,000 groups of 4 kB keys with work_mem 1MB (so 2 MB of groups in memory, and
    16 MB of the unsorted result): the server's peak memory grows by under 30 MiB (held
    in memory, the groups raised it by more than their 80 MB), every group comes once,
    and no temporary file is left behind."""
    c, t = _wide_table(db, server, "repeat('x', 4000) || g")
    c.execute("set work_mem = '1MB'")
    pid = server.proc.pid
    before = _reset_peak_rss_kib(pid)
    seen = set()
    with c.cursor() as cur:
        for row in cur.stream(sql.format(t=t)):
            assert row[0].startswith("x" * 4000)
            seen.add(int(row[0][4000:]))
            assert row[1:] in [(), (1,)]
    assert seen == set(range(1, 20001))
    grown_mib = (_peak_rss_kib(pid) - before) / 1024
    assert grown_mib < 30, f"the server's peak memory grew by {grown_mib:.0f} MiB"
    assert list((Path(server.datadir) / "pgsql_tmp").iterdir()) == []


# ------------------------------------------------------------ hash joins past work_mem


@pytest.fixture
def joinable(db, sortable):
    """`sortable`'s table and a second of 20,000 rows whose k2 matches some of its keys
    (and is NULL in every 17th row), to be joined on non-key columns."""
    h = db.table("hj")
    with db.connect() as c:
        c.execute(f"create table {h} (id int primary key, g int, k2 int, tag text)")
        c.execute(f"insert into {h} select i, i % 41, "
                  f"case when i % 17 = 0 then null else (i * 3) % 24001 end, 'n' || (i % 1000) "
                  f"from generate_series(1, 20000) i")
    return sortable[0], h


HASH_JOINS = [
    "select a.k, b.id from {t} a join {h} b on b.k2 = a.k",
    "select a.k, b.id from {t} a left join {h} b on b.k2 = a.k",
    "select a.k, b.id from {t} a right join {h} b on b.k2 = a.k",
    "select a.k, b.id from {t} a full join {h} b on b.k2 = a.k",
    "select a.k, b.id from {t} a left join {h} b on b.k2 = a.k and b.g < 10",
    "select a.k, b.id, c.k from {t} a join {h} b on b.k2 = a.k "
    "join {t} c on c.name = b.tag and c.g = 3",
    "select a.k, b.id, c.id from {t} a full join {h} b on b.k2 = a.k "
    "left join {h} c on c.tag = a.name and c.g = 7",
    "select count(*), sum(a.k), sum(b.id) from {t} a join {h} b on b.g = a.g where a.k < 200",
    "select a.name, count(b.id) from {t} a left join {h} b on b.tag = a.name "
    "and b.g = a.g group by a.name",
]


@pytest.mark.parametrize("sql", HASH_JOINS)
def test_hash_joins_past_work_mem_match_the_in_memory_ones(db, joinable, sql):
    """With work_mem 64kB a hash join's table goes to disk in batches and each batch is
    joined in turn (on SteadyDB; PostgreSQL batches too): the same rows, each as often,
    as with the table in memory, NULL keys matching nothing, and RIGHT and FULL joins'
    unmatched rows once each."""
    in_memory, on_disk = _in_memory_and_on_disk(db, sql.format(t=joinable[0], h=joinable[1]))
    assert in_memory
    assert sorted(on_disk, key=repr) == sorted(in_memory, key=repr)


def test_a_spilled_hash_join_stops_at_its_limit(db, joinable):
    t, h = joinable
    c = db.connect()
    c.execute("set work_mem = '64kB'")
    for kind in ("left", "full"):
        got = rows(c, f"select a.k, b.id from {t} a {kind} join {h} b on b.k2 = a.k limit 1000")
        assert len(got) == 1000 and len(set(got)) == 1000


@pytest.mark.steadydb_only  # measures the server process's memory and data directory
def test_a_hash_join_past_work_mem_goes_to_disk_not_memory(db, server):
    """A table of 80 MB joined with itself on its 4 kB text column with work_mem 4MB:
    the server's peak memory grows by under 40 MiB (held in memory, the table and its
    keys raised it by 139 MiB), every row finds its one match, and no temporary file is
    left behind."""
    c, t = _wide_table(db, server, "repeat('x', 4000) || g")
    pid = server.proc.pid
    before = _reset_peak_rss_kib(pid)
    got = rows(c, f"select count(*), sum(a.k - b.k), count(distinct a.k) "
                  f"from {t} a full join {t} b on b.v = a.v")
    assert got == [(20000, 0, 20000)]
    grown_mib = (_peak_rss_kib(pid) - before) / 1024
    assert grown_mib < 40, f"the server's peak memory grew by {grown_mib:.0f} MiB"
    assert list((Path(server.datadir) / "pgsql_tmp").iterdir()) == []


# ------------------------------------------------------------ set operations past work_mem

SET_OPERATIONS = [
    "select name, g from {t} union select tag, g from {h}",
    "select name, g from {t} union all select tag, g from {h}",
    "select g, amount from {t} intersect select g % 37, (id % 101) / 4.0 from {h}",
    "select g, amount from {t} intersect all select g % 37, (id % 101) / 4.0 from {h}",
    "select g, amount from {t} except select g % 37, (id % 101) / 4.0 from {h} where id < 15000",
    "select g, amount from {t} except all select g % 37, (id % 101) / 4.0 from {h} where id < 15000",
    "select k % 500, name from {t} union select id % 700, tag from {h} order by 1, 2 limit 50 offset 20",
    "select count(*) from (select name, amount from {t} union select tag, null from {h}) s",
    "select k from {t} where k < 3000 except (select id from {h} where id % 3 = 0 limit 500)",
]


@pytest.mark.parametrize("sql", SET_OPERATIONS)
def test_set_operations_past_work_mem_match_the_in_memory_ones(db, joinable, sql):
    """With work_mem 64kB both sides of UNION, INTERSECT and EXCEPT go to an external sort
    and are combined one group of equal rows at a time (NULLs equal): the same rows, each
    as often, as combined in memory."""
    in_memory, on_disk = _in_memory_and_on_disk(db, sql.format(t=joinable[0], h=joinable[1]))
    assert in_memory
    if "order by" in sql:
        assert on_disk == in_memory
    else:
        assert sorted(on_disk, key=repr) == sorted(in_memory, key=repr)


@pytest.mark.steadydb_only  # measures the server process's memory and data directory
def test_a_union_past_work_mem_goes_to_disk_not_memory(db, server):
    """A UNION of an 80 MB table with itself with work_mem 1MB (so 2 MB of rows held, and
    16 MB of the unsorted result): the server's peak memory grows by under 30 MiB (held
    in memory, both sides raised it by 214 MiB), every row comes once, and
    no temporary file is left behind."""
    c, t = _wide_table(db, server, "repeat('x', 4000) || g")
    c.execute("set work_mem = '1MB'")
    pid = server.proc.pid
    before = _reset_peak_rss_kib(pid)
    seen = set()
    with c.cursor() as cur:
        for k, v in cur.stream(f"select k, v from {t} union select k, v from {t}"):
            assert v == "x" * 4000 + str(k)
            seen.add(k)
            n = len(seen)
    assert n == 20000
    grown_mib = (_peak_rss_kib(pid) - before) / 1024
    assert grown_mib < 30, f"the server's peak memory grew by {grown_mib:.0f} MiB"
    assert list((Path(server.datadir) / "pgsql_tmp").iterdir()) == []


# ------------------------------------------------------------ windows past work_mem

WINDOWS = [
    "select k, g, row_number() over (partition by g order by k), sum(amount) over (partition by g) "
    "from {t} order by k",
    "select k, rank() over (partition by g order by name), lag(k) over (partition by g order by k), "
    "first_value(name) over (partition by g order by amount nulls first, k) from {t} order by k",
    "select k, row_number() over (partition by g order by k), count(*) over (partition by name) "
    "from {t} order by k",
    "select g, k, sum(k) over (partition by g order by k rows between 2 preceding and current row) "
    "from {t} where name like 'n1%'",
    "select k, dense_rank() over (partition by g % 5, amount is null order by amount) from {t} "
    "order by 2 desc, 1 limit 25",
    "select t.k, u.label, count(*) over (partition by u.label) from {t} t join {u} u on u.g = t.g "
    "where t.k % 3 = 0",
    "select k, sum(k) over (partition by name order by k), rank() over (partition by g order by k), "
    "count(*) over (partition by g % 3), lead(k) over (partition by name order by k) from {t} "
    "order by k",
]


@pytest.mark.parametrize("sql", WINDOWS)
def test_windows_past_work_mem_match_the_in_memory_ones(db, sortable, sql):
    """With work_mem 64kB the rows go to an external sort by each PARTITION BY in turn
    and each group of windows is computed one partition at a time: the same values as
    with every row held."""
    in_memory, on_disk = _in_memory_and_on_disk(db, sql.format(t=sortable[0], u=sortable[1]))
    assert in_memory
    if "order by k" in sql.split("from")[-1] or "limit" in sql:
        assert on_disk == in_memory
    else:
        assert sorted(on_disk, key=repr) == sorted(in_memory, key=repr)


WIDE_WINDOWS = {
    # One PARTITION BY: sorted on disk by it, one partition held at a time.
    "one": ("select k, row_number() over (partition by k % 100 order by k desc), "
            "max(length(v)) over (partition by k % 100) from {t}",
            lambda k: ((20000 - k) // 100 + 1, 4000 + len(str(20000 - (20000 - k) % 100)))),
    # Two: sorted on disk by one, then by the other.
    "two": ("select k, row_number() over (partition by k % 100 order by k), "
            "count(*) over (partition by k % 7) from {t}",
            lambda k: ((k - 1) // 100 + 1, len(range(k % 7 or 7, 20001, 7)))),
}


@pytest.mark.steadydb_only  # measures the server process's memory and data directory
@pytest.mark.parametrize("partitions", list(WIDE_WINDOWS))
def test_windows_past_work_mem_go_to_disk_not_memory(db, server, partitions):
    """Windows over an 80 MB table in 100 (and 7) partitions with work_mem 1MB: the
    server's peak memory grows by under 30 MiB (one partition is held, not the table),
    the values are right, and no temporary file is left behind."""
    sql, want = WIDE_WINDOWS[partitions]
    c, t = _wide_table(db, server, "repeat('x', 4000) || g")
    c.execute("set work_mem = '1MB'")
    pid = server.proc.pid
    before = _reset_peak_rss_kib(pid)
    got = {}
    with c.cursor() as cur:
        for k, a, b in cur.stream(sql.format(t=t)):
            got[k] = (a, b)
    assert len(got) == 20000
    sample = (1, 7, 100, 19999)
    assert all(got[k] == want(k) for k in sample), [(got[k], want(k)) for k in sample]
    grown_mib = (_peak_rss_kib(pid) - before) / 1024
    assert grown_mib < 30, f"the server's peak memory grew by {grown_mib:.0f} MiB"
    assert list((Path(server.datadir) / "pgsql_tmp").iterdir()) == []


@pytest.mark.steadydb_only  # measures the server process's memory and data directory
def test_a_subquerys_grouping_past_work_mem_goes_to_disk_not_memory(db, server):
    """20,000 groups of 4 kB keys grouped in a subquery (whose small output rows are
    held) with work_mem 1MB: the server's peak memory grows by under 30 MiB, and every
    group is counted once."""
    c, t = _wide_table(db, server, "repeat('x', 4000) || g")
    c.execute("set work_mem = '1MB'")
    pid = server.proc.pid
    before = _reset_peak_rss_kib(pid)
    got = rows(c, f"select count(*), sum(n), sum(l) from "
                  f"(select length(v) as l, count(*) as n from {t} group by v) s")
    assert got == [(20000, 20000, sum(4000 + len(str(k)) for k in range(1, 20001)))]
    grown_mib = (_peak_rss_kib(pid) - before) / 1024
    assert grown_mib < 30, f"the server's peak memory grew by {grown_mib:.0f} MiB"
    assert list((Path(server.datadir) / "pgsql_tmp").iterdir()) == []
