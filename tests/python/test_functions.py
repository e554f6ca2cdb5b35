"""Window functions (row_number, rank, dense_rank, and aggregates over partitions,
with and without ORDER BY), nullif, aggregates with ORDER BY (array_agg,
string_agg) and DISTINCT, bool_and/bool_or/every, set-returning functions in the select list (unnest, generate_series,
generate_subscripts, in lockstep), JSON construction (json_build_object,
json_build_array, to_json, the json type), greatest/least and left, right, lpad, rpad,
split_part, date_trunc, current_date and localtimestamp, aggregates with FILTER (over
windows too), variance and stddev (sample and population), bit_and and bit_or,
percentile_cont, percentile_disc and mode (WITHIN GROUP), and windows over a grouped
query's groups. The expectations were taken from
PostgreSQL 15 and hold there too."""

from __future__ import annotations

from decimal import Decimal

import psycopg
import pytest

from conftest import module_tables

SETUP = [
    "create table qa (id int primary key, g int, s text)",
    "insert into qa values (1, 1, 'a'), (2, 1, 'b'), (3, 2, 'c'), (4, null, null), (5, 3, 'e')",
]

QUERIES = [
    ('select array_agg(id order by id desc) from qa',
     [([5, 4, 3, 2, 1],)]),
    ('select g, array_agg(s order by s nulls first) from qa group by g order by g nulls first',
     [(None, [None]), (1, ['a', 'b']), (2, ['c']), (3, ['e'])]),
    ("select string_agg(s, ',' order by id desc) from qa",
     [('e,c,b,a',)]),
    ('select bool_and(id > 0), bool_or(id > 4), every(id > 1) from qa',
     [(True, True, False)]),
    ('select array_agg(id) from qa where false',
     [(None,)]),
    ('select unnest(array[1,2,3]) as u',
     [(1,), (2,), (3,)]),
    ("select id, unnest(array['a','b']) from qa where id < 3 order by id, 2",
     [(1, 'a'), (1, 'b'), (2, 'a'), (2, 'b')]),
    ("select unnest(array[1,2]), unnest(array['x','y','z'])",
     [(1, 'x'), (2, 'y'), (None, 'z')]),
    ("select generate_series(1, 3), generate_subscripts(array['a','b'], 1)",
     [(1, 1), (2, 2), (3, None)]),
    ("select json_build_object('a', 1, 'b', 'x', 'c', null, 'd', true, 'e', 1.50)::text",
     [('{"a" : 1, "b" : "x", "c" : null, "d" : true, "e" : 1.50}',)]),
    ("select json_build_array(1, 'two', null, array[1,2], json_build_object('k', 'v'))::text",
     [('[1, "two", null, [1,2], {"k" : "v"}]',)]),
    ('select to_json(\'a"b\\c\'::text)::text, to_json(3)::text, to_json(array[\'x\', null])::text',
     [('"a\\"b\\\\c"', '3', '["x",null]')]),
    ('select \'  {"x" :1}  \'::json::text',
     [('  {"x" :1}  ',)]),
    ("select to_json('2024-01-02 03:04:05+00'::timestamptz)::text, to_json('2024-01-02 03:04:05'::timestamp)::text",
     [('"2024-01-02T03:04:05+00:00"', '"2024-01-02T03:04:05"')]),
    ('select min(s), max(s) from qa',
     [('a', 'e')]),
    ('select id, g, row_number() over (partition by g order by id desc), rank() over (order by g), dense_rank() over (order by g nulls first) from qa order by id',
     [(1, 1, 2, 1, 2), (2, 1, 1, 1, 2), (3, 2, 1, 3, 3), (4, None, 1, 5, 1), (5, 3, 1, 4, 4)]),
    ('select id, sum(id) over (partition by g), count(*) over (), sum(id) over (order by id), avg(id) over (partition by g order by id) from qa order by id',
     [(1, 3, 5, 1, Decimal('1.00000000000000000000')), (2, 3, 5, 3, Decimal('1.5000000000000000')), (3, 3, 5, 6, Decimal('3.0000000000000000')), (4, 4, 5, 10, Decimal('4.0000000000000000')), (5, 5, 5, 15, Decimal('5.0000000000000000'))]),
    ('select id, max(s) over (order by g) from qa order by id',
     [(1, 'b'), (2, 'b'), (3, 'c'), (4, 'e'), (5, 'e')]),
    ('select id, row_number() over () as rn from qa where id > 2 order by rn desc limit 2',
     [(5, 3), (4, 2)]),
    ('select * from (select id, row_number() over (order by id) as r from qa) t where r = 3',
     [(3, 3)]),
    ("select nullif(1, 1), nullif(1, 2), nullif('a', 'b'), nullif(null::int, 1)",
     [(None, 1, 'a', None)]),
    ('select id, count(s) over (partition by g order by id) from qa order by id',
     [(1, 1), (2, 2), (3, 1), (4, 0), (5, 1)]),
    ('select count(distinct g), count(distinct s), sum(distinct g) from qa',
     [(3, 4, 6)]),
    ('select array_agg(distinct g) from qa',
     [([1, 2, 3, None],)]),
    ("select string_agg(distinct s, ',' order by s desc) from qa",
     [('e,c,b,a',)]),
    ('select g, count(distinct s) from qa group by g order by g nulls first',
     [(None, 0), (1, 2), (2, 1), (3, 1)]),
    ("select greatest(1, 2, null, 3), least(1, 2, null, 0), greatest(null, null::int), greatest('a', 'b'), least(1, 2.5)",
     [(3, 0, None, 'b', Decimal('1'))]),
    ('select id, greatest(g, 2), least(s, \'b\') from qa order by id',
     [(1, 2, 'a'), (2, 2, 'b'), (3, 2, 'b'), (4, 2, 'b'), (5, 3, 'b')]),
    ("select left('abcdef', 2), left('abcdef', -2), left('ab', 10), right('abcdef', 2), right('abcdef', -2), left('', 3)",
     [('ab', 'abcd', 'ab', 'ef', 'cdef', '')]),
    ("select lpad('1', 3, '0'), lpad('hello', 3), rpad('ab', 5, 'xy'), lpad('ab', 5), rpad('ab', 1), lpad('ab', -1), lpad('ab', 4, '')",
     [('001', 'hel', 'abxyx', '   ab', 'a', '', 'ab')]),
    ("select split_part('a,b,c', ',', 2), split_part('a,b,c', ',', 5), split_part('a,b,c', ',', -1), split_part('abc', '', 1), split_part('a,,b', ',', 2)",
     [('b', '', 'c', 'abc', '')]),
    ("select left(null, 2), lpad('a', null), split_part(s, 'x', 1) from qa where id = 4",
     [(None, None, None)]),
    ("select date_trunc('hour', timestamp '2024-05-17 13:45:12.5')::text, date_trunc('week', timestamp '2024-05-19 23:00')::text,"
     " date_trunc('week', timestamp '2024-05-20')::text, date_trunc('quarter', timestamp '2024-05-17')::text,"
     " date_trunc('century', timestamp '2000-05-17')::text, date_trunc('MS', timestamp '2024-05-17 13:45:12.123456')::text",
     [('2024-05-17 13:00:00', '2024-05-13 00:00:00', '2024-05-20 00:00:00', '2024-04-01 00:00:00',
       '1901-01-01 00:00:00', '2024-05-17 13:45:12.123')]),
    ("select date_trunc('day', timestamptz '2024-05-17 13:45:12+00')::text, date_trunc('month', date '2024-05-17')::text,"
     " date_trunc('day', 'infinity'::timestamp)::text, date_trunc('year', timestamp '0044-03-15 BC')::text",
     [('2024-05-17 00:00:00+00', '2024-05-01 00:00:00+00', 'infinity', '0044-01-01 00:00:00 BC')]),
    ('select count(*) filter (where id > 1), sum(id) filter (where id % 2 = 1), count(*), avg(id) filter (where false),'
     ' count(*) filter (where null) from qa',
     [(4, 9, 5, None, 0)]),
    ("select g, count(*) filter (where id > 1), array_agg(id order by id desc) filter (where id <> 2),"
     " string_agg(s, ',') filter (where s < 'c'), count(distinct s) filter (where id > 1) from qa group by g order by g nulls first",
     [(None, 1, [4], None, 0), (1, 1, [1], 'a,b', 1), (2, 1, [3], None, 1), (3, 1, [5], None, 1)]),
    ("select pg_typeof(date_trunc('day', now()))::text, pg_typeof(date_trunc('day', localtimestamp))::text,"
     " pg_typeof(current_date)::text, current_date = now()::date",
     [('timestamp with time zone', 'timestamp without time zone', 'date', True)]),
    # Variances and standard deviations (numeric at PostgreSQL's scales; floats by
    # Youngs-Cramer), bit_and and bit_or.
    ("select variance(x), stddev(x), var_pop(x), stddev_pop(x), stddev(x::float8), variance(x::float4),"
     " bit_and(x), bit_or(x) from generate_series(1, 10) x",
     [(Decimal('9.1666666666666667'), Decimal('3.0276503540974917'), Decimal('8.2500000000000000'),
       Decimal('2.8722813232690143'), 3.0276503540974917, 9.166666666666666, 0, 15)]),
    ("select variance(x), stddev(x) from (values (1.5), (2.25), (7.125)) v(x)",
     [(Decimal('9.3281250000000000'), Decimal('3.0541979307176541'))]),
    ("select variance(id), stddev_pop(id), stddev(g::float8) from qa where id = 1",
     [(None, Decimal('0'), None)]),
    # FILTER on window aggregates: the frame's rows the condition holds for.
    ("select id, count(*) filter (where g = 1) over (), sum(id) filter (where id > 2) over (order by id),"
     " array_agg(s) filter (where s > 'a') over (partition by g order by id rows between 1 preceding and current row)"
     " from qa order by id",
     [(1, 2, None, None), (2, 2, None, ['b']), (3, 2, 3, ['c']), (4, 2, 7, None), (5, 2, 12, ['e'])]),
    # Windows over groups; the ordered-set aggregates (WITHIN GROUP).
    ('select g, row_number() over (order by g), count(*) from qa group by g order by g',
     [(1, 1, 2), (2, 2, 1), (3, 3, 1), (None, 4, 1)]),
    ('select percentile_cont(0.5) within group (order by id), percentile_disc(0.5) within group (order by id), mode() within group (order by g), percentile_cont(0.25) within group (order by g desc) from qa',
     [(3.0, 3, 1, 2.25)]),
    ('select g, percentile_cont(0.5) within group (order by id), percentile_disc(1) within group (order by s) from qa group by g order by g',
     [(1, 1.5, 'b'), (2, 3.0, 'c'), (3, 5.0, 'e'), (None, 4.0, None)]),
    ("select percentile_cont(0.5) within group (order by v)::text, percentile_cont(0.5) within group (order by n) from (values (interval '1 hour', 1.5), ('3 hours', 2.5), (null, null)) t(v, n)",
     [('02:00:00', 2.0)]),
    ('select percentile_cont(0.5) within group (order by id) filter (where g = 1), percentile_cont(null) within group (order by id), mode() within group (order by s) from qa',
     [(1.5, None, 'a')]),
    ('select percentile_cont(0.5) within group (order by id) from qa where false',
     [(None,)]),
]

ERRORS = [
    ('select id from qa where row_number() over () > 1', '42P20', 'window functions are not allowed in WHERE'),
    ('select id from qa where unnest(array[1]) = 1', '0A000', 'set-returning functions are not allowed in WHERE'),
    ("select '[1,2'::json", '22P02', 'invalid input syntax for type json'),
    ('select \'{"a": 1}\'::json = \'{"a": 1}\'::json', '42883', 'operator does not exist: json = json'),
    ("select json_build_object('a')", '22023', 'argument list must have even number of elements'),
    ('select json_build_object(null, 1)', '22023', 'argument 1 cannot be null'),
    ('select array_agg(distinct g order by id) from qa', '42P10',
     'in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list'),
    ('select lower(distinct s) from qa', '42809', 'DISTINCT specified, but lower is not an aggregate function'),
    ("select split_part('a,b', ',', 0)", '22023', 'field position must not be zero'),
    ("select greatest(1, 'x')", '22P02', 'invalid input syntax for type integer: "x"'),
    ("select date_trunc('dow', timestamp '2024-05-17')", '22023',
     'unit "dow" not recognized for type timestamp without time zone'),
    ("select date_trunc('day', '2024-05-17')", '42725', 'function date_trunc(unknown, unknown) is not unique'),
    ("select lower(s) filter (where true) from qa", '42809', 'FILTER specified, but lower is not an aggregate function'),
    ('select count(*) filter (where count(*) > 1) from qa', '42803', 'aggregate functions are not allowed in FILTER'),
    ('select count(*) filter (where 1) from qa', '42804', 'argument of FILTER must be type boolean, not type integer'),
    ('select sum(id) filter (where count(*) > 1) over () from qa', '42803', 'aggregate functions are not allowed in FILTER'),
    ('select lag(id) filter (where true) over () from qa', '0A000',
     'FILTER is not implemented for non-aggregate window functions'),
    ('select percentile_cont(1.5) within group (order by id) from qa', '22003',
     'percentile value 1.5 is not between 0 and 1'),
    ('select percentile_cont(0.5) from qa', '42883',
     'function percentile_cont(numeric) does not exist'),
    ('select sum(id) within group (order by id) from qa', '42883',
     'function sum(integer, integer) does not exist'),
    ('select percentile_cont(0.5) within group (order by s) from qa', '42883',
     'function percentile_cont(numeric, text) does not exist'),
]


@pytest.fixture(scope="module")
def tables(server):
    yield from module_tables(server, "qa", SETUP)


@pytest.mark.parametrize("sql, rows", QUERIES)
def test_function(tables, conn, sql, rows):
    assert conn.execute(sql).fetchall() == rows


@pytest.mark.parametrize("sql, sqlstate, message", ERRORS)
def test_function_errors(tables, conn, sql, sqlstate, message):
    with pytest.raises(psycopg.Error) as ei:
        conn.execute(sql)
    assert (ei.value.sqlstate, ei.value.diag.message_primary) == (sqlstate, message)


def test_json_column(db, conn):
    """A json column keeps the text as written; invalid JSON is refused."""
    t = db.table("js")
    conn.execute(f"create table {t} (id int primary key, doc json)")
    conn.execute(f"insert into {t} values (1, %s)", ('{"a" : [1, 2]}',))
    assert conn.execute(f"select doc::text, doc from {t}").fetchall() == [
        ('{"a" : [1, 2]}', {"a": [1, 2]})
    ]
    with pytest.raises(psycopg.Error) as ei:
        conn.execute(f"insert into {t} values (2, '{{oops')")
    assert ei.value.sqlstate == "22P02"
