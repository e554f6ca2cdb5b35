"""Row values: ROW(...) and (a, b) constructors, their comparisons with PostgreSQL's NULL
rules, row IN lists, whole-row references turned into JSON, and json_agg /
json_object_agg spaced as PostgreSQL spaces them. Every expectation is PostgreSQL 15's."""

from __future__ import annotations

from conftest import run_steps

STEPS = [
    ('drop table if exists rw',
     'DROP TABLE'),
    ('create table rw (a int primary key, b text, c int)',
     'CREATE TABLE'),
    ("insert into rw values (1, 'x', 10), (2, 'y', null), (3, null, 30)",
     'INSERT 0 3'),
    ("select row(1, 'a')::text, (1, 'a', null)::text, row()::text",
     [('(1,a)', '(1,a,)', '()')]),
    ('select (1, 2) = (1, 2), (1, 2) <> (1, 3), (1, 2) < (1, 3), (1, null) < (2, 0), (null, 1) < (2, 0), (1, null) = (1, 2), (1, null) < (1, 5), (2, null) < (1, 5), (1,2) <= (1,2), (1,3) >= (1,2)',
     [(True, True, True, True, None, None, None, False, True, True)]),
    ('select a from rw where (a, c) > (1, 5) order by a',
     [(1,), (2,), (3,)]),
    ("select a from rw where (a, b) in ((1, 'x'), (2, 'z'), (3, null)) order by a",
     [(1,)]),
    ("select a from rw where (a, b) not in ((1, 'x')) order by a",
     [(2,), (3,)]),
    ('select to_jsonb(rw) from rw order by a',
     [({'a': 1, 'b': 'x', 'c': 10},), ({'a': 2, 'b': 'y', 'c': None},), ({'a': 3, 'b': None, 'c': 30},)]),
    ('select row_to_json(rw) from rw order by a',
     [({'a': 1, 'b': 'x', 'c': 10},), ({'a': 2, 'b': 'y', 'c': None},), ({'a': 3, 'b': None, 'c': 30},)]),
    ('select jsonb_agg(s order by a) from (select a, b from rw) s',
     [([{'a': 1, 'b': 'x'}, {'a': 2, 'b': 'y'}, {'a': 3, 'b': None}],)]),
    ('select jsonb_agg(rw) from rw',
     [([{'a': 1, 'b': 'x', 'c': 10}, {'a': 2, 'b': 'y', 'c': None}, {'a': 3, 'b': None, 'c': 30}],)]),
    ('select (1, 2) = (1, 2, 3)',
     ('42601', 'unequal number of entries in row expressions', None, None)),
    ("select to_jsonb(row(1, 'a'))::text, row_to_json(row(1, 'a', null))",
     [('{"f1": 1, "f2": "a"}', {'f1': 1, 'f2': 'a', 'f3': None})]),
    ('select count(*) from rw r where (r.a, r.c) = (3, 30)',
     [(1,)]),
    ('select json_agg(x)::text from (values (1),(null),(2)) t(x)',
     [('[1, null, 2]',)]),
    ("select json_agg(t)::text from (values (1,'a'),(2,'b')) t(x,y)",
     [('[{"x":1,"y":"a"}, \n {"x":2,"y":"b"}]',)]),
    ("select json_object_agg(x, y)::text from (values (1,'a'),(2,null)) t(x,y)",
     [('{ "1" : "a", "2" : null }',)]),
    ('select json_agg(array[x])::text, json_agg(\'{"a":1}\'::json)::text from (values (1),(2)) t(x)',
     [('[[1], \n [2]]', '[{"a":1}, {"a":1}]')]),
    ('select json_object_agg(null::text, 1)',
     ('22023', 'field name must not be null', None, None)),
    ('select json_agg(rw order by a desc)::text from rw',
     [('[{"a":3,"b":null,"c":30}, \n {"a":2,"b":"y","c":null}, \n {"a":1,"b":"x","c":10}]',)]),
    ('select to_jsonb(t)::text from (select a, array[a, c] as arr, row(b, c) as r from rw where a = 1) t',
     [('{"a": 1, "r": {"f1": "x", "f2": 10}, "arr": [1, 10]}',)]),
    ('drop table rw',
     'DROP TABLE'),
]


def test_rows(server):
    with server.connect() as c:
        c.execute("drop table if exists rw")
        try:
            run_steps(c, STEPS)
        finally:
            c.execute("drop table if exists rw")


# Whole rows of null-extended tables are NULL; IS [NOT] NULL of a row looks at its
# fields; a row comparison evaluates each item once; a column of an outer query comes
# before a table's whole row; json fields stay JSON in row_to_json; NULL path steps
# are errors only where the walk reaches them; named windows in a query over a
# subquery; GROUPS needs ORDER BY.
CASES = [
    ('drop table if exists ra, rb, rj',
     'DROP TABLE'),
    ('create table ra (id int primary key)',
     'CREATE TABLE'),
    ('create table rb (id int primary key, a_id int)',
     'CREATE TABLE'),
    ('insert into ra values (1), (2)',
     'INSERT 0 2'),
    ('insert into rb values (10, 1)',
     'INSERT 0 1'),
    ('select ra.id from ra left join rb on rb.a_id = ra.id where rb is null order by 1',
     [(2,)]),
    ('select ra.id, count(rb) from ra left join rb on rb.a_id = ra.id group by ra.id order by 1',
     [(1, 1), (2, 0)]),
    ('select ra.id, row_to_json(rb) from ra left join rb on rb.a_id = ra.id order by 1',
     [(1, {'id': 10, 'a_id': 1}), (2, None)]),
    ('select row(null, null) is null, row(1, null) is not null, row(1, null) is null, row(1, 2) is not null',
     [(True, False, False, True)]),
    ('drop sequence if exists rs',
     'DROP SEQUENCE'),
    ('create sequence rs',
     'CREATE SEQUENCE'),
    ("select count(*) from (select (nextval('rs'), 0) < (10, 1) from generate_series(1, 20)) s",
     [(20,)]),
    ("select nextval('rs')",
     [(21,)]),
    ('drop sequence rs',
     'DROP SEQUENCE'),
    ('select (select id from rb where id = a_id * 10) from rb',
     [(10,)]),
    ('select sum(x) over w from (select 1 as x) s window w as (order by x)',
     [(1,)]),
    ('select sum(x) over (groups 1 preceding) from (select 1 as x) s',
     ('42P20', 'GROUPS mode requires an ORDER BY clause', None, None)),
    ('create table rj (j json, k int)',
     'CREATE TABLE'),
    ('insert into rj values (\'{"a": 1}\', 1)',
     'INSERT 0 1'),
    ('select row_to_json(rj), to_jsonb(rj)::text from rj',
     [({'j': {'a': 1}, 'k': 1}, '{"j": {"a": 1}, "k": 1}')]),
    ('select \'{"a":1}\'::jsonb #- \'{b,NULL}\', \'{}\'::jsonb #- \'{NULL}\', jsonb_set(\'{"a":1}\', \'{b,NULL}\', \'2\')',
     [({'a': 1}, {}, {'a': 1})]),
    ('select jsonb_set(\'{"a":1}\', \'{a,NULL}\', \'2\')',
     ('22004', 'path element at position 2 is null', None, None)),
    ("select jsonb_set('[1]', '{99999999999}', '2')",
     ('22P02', 'path element at position 1 is not an integer: "99999999999"', None, None)),
    ("select '[1,2]'::jsonb #> '{99999999999}'",
     [(None,)]),
    ('select 1/x, generate_series(1, 0) from (select 0 as x) s',
     ('22012', 'division by zero', None, None)),
    ("select (1, 'a') < (1, 'b'), (2, null) > (1, 5), (1, null) = (1, null)",
     [(True, True, None)]),
    ('drop table ra, rb, rj',
     'DROP TABLE'),
]


def test_whole_rows_comparisons_and_paths(server):
    with server.connect() as c:
        c.execute("drop table if exists ra, rb, rj")
        c.execute("drop sequence if exists rs")
        try:
            run_steps(c, CASES)
        finally:
            c.execute("drop table if exists ra, rb, rj")
            c.execute("drop sequence if exists rs")
