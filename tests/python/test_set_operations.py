"""UNION, INTERSECT and EXCEPT, with and without ALL, with ORDER BY and LIMIT on the
result and type resolution across the sides; and subqueries in FROM (grouped, distinct,
limited and set-operation subqueries, column aliases, joins with a table). The
expectations were taken from PostgreSQL 15 and hold there too."""

from __future__ import annotations

from decimal import Decimal

import psycopg
import pytest

from conftest import module_tables

SETUP = [
    "create table su (id int primary key, g int, s text)",
    "create table sv (k bigint, s varchar(10))",
    "insert into su values (1, 1, 'a'), (2, 1, 'b'), (3, 2, 'b'), (4, null, null)",
    "insert into sv values (1, 'b'), (2, 'b'), (3, 'c'), (null, null)",
]

QUERIES = [
    ('select s from su union select s from sv order by 1',
     [('a',), ('b',), ('c',), (None,)]),
    ('select s from su union all select s from sv order by 1',
     [('a',), ('b',), ('b',), ('b',), ('b',), ('c',), (None,), (None,)]),
    ('select s from su intersect select s from sv order by 1',
     [('b',), (None,)]),
    ('select s from su intersect all select s from sv order by 1',
     [('b',), ('b',), (None,)]),
    ('select s from su except select s from sv order by 1',
     [('a',)]),
    ('select s from su except all select s from sv order by 1',
     [('a',)]),
    ('select s from sv except all select s from su order by 1',
     [('c',)]),
    ('select id, s from su union select k, s from sv order by id desc, s limit 3',
     [(None, None), (4, None), (3, 'b')]),
    ('select g from su union select k from sv order by g nulls first',
     [(None,), (1,), (2,), (3,)]),
    ('select 1 as x union select 2 union select 1 order by x',
     [(1,), (2,)]),
    ('select s from su where id = 1 union all (select s from sv order by k desc limit 1)',
     [('a',), (None,)]),
    ('select count(*) from su union all select count(*) from sv',
     [(4,), (4,)]),
    ('select 1.5 as n union select 2 order by 1',
     [(Decimal('1.5'),), (Decimal('2'),)]),
    ('select count(*) from (select distinct s from su) sub',
     [(3,)]),
    ('select x.s, x.n from (select s, count(*) as n from su group by s) as x order by x.n desc, x.s nulls first',
     [('b', 2), (None, 1), ('a', 1)]),
    ('select t.a from (select id * 10 from su where id < 3) t(a) order by 1',
     [(10,), (20,)]),
    ('select su.s, d.k from su join (select k, s from sv where k is not null) d on d.s = su.s order by su.id, d.k',
     [('b', 1), ('b', 2), ('b', 1), ('b', 2)]),
    ('select * from (select id, s from su union all select k, s from sv) u where u.id > 2 order by id, s',
     [(3, 'b'), (3, 'c'), (4, None)]),
    ('select count(*) from (select * from su limit 2) q',
     [(2,)]),
    ('select s, total from (select s, sum(id) as total from su group by s) g where total > 2 order by s',
     [('b', 5), (None, 4)]),
    # A NULL or string literal on one side takes the other side's type.
    ('select 1.5 union select null order by 1',
     [(Decimal('1.5'),), (None,)]),
    ("select '7' union select 1 order by 1",
     [(1,), (7,)]),
    ("select id, 'x' from su where id = 1 union select null, s from sv where k = 3 order by 1",
     [(1, 'x'), (None, 'c')]),
    ("select * from (values (1, 'x'), (null, null)) v(a, b) union select 2, 'y' order by 1",
     [(1, 'x'), (2, 'y'), (None, None)]),
    # Columns of one name in a subquery: `*` takes each in turn.
    ("select * from (select 'a', 1.5 union select 'b', null) s order by 1",
     [('a', Decimal('1.5')), ('b', None)]),
    ('select s.* from (select 1, 2) s',
     [(1, 2)]),
]

ERRORS = [
    ('select id, s from su union select k from sv', '42601', 'each UNION query must have the same number of columns'),
    ('select id from su union select s from sv', '42804', 'UNION types integer and character varying cannot be matched'),
    ("select 'a' union select 1", '22P02', 'invalid input syntax for type integer: "a"'),
    ("select 'x'::text union select 1", '42804', 'UNION types text and integer cannot be matched'),
    ('select a from (select 1 as a, 2 as a) s', '42702', 'column reference "a" is ambiguous'),
    ('select id from su union select k from sv order by id + 1', '0A000', 'invalid UNION/INTERSECT/EXCEPT ORDER BY clause'),
    ('select id from su union select k from sv order by nosuch', '42703', 'column "nosuch" does not exist'),
('select * from (select 1)', '42601', 'subquery in FROM must have an alias'),
    ('select * from (select 1, 2) t(a, b, c)', '42P10', 'table "t" has 2 columns available but 3 columns specified'),
    ('select * from (select id from su) d where d.nosuch = 1', '42703', 'column d.nosuch does not exist'),
]


@pytest.fixture(scope="module")
def tables(server):
    yield from module_tables(server, "su, sv", SETUP)


@pytest.mark.parametrize("sql, rows", QUERIES)
def test_set_operation(tables, conn, sql, rows):
    assert conn.execute(sql).fetchall() == rows


@pytest.mark.parametrize("sql, sqlstate, message", ERRORS)
def test_set_operation_errors(tables, conn, sql, sqlstate, message):
    with pytest.raises(psycopg.Error) as ei:
        conn.execute(sql)
    assert (ei.value.sqlstate, ei.value.diag.message_primary) == (sqlstate, message)
