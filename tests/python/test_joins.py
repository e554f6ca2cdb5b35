"""Joins: inner, left, right, full and cross joins, USING and NATURAL, comma joins with
WHERE, chains of joins, and self-joins, with each join's strategy (key lookup, hash or
loop) chosen by the planner.

Every expectation was taken from PostgreSQL 15 and holds there too
(``STEADYDB_TEST_EXTERNAL``).
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

import psycopg
import pytest

from conftest import module_tables

SETUP = [
    "create table ja (id int primary key, name text)",
    "create table jb (id int primary key, a_id int, v text)",
    "create table jc (k bigint, b_id int8, w text)",
    "insert into ja values (1, 'one'), (2, 'two'), (3, 'three')",
    "insert into jb values (10, 1, 'x'), (11, 1, 'y'), (12, 2, 'z'), (13, null, 'orphan'),"
    " (14, 9, 'dangling')",
    "insert into jc values (1, 10, 'c10'), (2, 10, 'c10b'), (3, 12, 'c12'), (4, 99, 'c99'),"
    " (5, null, 'cnull')",
]

QUERIES = [
    ('select ja.name, jb.v from ja join jb on jb.a_id = ja.id order by jb.id',
     [('one', 'x'), ('one', 'y'), ('two', 'z')]),
    ('select ja.name, jb.v from ja inner join jb on ja.id = jb.a_id order by jb.id',
     [('one', 'x'), ('one', 'y'), ('two', 'z')]),
    ('select ja.name, jb.v from ja left join jb on jb.a_id = ja.id order by ja.id, jb.id',
     [('one', 'x'), ('one', 'y'), ('two', 'z'), ('three', None)]),
    ('select ja.name, jb.v from ja right join jb on jb.a_id = ja.id order by jb.id',
     [('one', 'x'), ('one', 'y'), ('two', 'z'), (None, 'orphan'), (None, 'dangling')]),
    ('select ja.name, jb.v from ja full join jb on jb.a_id = ja.id order by ja.id nulls last, jb.id',
     [('one', 'x'), ('one', 'y'), ('two', 'z'), ('three', None), (None, 'orphan'), (None, 'dangling')]),
    ('select * from ja cross join jb where ja.id = 1 and jb.a_id = ja.id order by jb.id',
     [(1, 'one', 10, 1, 'x'), (1, 'one', 11, 1, 'y')]),
    ('select * from jb join ja on ja.id = jb.a_id where jb.id = 10',
     [(10, 1, 'x', 1, 'one')]),
    ('select count(*), ja.name from ja, jb where ja.id = jb.a_id group by ja.name order by 2',
     [(2, 'one'), (1, 'two')]),
    ('select * from ja join ja as a2 using (id) order by id',
     [(1, 'one', 'one'), (2, 'two', 'two'), (3, 'three', 'three')]),
    ('select * from ja natural join ja as a3 order by id',
     [(1, 'one'), (2, 'two'), (3, 'three')]),
    ('select id from ja join jb using (id)',
     []),
    ("select ja.*, jb.v from ja, jb where ja.id = jb.a_id and jb.v > 'x' order by ja.id",
     [(1, 'one', 'y'), (2, 'two', 'z')]),
    ('select ja.name, jb.v, jc.w from ja join jb on jb.a_id = ja.id join jc on jc.b_id = jb.id order by jc.k',
     [('one', 'x', 'c10'), ('one', 'x', 'c10b'), ('two', 'z', 'c12')]),
    ('select ja.name, jb.v, jc.w from ja left join jb on jb.a_id = ja.id left join jc on jc.b_id = jb.id order by ja.id, jb.id, jc.k',
     [('one', 'x', 'c10'), ('one', 'x', 'c10b'), ('one', 'y', None), ('two', 'z', 'c12'), ('three', None, None)]),
    ('select ja.name, jb.v, jc.w from ja join jb on jb.a_id = ja.id right join jc on jc.b_id = jb.id order by jc.k',
     [('one', 'x', 'c10'), ('one', 'x', 'c10b'), ('two', 'z', 'c12'), (None, None, 'c99'), (None, None, 'cnull')]),
    ('select jb.v, jc.w from jb full join jc on jc.b_id = jb.id order by jb.id nulls last, jc.k nulls last',
     [('x', 'c10'), ('x', 'c10b'), ('y', None), ('z', 'c12'), ('orphan', None), ('dangling', None), (None, 'c99'), (None, 'cnull')]),
    ("select jb.v, jc.w from jb left join jc on jc.b_id = jb.id and jc.w like '%b' order by jb.id, jc.k",
     [('x', 'c10b'), ('y', None), ('z', None), ('orphan', None), ('dangling', None)]),
    ('select jb.v, jc.w from jb left join jc on jc.b_id = jb.id where jc.w is null order by jb.id',
     [('y', None), ('orphan', None), ('dangling', None)]),
    ('select ja.id, jb.id from ja join jb on jb.id > ja.id * 5 and jb.id < 12 order by 1, 2',
     [(1, 10), (1, 11), (2, 11)]),
    ('select x.name, y.name from ja x join ja y on x.id < y.id order by 1, 2',
     [('one', 'three'), ('one', 'two'), ('two', 'three')]),
    ('select sum(jc.k), jb.a_id from jb join jc on jc.b_id = jb.id group by jb.a_id order by jb.a_id',
     [(Decimal('3'), 1), (Decimal('3'), 2)]),
    ('select jb.*, ja.* from jb join ja on ja.id = jb.a_id order by jb.id limit 2 offset 1',
     [(11, 1, 'y', 1, 'one'), (12, 2, 'z', 2, 'two')]),
    ('select ja.name, jb.v from ja join jb on true order by ja.id, jb.id limit 3',
     [('one', 'x'), ('one', 'y'), ('one', 'z')]),
    ("select count(*) from ja join jb on jb.a_id = ja.id join jc on jc.b_id = jb.id where jc.w <> 'c10'",
     [(2,)]),
    ("select ja.name, jb.v from ja left join jb on jb.a_id = ja.id and jb.v = 'y' order by ja.id",
     [('one', 'y'), ('two', None), ('three', None)]),
    ('select ja.id, jb.id from ja join jb on ja.id = jb.a_id::int8 order by 2',
     [(1, 10), (1, 11), (2, 12)]),
    ('select ja.id, jc.k from ja join jc on ja.id = jc.k order by 1',
     [(1, 1), (2, 2), (3, 3)]),
    ('select jb.v from jb right join ja on ja.id = jb.a_id and ja.id > 5 order by 1',
     [(None,), (None,), (None,)]),
]

ERRORS = [
    ('select 1 from ja, jb join jc on jc.b_id = ja.id', '42P01',
     'invalid reference to FROM-clause entry for table "ja"'),
('select 1 from ja join jb on ja.id = jb.a_id join ja on true', '42712', 'table name "ja" specified more than once'),
    ('select nosuch.x from ja join jb on true', '42P01', 'missing FROM-clause entry for table "nosuch"'),
    ("select ja.id from ja join jb on ja.id = 'x'", '22P02', 'invalid input syntax for type integer: "x"'),
    ('select * from ja join jb using (nosuch)', '42703', 'column "nosuch" specified in USING clause does not exist in left table'),
    ('select id from ja, jb', '42702', 'column reference "id" is ambiguous'),
    ('select 1 from ja join jb on 1', '42804', 'argument of JOIN/ON must be type boolean, not type integer'),
    ('select 1 from ja join jb on count(*) > 0', '42803', 'aggregate functions are not allowed in JOIN conditions'),
]


@pytest.fixture(scope="module")
def joined(server):
    yield from module_tables(server, "ja, jb, jc", SETUP)


@pytest.mark.parametrize("sql, rows", QUERIES)
def test_join(joined, conn, sql, rows):
    assert conn.execute(sql).fetchall() == rows


@pytest.mark.parametrize("sql, rows", QUERIES)
def test_join_prepared(joined, conn, sql, rows):
    """The same through the extended protocol, planned once and run twice."""
    for _ in range(2):
        assert conn.execute(sql, prepare=True).fetchall() == rows


@pytest.mark.parametrize("sql, sqlstate, message", ERRORS)
def test_join_errors(joined, conn, sql, sqlstate, message):
    with pytest.raises(psycopg.Error) as ei:
        conn.execute(sql)
    assert (ei.value.sqlstate, ei.value.diag.message_primary) == (sqlstate, message)


def test_join_sees_the_transactions_own_writes(joined, conn):
    with conn.transaction():
        conn.execute("insert into jb values (15, 3, 'mine')")
        conn.execute("update ja set name = 'uno' where id = 1")
        rows = conn.execute("select ja.name, jb.v from ja join jb on jb.a_id = ja.id"
                            " where jb.v in ('x', 'mine') order by jb.id").fetchall()
        assert rows == [("uno", "x"), ("three", "mine")]
        raise psycopg.Rollback


def test_join_with_parameters(joined, conn):
    rows = conn.execute("select jb.v from ja join jb on jb.a_id = ja.id where ja.name = %s"
                        " and jb.id > %s order by jb.id", ("one", 10)).fetchall()
    assert rows == [("y",)]


def test_insert_select_from_a_join(db, joined, conn):
    t = db.table("joined_copy")
    conn.execute(f"create table {t} (name text, v text)")
    conn.execute(f"insert into {t} select ja.name, jb.v from ja join jb on jb.a_id = ja.id")
    assert conn.execute(f"select count(*) from {t}").fetchone() == (3,)


def test_a_larger_join_finds_every_match(db, conn):
    """A join of a few thousand rows each way, by key lookup and by hash."""
    p, q = db.table("jp"), db.table("jq")
    conn.execute(f"create table {p} (id int primary key, grp int)")
    conn.execute(f"create table {q} (id int primary key, p_id int, grp int)")
    with conn.cursor().copy(f"copy {p} from stdin") as copy:
        for i in range(1, 3001):
            copy.write_row((i, i % 7))
    with conn.cursor().copy(f"copy {q} from stdin") as copy:
        for i in range(1, 6001):
            copy.write_row((i, (i * 7) % 3001, i % 7))
    by_key = conn.execute(f"select count(*), sum({q}.id) from {q} join {p} on {p}.id = {q}.p_id"
                          ).fetchone()
    want = [i for i in range(1, 6001) if 1 <= (i * 7) % 3001 <= 3000]
    assert by_key == (len(want), sum(want))
    by_hash = conn.execute(f"select count(*) from {p} join {q} on {q}.grp = {p}.grp").fetchone()
    p_groups = Counter(i % 7 for i in range(1, 3001))
    q_groups = Counter(i % 7 for i in range(1, 6001))
    assert by_hash == (sum(n * q_groups[g] for g, n in p_groups.items()),)


def test_joins_on_expressions_find_every_match(db, conn):
    """An equality of an expression of each side (a cast, lower()) is what a hash join
    finds matches by (on SteadyDB its plan says so), in inner, left and full joins; a
    NULL matches nothing."""
    a, b = db.table("hxa"), db.table("hxb")
    conn.execute(f"create table {a} (id int primary key, name text, n int)")
    conn.execute(f"create table {b} (id int primary key, tag text, s text)")
    conn.execute(f"insert into {a} select i, 'Name' || i, nullif(i, 7) from generate_series(1, 3000) i")
    conn.execute(f"insert into {b} select i, 'name' || (i * 2), (i * 2)::text from generate_series(1, 3000) i")
    cases = [
        (f"select count(*) from {a} a join {b} b on lower(a.name) = lower(b.tag)", (1500,)),
        (f"select count(*), count(a.id), count(b.id) from {a} a full join {b} b on a.n = b.s::int",
         (4500, 3000, 3000)),
        (f"select count(*), count(b.id) from {a} a left join {b} b on a.n::text = b.s", (3000, 1500)),
        (f"select count(*) from {a} a join {b} b on upper(b.tag) = upper(a.name) and b.id < 100",
         (99,)),
    ]
    for sql, want in cases:
        assert conn.execute(sql).fetchone() == want, sql
        if not db.server.external:
            plan = "\n".join(r[0] for r in conn.execute("explain " + sql).fetchall())
            assert "Hash" in plan, plan
