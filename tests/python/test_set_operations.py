"""UNION, INTERSECT and EXCEPT, with and without ALL, with ORDER BY and LIMIT on the
result and type resolution across the sides. The expectations were taken from
PostgreSQL 15 and hold there too."""

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
]

ERRORS = [
('select id, s from su union select k from sv', '42601', 'each UNION query must have the same number of columns'),
    ('select id from su union select s from sv', '42804', 'UNION types integer and character varying cannot be matched'),
    ('select id from su union select k from sv order by id + 1', '0A000', 'invalid UNION/INTERSECT/EXCEPT ORDER BY clause'),
    ('select id from su union select k from sv order by nosuch', '42703', 'column "nosuch" does not exist'),
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
