"""Subqueries in expressions: scalar, EXISTS, IN, ANY/ALL; correlated at one and more
levels, in WHERE, the select list, HAVING, ORDER BY, grouped queries, UPDATE, DELETE and
INSERT. The expectations were taken from PostgreSQL 15 and hold there too."""

from __future__ import annotations

from decimal import Decimal

import psycopg
import pytest

from conftest import module_tables

SETUP = [
    "create table qa (id int primary key, g int, s text)",
    "create table qb (k bigint primary key, a_id int, v numeric(6,2))",
    "insert into qa values (1, 1, 'a'), (2, 1, 'b'), (3, 2, 'c'), (4, null, null), (5, 3, 'e')",
    "insert into qb values (10, 1, 1.50), (11, 1, 2.00), (12, 3, null), (13, 9, 4.25), (14, null, 5.00)",
]

QUERIES = [
    ('select id, (select max(v) from qb where qb.a_id = qa.id) from qa order by id',
     [(1, Decimal('2.00')), (2, None), (3, None), (4, None), (5, None)]),
    ('select id from qa where id in (select a_id from qb) order by id',
     [(1,), (3,)]),
    ('select id from qa where id not in (select a_id from qb) order by id',
     []),
    ('select id from qa where id not in (select a_id from qb where a_id is not null) order by id',
     [(2,), (4,), (5,)]),
    ('select id from qa where exists (select 1 from qb where qb.a_id = qa.id) order by id',
     [(1,), (3,)]),
    ('select id from qa where not exists (select 1 from qb where qb.a_id = qa.id) order by id',
     [(2,), (4,), (5,)]),
    ('select (select count(*) from qb)',
     [(5,)]),
    ('select id from qa where g = (select min(a_id) from qb) order by id',
     [(1,), (2,)]),
    ('select id from qa where id > all (select a_id from qb where a_id < 3) order by id',
     [(2,), (3,), (4,), (5,)]),
    ('select id from qa where id > any (select a_id from qb) order by id',
     [(2,), (3,), (4,), (5,)]),
    ('select id from qa where id = any (select a_id from qb) order by id',
     [(1,), (3,)]),
    ('select id from qa where id <> all (select a_id from qb) order by id',
     []),
    ('select id from qa where id < all (select a_id from qb where false) order by id',
     [(1,), (2,), (3,), (4,), (5,)]),
    ('select (select s from qa where id = 99)',
     [(None,)]),
    ('select g, count(*), (select count(*) from qb where qb.a_id = qa.g) from qa group by g order by g nulls first',
     [(None, 1, 0), (1, 2, 2), (2, 1, 0), (3, 1, 1)]),
    ('select id, (select (select s from qa q2 where q2.id = qb.a_id) from qb where qb.k = qa.id + 9) from qa order by id',
     [(1, 'a'), (2, 'a'), (3, 'c'), (4, None), (5, None)]),
    ('select id from qa where exists (select 1 from qb where qb.a_id = qa.id and exists (select 1 from qa q3 where q3.g = qb.a_id and q3.id <> qa.id)) order by id',
     [(1,), (3,)]),
    ("select id, s from qa where s in (select 'a' union select 'c') order by id",
     [(1, 'a'), (3, 'c')]),
    ('select sum(v) from qb where a_id in (select id from qa where g = 1)',
     [(Decimal('3.50'),)]),
    ('select id from qa where (select count(*) from qb where a_id = qa.id) = 2',
     [(1,)]),
    ('select count(*) from qa where exists (select * from qb)',
     [(5,)]),
    ('select * from (select id, (select count(*) from qb where qb.a_id = qa.id) as n from qa) t where n > 0 order by id',
     [(1, 2), (3, 1)]),
    ('select id from qa where id in (select a_id from qb where v > (select avg(v) from qb)) order by id',
     []),
    ('select id, id in (select a_id from qb) from qa order by id',
     [(1, True), (2, None), (3, True), (4, None), (5, None)]),
    ('select id from qa where g in (select g from qa q2 where q2.id > qa.id) order by id',
     [(1,)]),
    ('select id from qa order by (select count(*) from qb where qb.a_id = qa.id) desc, id',
     [(1,), (3,), (2,), (4,), (5,)]),
    ('select id, s from qa where s = any (select s from qa where id < 3) order by id',
     [(1, 'a'), (2, 'b')]),
    ("select id from qa where 'x' in (select s from qa)",
     []),
    ('select max(id) from qa having max(id) > (select count(*) from qb)',
     []),
    ('select exists (select 1 from qa where id = 1), exists (select 1 from qa where id = 100)',
     [(True, False)]),
    ('select id from qa where exists (select 1 from qa limit 0)',
     []),
    ('select id from qa a1 where id = (select max(id) from qa a2 where a2.g = a1.g) order by id',
     [(2,), (3,), (5,)]),
    ('select g, count(*), (select count(*) from qb where qb.a_id = qa.g) from qa group by g order by g nulls first',
     [(None, 1, 0), (1, 2, 2), (2, 1, 0), (3, 1, 1)]),
    ('select qa.g, count(*) from qa group by g order by 1',
     [(1, 2), (2, 1), (3, 1), (None, 1)]),
    ('select (select 1 where false) is null',
     [(True,)]),
    ("select coalesce((select s from qa where id = 3), 'none')",
     [('c',)]),
    ('select id from qa where id = (select 1 union select 1)',
     [(1,)]),
    ('select id, (select x from (select qa.id * 2 as x) d) from qa order by id',
     [(1, 2), (2, 4), (3, 6), (4, 8), (5, 10)]),
    ('select count(*) from qa where g = any (select g from qa where id > 10)',
     [(0,)]),
    ("select case when exists (select 1 from qb where a_id = qa.id) then 'y' else 'n' end from qa order by id",
     [('y',), ('n',), ('y',), ('n',), ('n',)]),
]

ERRORS = [
    ("create table qc (id int default (select 1))", "0A000", "cannot use subquery in DEFAULT expression"),
    ('select (select id from qa)', '21000', 'more than one row returned by a subquery used as an expression'),
    ('select (select id, s from qa where id = 1)', '42601', 'subquery must return only one column'),
    ('select id from qa where id in (select id, s from qa)', '42601', 'subquery has too many columns'),
    ('select g, (select count(*) from qb where qb.a_id = qa.id) from qa group by g', '42803', 'subquery uses ungrouped column "qa.id" from outer query'),
    ('select id from qa where id in (select s from qa)', '42883', 'operator does not exist: integer = text'),
    ('select (select nosuch from qb)', '42703', 'column "nosuch" does not exist'),
]

# Statements that change rows, each run in a transaction that is rolled back: (statement,
# what it returns, a query of the state it leaves, that state).
CHANGES = [
    ("update qb set v = (select count(*) from qa where qa.g = qb.a_id) where k < 12 returning k, v",
     [(10, Decimal('2.00')), (11, Decimal('2.00'))],
     "select k, v from qb where k < 12 order by k",
     [(10, Decimal('2.00')), (11, Decimal('2.00'))]),
    ("update qb set v = v + 1 where a_id in (select id from qa where s = 'a') returning k, v",
     [(10, Decimal('2.50')), (11, Decimal('3.00'))],
     "select count(*) from qb where v > 2.5",
     [(3,)]),
    ("update qa set g = (select count(*) from qa) where id = 1 returning g",
     [(5,)],
     "select g from qa where id = 1",
     [(5,)]),
    ("delete from qb where a_id not in (select id from qa where id is not null) returning k",
     [(13,)],
     "select k from qb order by k",
     [(10,), (11,), (12,), (14,)]),
    ("delete from qa where not exists (select 1 from qb where qb.a_id = qa.id) returning id",
     [(2,), (4,), (5,)],
     "select id from qa order by id",
     [(1,), (3,)]),
    ("insert into qb values (20, (select max(id) from qa), 1) returning k, a_id",
     [(20, 5)],
     "select count(*) from qb",
     [(6,)]),
    ("insert into qb select k + 100, a_id, v from qb where exists (select 1 from qa where qa.id = qb.a_id) returning k",
     [(110,), (111,), (112,)],
     "select count(*) from qb",
     [(8,)]),
]


@pytest.fixture(scope="module")
def tables(server):
    yield from module_tables(server, "qa, qb", SETUP)


@pytest.mark.parametrize("sql, rows", QUERIES)
def test_subquery(tables, conn, sql, rows):
    assert conn.execute(sql).fetchall() == rows


@pytest.mark.parametrize("sql, sqlstate, message", ERRORS)
def test_subquery_errors(tables, conn, sql, sqlstate, message):
    with pytest.raises(psycopg.Error) as ei:
        conn.execute(sql)
    assert (ei.value.sqlstate, ei.value.diag.message_primary) == (sqlstate, message)


@pytest.mark.parametrize("sql, returned, check, state", CHANGES)
def test_subquery_in_changes(tables, server, sql, returned, check, state):
    with server.connect(autocommit=False) as c:
        try:
            assert sorted(c.execute(sql).fetchall()) == returned
            assert c.execute(check).fetchall() == state
        finally:
            c.rollback()


def test_parameters_inside_subqueries(tables, conn):
    """Parameters are shared with the subqueries and typed from their context."""
    sql = "select s from qa where id = (select a_id from qb where k = %s) and g in (select g from qa where s <> %s)"
    assert conn.execute(sql, (12, "x")).fetchall() == [("c",)]
    assert conn.execute(sql, (12, "x"), prepare=True).fetchall() == [("c",)]
    assert conn.execute(sql, (99, "x"), prepare=True).fetchall() == []


def test_uncorrelated_subquery_runs_once(tables, conn):
    """An uncorrelated subquery runs once per statement (random() inside gives one value)."""
    rows = conn.execute(
        "select (select random()) from qa"
    ).fetchall()
    assert len({r[0] for r in rows}) == 1


@pytest.mark.steadydb_only
def test_subquery_reading_changed_table_is_refused(tables, conn):
    """A correlated subquery in SET reading the table being updated would see the
    statement's own earlier writes here; it is refused rather than answered differently
    from PostgreSQL."""
    with pytest.raises(psycopg.Error) as ei:
        conn.execute("update qb set v = (select max(v) from qb q2 where q2.a_id = qb.a_id)")
    assert ei.value.sqlstate == "0A000"


def test_reading_block_holds_subquery_table(tables, server):
    """A transaction block that read a table only inside a subquery holds it: a DROP in
    another session waits until the block ends (PostgreSQL's ACCESS SHARE lock)."""
    with server.connect(autocommit=True) as c:
        c.execute("drop table if exists qd")
        c.execute("create table qd (id int primary key)")
        c.execute("insert into qd values (1)")
    reader = server.connect(autocommit=False)
    reader.execute("select count(*) from qa where id in (select id from qd)")
    dropper = server.connect(autocommit=True)
    dropper.execute("set statement_timeout = '300ms'")
    with pytest.raises(psycopg.Error) as ei:
        dropper.execute("drop table qd")
    assert ei.value.sqlstate == "57014"
    reader.rollback()
    dropper.execute("set statement_timeout = 0")
    dropper.execute("drop table qd")
    reader.close()
    dropper.close()
