"""jsonb: input and output (key order, escapes, numbers, errors), the operators, ordering
and equality (keys, indexes, DISTINCT, GROUP BY), the functions, casts to SQL scalars, and
a jsonb column through literals, parameters (text and binary), UPDATE and COPY. Every
expectation is PostgreSQL 15's."""

from __future__ import annotations

from decimal import Decimal

import psycopg
import pytest
from psycopg.adapt import Loader
from psycopg.types.json import Jsonb

from conftest import run_steps, run_steps_clean


IO = [
    # objects: keys ordered by length, then bytewise; a repeated key keeps its last value
    (r"""select '{"b": 1, "a": 2, "aa": 3, "B": 4, "ab": {"z": 1, "y": 2}}'::jsonb::text""",
     [('{"B": 4, "a": 2, "b": 1, "aa": 3, "ab": {"y": 2, "z": 1}}',)]),
    (r"""select '{"a": 1, "b": 2, "a": 3}'::jsonb::text, '{"a": {"x": 1}, "a": [2]}'::jsonb::text""",
     [('{"a": 3, "b": 2}', '{"a": [2]}')]),
    (r"""select '{"é": 1, "z": 2, "": 3}'::jsonb::text""", [('{"": 3, "z": 2, "é": 1}',)]),
    (r"""select '{}'::jsonb::text, '[]'::jsonb::text, '[[]]'::jsonb::text, '{"a": {}}'::jsonb::text""",
     [('{}', '[]', '[[]]', '{"a": {}}')]),
    (r"""select '[1, "two", [3, [4]], {"five": 5}, null, true, false]'::jsonb::text, '[[[[["deep"]]]]]'::jsonb::text, '{"a": {"b": {"c": {"d": [1, {"e": null}]}}}}'::jsonb::text""",
     [('[1, "two", [3, [4]], {"five": 5}, null, true, false]', '[[[[["deep"]]]]]', '{"a": {"b": {"c": {"d": [1, {"e": null}]}}}}')]),
    # strings: escapes are decoded on input and re-escaped on output
    (r"""select '"a\nb\"c\\d\u00e9\te"'::jsonb::text, '"\b\f\r\/"'::jsonb::text""",
     [(r'"a\nb\"c\\dé\te"', r'"\b\f\r/"')]),
    (r"""select '"\u0001\u001f\u007f"'::jsonb::text, '"\u00E9\u4e2d\ud83d\ude00"'::jsonb::text, '""'::jsonb::text""",
     [('"\\u0001\\u001f\x7f"', '"é中😀"', '""')]),
    (r"""select '"a\nb\"c\\d\u00e9\te"'::jsonb #>> '{}'""", [('a\nb"c\\dé\te',)]),
    # numbers: kept as numeric, with its scale; exponents are expanded
    ("select '1.50'::jsonb::text, '1e2'::jsonb::text, '1E+2'::jsonb::text, '-0'::jsonb::text, '1.0e-2'::jsonb::text, '-1.5e-3'::jsonb::text",
     [('1.50', '100', '100', '0', '0.010', '-0.0015')]),
    ("select '0'::jsonb::text, '-12'::jsonb::text, '0.1e1'::jsonb::text, '[1.0, 1e-5, 2.5E3]'::jsonb::text, '1234567890123456789012345678'::jsonb::text, '-98765432109876543210.123456'::jsonb::text",
     [('0', '-12', '1', '[1.0, 0.00001, 2500]', '1234567890123456789012345678', '-98765432109876543210.123456')]),
    (r"""select 'true'::jsonb::text, 'false'::jsonb::text, 'null'::jsonb::text, '"null"'::jsonb::text""",
     [('true', 'false', 'null', '"null"')]),
    # whitespace between tokens is dropped; output uses ", " and ": "
    (r"""select '  { "a" : [ 1 , 2 ] ,"b":{ } }  '::jsonb::text""", [('{"a": [1, 2], "b": {}}',)]),
    (r"""select E'\n\t{"a":\r\n 1}\n'::jsonb::text""", [('{"a": 1}',)]),
    # invalid input
    ("select ''::jsonb", ('22P02', 'invalid input syntax for type json')),
    (r"""select '{"a"}'::jsonb""", ('22P02', 'invalid input syntax for type json')),
    (r"""select '{"a": 1,}'::jsonb""", ('22P02', 'invalid input syntax for type json')),
    ("select '{''a'': 1}'::jsonb", ('22P02', 'invalid input syntax for type json')),
    ("select 'TRUE'::jsonb", ('22P02', 'invalid input syntax for type json')),
    ("select '[1] x'::jsonb", ('22P02', 'invalid input syntax for type json')),
    ("select '01'::jsonb", ('22P02', 'invalid input syntax for type json')),
    ("select '+1'::jsonb", ('22P02', 'invalid input syntax for type json')),
    ("select 'NaN'::jsonb", ('22P02', 'invalid input syntax for type json')),
    (r"""select '"\x"'::jsonb""", ('22P02', 'invalid input syntax for type json')),
    # a lone surrogate, and a raw control character inside a string
    (r"""select '"\ud83d"'::jsonb""", ('22P02', 'invalid input syntax for type json')),
    (r"""select E'"a\tb"'::jsonb""", ('22P02', 'invalid input syntax for type json')),
    (r"""select '"\u0000"'::jsonb""", ('22P05', 'unsupported Unicode escape sequence')),
    # casts between text, json and jsonb; json keeps its input text as it was
    (r"""select '{"b": 1, "a": [1, 2]}'::text::jsonb::text, cast('[1,2]'::jsonb as text)""",
     [('{"a": [1, 2], "b": 1}', '[1, 2]')]),
    (r"""select '{"b":1,  "a":2, "b":3}'::json::text, '{"b":1,  "a":2, "b":3}'::json::jsonb::text""",
     [('{"b":1,  "a":2, "b":3}', '{"a": 2, "b": 3}')]),
    (r"""select '{"b":1,"a":2}'::jsonb::json::text, '[1.50,  "x"]'::json::jsonb::json::text""",
     [('{"a": 2, "b": 1}', '[1.50, "x"]')]),
    ("select pg_typeof('1'::jsonb), pg_typeof('1'::jsonb::json), pg_typeof('1'::json::jsonb)",
     [('jsonb', 'json', 'jsonb')]),
    (r"""select '{"a": [1, 2.5, null, true, "s"]}'::jsonb, '"s"'::jsonb, null::jsonb""",
     [({'a': [1, 2.5, None, True, 's']}, 's', None)]),
]


def test_jsonb_input_and_output(conn):
    """Text in, canonical text out: object keys sorted by length then bytes, the last of
    repeated keys kept, escapes re-made, numbers as numeric; invalid input; json casts."""
    run_steps(conn, IO)


OPS = [
    # -> by key and by index (negative counts from the end); the wrong kind gives NULL
    (r"""select ('{"a": {"b": [10, 20, 30]}}'::jsonb -> 'a')::text, ('{"a": {"b": [10, 20, 30]}}'::jsonb -> 'a' -> 'b' -> 1)::text, ('{"a": 1}'::jsonb -> 'z')::text""",
     [('{"b": [10, 20, 30]}', '20', None)]),
    ("select ('[10, 20, 30]'::jsonb -> 0)::text, ('[10, 20, 30]'::jsonb -> -1)::text, ('[10, 20, 30]'::jsonb -> -3)::text, ('[10, 20, 30]'::jsonb -> -4)::text, ('[10, 20, 30]'::jsonb -> 3)::text",
     [('10', '30', '10', None, None)]),
    # surprising but PostgreSQL's: a top-level scalar answers -> 0 with itself (it is stored as a one-element array)
    (r"""select ('{"a": 1}'::jsonb -> 0)::text, ('[1]'::jsonb -> 'a')::text, ('"s"'::jsonb -> 0)::text, ('"s"'::jsonb -> 's')::text, ('{"0": "x"}'::jsonb -> '0')::text""",
     [(None, None, '"s"', None, '"x"')]),
    (r"""select ('{"a": null}'::jsonb -> 'a')::text, ('{"a": null}'::jsonb -> 'a') is null, ('{"a": null}'::jsonb ->> 'a') is null""",
     [('null', False, True)]),
    # ->> returns text: strings unquoted and unescaped, other values as JSON text
    (r"""select '{"a": "x\ny", "c": 1.50, "d": [1, "2"], "e": {"f": true}, "g": false}'::jsonb ->> 'a', '{"c": 1.50}'::jsonb ->> 'c', '{"d": [1, "2"]}'::jsonb ->> 'd', '{"e": {"f": true}}'::jsonb ->> 'e', '{"g": false}'::jsonb ->> 'g'""",
     [('x\ny', '1.50', '[1, "2"]', '{"f": true}', 'false')]),
    (r"""select '["a", "b"]'::jsonb ->> 1, '["a", "b"]'::jsonb ->> -2, '["a", "b"]'::jsonb ->> 2, '{"a": 1}'::jsonb ->> 'b'""",
     [('b', 'a', None, None)]),
    # #> and #>> with text[] paths
    (r"""select ('{"a": {"b": [10, {"c": "d"}]}}'::jsonb #> '{a,b,1,c}')::text, ('{"a": {"b": [10, {"c": "d"}]}}'::jsonb #> '{a,b,1}')::text, ('{"a": {"b": [10, {"c": "d"}]}}'::jsonb #> '{a,b,-1,c}')::text""",
     [('"d"', '{"c": "d"}', '"d"')]),
    (r"""select ('{"a": {"b": [10, 20]}}'::jsonb #> '{a,x}')::text, ('{"a": {"b": [10, 20]}}'::jsonb #> '{a,b,x}')::text, ('{"a": {"b": [10, 20]}}'::jsonb #> '{a,b,5}')::text, ('{"a": {"b": [10, 20]}}'::jsonb #> '{}')::text""",
     [(None, None, None, '{"a": {"b": [10, 20]}}')]),
    (r"""select '{"a": {"b": [10, {"c": "d"}]}}'::jsonb #>> '{a,b,1,c}', '{"a": {"b": [10, 20]}}'::jsonb #>> '{a,b}', '"x"'::jsonb #>> '{}', '{"a": null}'::jsonb #>> '{a}'""",
     [('d', '[10, 20]', 'x', None)]),
    (r"""select ('[[1, 2], [3, 4]]'::jsonb #> '{1,0}')::text, ('[[1, 2], [3, 4]]'::jsonb #> array['0', '1'])::text, ('{"1": {"2": "k"}}'::jsonb #>> '{1,2}')""",
     [('3', '2', 'k')]),
    # containment
    (r"""select '{"a": 1, "b": {"c": [1, 2, 3], "d": "x"}}'::jsonb @> '{"b": {"c": [3]}}', '{"a": 1}'::jsonb @> '{"a": 1, "b": 2}', '{"a": 1, "b": 2}'::jsonb @> '{}', '{"a": [1, 2]}'::jsonb @> '{"a": 1}'""",
     [(True, False, True, False)]),
    (r"""select '[1, 2, [3, 4]]'::jsonb @> '[[3]]', '[1, 2, [3, 4]]'::jsonb @> '[3]', '[1, 1, 2]'::jsonb @> '[2, 2, 1]', '[1, 2]'::jsonb @> '[]', '[{"a": 1, "b": 2}]'::jsonb @> '[{"a": 1}]'""",
     [(True, False, True, True, True)]),
    # a top-level array contains a top-level scalar that is one of its elements, not the other way round
    (r"""select '["a", "b"]'::jsonb @> '"a"', '"a"'::jsonb @> '["a"]', '"a"'::jsonb @> '"a"', '1'::jsonb @> '1.0', '[1]'::jsonb @> '1'""",
     [(True, False, True, True, True)]),
    (r"""select '{"b": {"c": [3]}}'::jsonb <@ '{"a": 1, "b": {"c": [1, 2, 3]}}', '[1, 2]'::jsonb <@ '[1]', '"a"'::jsonb <@ '["a"]', '{"a": 1}'::jsonb <@ '[{"a": 1}]'""",
     [(True, False, True, False)]),
    # existence: object keys, array elements that are strings, a top-level string
    (r"""select '{"a": 1, "b": null}'::jsonb ? 'b', '{"a": {"b": 1}}'::jsonb ? 'b', '["a", "b"]'::jsonb ? 'a', '[1, "2"]'::jsonb ? '1', '[["a"]]'::jsonb ? 'a', '"a"'::jsonb ? 'a', '1'::jsonb ? '1'""",
     [(True, False, True, False, False, True, False)]),
    (r"""select '{"a": 1, "b": 2}'::jsonb ?| array['b', 'z'], '{"a": 1, "b": 2}'::jsonb ?| array['x', 'y'], '["x", "y"]'::jsonb ?| array['y'], '{"a": 1}'::jsonb ?| '{}'::text[]""",
     [(True, False, True, False)]),
    (r"""select '{"a": 1, "b": 2}'::jsonb ?& array['a', 'b'], '{"a": 1, "b": 2}'::jsonb ?& array['a', 'z'], '["x", "y"]'::jsonb ?& array['y', 'x'], '{"a": 1}'::jsonb ?& '{}'::text[]""",
     [(True, False, True, True)]),
    # || merges objects (top level only), concatenates arrays, wraps anything else in an array
    (r"""select ('{"a": 1, "b": 2}'::jsonb || '{"b": 3, "c": 4}')::text, ('{"a": {"x": 1}}'::jsonb || '{"a": {"y": 2}}')::text, ('{}'::jsonb || '{"a": 1}')::text""",
     [('{"a": 1, "b": 3, "c": 4}', '{"a": {"y": 2}}', '{"a": 1}')]),
    (r"""select ('[1, 2]'::jsonb || '[3, [4]]')::text, ('[1]'::jsonb || '2')::text, ('1'::jsonb || '2')::text, ('"a"'::jsonb || 'null')::text, ('[]'::jsonb || '[]')::text""",
     [('[1, 2, 3, [4]]', '[1, 2]', '[1, 2]', '["a", null]', '[]')]),
    (r"""select ('{"a": 1}'::jsonb || '[2]')::text, ('[2]'::jsonb || '{"a": 1}')::text, ('"a"'::jsonb || '{"b": 1}')::text, ('{"b": 1}'::jsonb || '"a"')::text""",
     [('[{"a": 1}, 2]', '[2, {"a": 1}]', '["a", {"b": 1}]', '[{"b": 1}, "a"]')]),
    # - key, - index, - keys, #- path
    (r"""select ('{"a": 1, "b": 2}'::jsonb - 'a')::text, ('["a", "b", "a", 1, ["a"]]'::jsonb - 'a')::text, ('{"a": 1}'::jsonb - 'z')::text, ('{"a": {"b": 1}}'::jsonb - 'b')::text""",
     [('{"b": 2}', '["b", 1, ["a"]]', '{"a": 1}', '{"a": {"b": 1}}')]),
    ("select ('[1, 2, 3]'::jsonb - 1)::text, ('[1, 2, 3]'::jsonb - -1)::text, ('[1, 2, 3]'::jsonb - 5)::text, ('[1, 2, 3]'::jsonb - -4)::text, ('[]'::jsonb - 0)::text",
     [('[1, 3]', '[1, 2]', '[1, 2, 3]', '[1, 2, 3]', '[]')]),
    (r"""select ('{"a": 1, "b": 2, "c": 3}'::jsonb - '{a,c,z}'::text[])::text, ('["a", "b", "c"]'::jsonb - array['a', 'c'])::text, ('{"a": 1}'::jsonb - '{}'::text[])::text""",
     [('{"b": 2}', '["b"]', '{"a": 1}')]),
    (r"""select ('{"a": {"b": [1, 2, 3]}}'::jsonb #- '{a,b,0}')::text, ('{"a": {"b": [1, 2, 3]}}'::jsonb #- '{a,b,-1}')::text, ('{"a": {"b": [1, 2, 3]}}'::jsonb #- '{a}')::text, ('{"a": {"b": [1, 2, 3]}}'::jsonb #- '{x,y}')::text""",
     [('{"a": {"b": [2, 3]}}', '{"a": {"b": [1, 2]}}', '{}', '{"a": {"b": [1, 2, 3]}}')]),
    (r"""select ('[0, {"k": 1, "j": 2}]'::jsonb #- '{1,k}')::text, ('{"a": 1}'::jsonb #- '{}')::text""",
     [('[0, {"j": 2}]', '{"a": 1}')]),
    ("select '1'::jsonb - 0", ('22023', 'cannot delete from scalar')),
    (r"""select '"a"'::jsonb - 'a'""", ('22023', 'cannot delete from scalar')),
    (r"""select '{"a": 1}'::jsonb - 0""", ('22023', 'cannot delete from object using integer index')),
    ("select '1'::jsonb #- '{a}'", ('22023', 'cannot delete path in scalar')),
    (r"""select '{"a": [1, 2]}'::jsonb #- '{a,x}'""",
     ('22P02', 'path element at position 2 is not an integer: "x"')),
    (r"""select null::jsonb -> 'a', '{"a": 1}'::jsonb -> null::text, '{"a": 1}'::jsonb @> null""",
     [(None, None, None)]),
]


def test_jsonb_operators(conn):
    """-> ->> #> #>> @> <@ ? ?| ?& || - #- and their errors."""
    run_steps(conn, OPS)


CMP = [
    (r"""select '{"a": 1, "b": 2}'::jsonb = '{"b": 2, "a": 1}', '[1, 2]'::jsonb = '[2, 1]', '1.0'::jsonb = '1', '1.50'::jsonb = '1.5', '"a"'::jsonb <> '"b"', 'null'::jsonb = 'null'""",
     [(True, False, True, True, True, True)]),
    (r"""select '{"a": 1}'::jsonb < '{"a": 2}', '{"b": 1}'::jsonb < '{"a": 1, "b": 1}', '[1, 2]'::jsonb < '[3]', '"b"'::jsonb < '"ab"', 'false'::jsonb < 'true', '10'::jsonb > '9', '"10"'::jsonb > '"9"'""",
     [(True, True, False, False, True, True, False)]),
    (r"""select 'null'::jsonb < '"a"', '"z"'::jsonb < '0', '0'::jsonb < 'false', 'true'::jsonb < '[]', '[]'::jsonb < 'null', '["a"]'::jsonb < '{}', '{}'::jsonb >= '[[1, 2, 3]]'""",
     [(True, True, True, False, True, True, True)]),
    ('create table jb_cmp (id int primary key, v jsonb)', 'CREATE TABLE'),
    (r"""insert into jb_cmp values (1, '{"b": 1}'), (2, '{"a": 1, "b": 1}'), (3, '{"a": 2}'), (4, '[1, 2]'), (5, '[3]'), (6, '[]'), (7, '"b"'), (8, '"ab"'), (9, '10'), (10, '9.5'), (11, 'true'), (12, 'false'), (13, 'null'), (14, '{}'), (15, '[null]'), (16, null), (17, '{"b": 1}'), (18, '1.0'), (19, '1'), (20, '[{"a": 1}]')""",
     'INSERT 0 20'),
    # objects > arrays > booleans > numbers > strings > null, except that an empty top-level array sorts below null
    ('select id, v::text as t from jb_cmp order by v, id',
     [(6, '[]'), (13, 'null'), (8, '"ab"'), (7, '"b"'), (18, '1.0'), (19, '1'), (10, '9.5'), (9, '10'), (12, 'false'), (11, 'true'), (15, '[null]'), (5, '[3]'), (20, '[{"a": 1}]'), (4, '[1, 2]'), (14, '{}'), (3, '{"a": 2}'), (1, '{"b": 1}'), (17, '{"b": 1}'), (2, '{"a": 1, "b": 1}'), (16, None)]),
    ('select id, v::text as t from jb_cmp order by v desc, id limit 5',
     [(16, None), (2, '{"a": 1, "b": 1}'), (1, '{"b": 1}'), (17, '{"b": 1}'), (3, '{"a": 2}')]),
    ('select count(distinct v), count(v), count(*) from jb_cmp', [(17, 19, 20)]),
    ('select count(*) from (select distinct v from jb_cmp where id in (1, 17, 18, 19, 9)) d', [(3,)]),
    ('select min(id), count(*) from jb_cmp group by v having count(*) > 1 order by v', [(18, 2), (1, 2)]),
    ('select max(v) from jb_cmp', ('42883', 'function max(jsonb) does not exist')),
    ('create index jb_cmp_v on jb_cmp (v)', 'CREATE INDEX'),
    (r"""select id from jb_cmp where v = '{"b": 1}' order by id""", [(1,), (17,)]),
    ("select id from jb_cmp where v = '1' order by id", [(18,), (19,)]),
    (r"""select id, v::text as t from jb_cmp where v between '"a"' and '10' order by v, id""",
     [(8, '"ab"'), (7, '"b"'), (18, '1.0'), (19, '1'), (10, '9.5'), (9, '10')]),
    ('create table jb_pk (k jsonb primary key, n int)', 'CREATE TABLE'),
    (r"""insert into jb_pk values ('{"a": 1, "b": [1, 2]}', 1), ('[1, 2]', 2), ('"x"', 3), ('1.5', 4)""",
     'INSERT 0 4'),
    (r"""insert into jb_pk values ('{"b": [1, 2], "a": 1}', 5)""",
     ('23505', 'duplicate key value violates unique constraint "jb_pk_pkey"', 'Key (k)=({"a": 1, "b": [1, 2]}) already exists.', 'jb_pk_pkey')),
    ("insert into jb_pk values ('1.50', 6)",
     ('23505', 'duplicate key value violates unique constraint "jb_pk_pkey"', 'Key (k)=(1.50) already exists.', 'jb_pk_pkey')),
    ("insert into jb_pk values ('[2, 1]', 7)", 'INSERT 0 1'),
    (r"""select n from jb_pk where k = '{"b": [1, 2], "a": 1}'""", [(1,)]),
    ('select k::text as t, n from jb_pk order by k',
     [('"x"', 3), ('1.5', 4), ('[1, 2]', 2), ('[2, 1]', 7), ('{"a": 1, "b": [1, 2]}', 1)]),
    ('create table jb_u (id int primary key, doc jsonb)', 'CREATE TABLE'),
    ('create unique index jb_u_doc on jb_u (doc)', 'CREATE INDEX'),
    (r"""insert into jb_u values (1, '{"k": "v"}'), (2, '{"k": "w"}'), (3, null), (4, null)""", 'INSERT 0 4'),
    (r"""insert into jb_u values (5, '{ "k" : "v" }')""",
     ('23505', 'duplicate key value violates unique constraint "jb_u_doc"', 'Key (doc)=({"k": "v"}) already exists.', 'jb_u_doc')),
    (r"""update jb_u set doc = '{"k": "v"}' where id = 2""",
     ('23505', 'duplicate key value violates unique constraint "jb_u_doc"', 'Key (doc)=({"k": "v"}) already exists.', 'jb_u_doc')),
    ('select id, doc::text from jb_u order by id',
     [(1, '{"k": "v"}'), (2, '{"k": "w"}'), (3, None), (4, None)]),
    ('drop table jb_cmp, jb_pk, jb_u', 'DROP TABLE'),
]


def test_jsonb_comparison_ordering_and_keys(server):
    """Equality and btree ordering of jsonb; DISTINCT, GROUP BY, primary key, unique and
    plain indexes on a jsonb column."""
    run_steps_clean(server, CMP, ["drop table if exists jb_cmp, jb_pk, jb_u"])


FUNCS = [
    (r"""select jsonb_typeof('{"a": 1}'), jsonb_typeof('[1]'), jsonb_typeof('"s"'), jsonb_typeof('1.5'), jsonb_typeof('true'), jsonb_typeof('null'), jsonb_typeof(null)""",
     [('object', 'array', 'string', 'number', 'boolean', 'null', None)]),
    (r"""select jsonb_array_length('[1, [2, 3], {"a": 4}, null]'), jsonb_array_length('[]')""", [(4, 0)]),
    (r"""select jsonb_array_length('{"a": 1}')""", ('22023', 'cannot get array length of a non-array')),
    ("select jsonb_array_length('5')", ('22023', 'cannot get array length of a scalar')),
    # set-returning functions: rows come in the stored order (keys by length, then bytes)
    (r"""select k from jsonb_object_keys('{"bb": 1, "a": 2, "c": {"x": 1}, "a": 3}') with ordinality as t(k, n) order by n""",
     [('a',), ('c',), ('bb',)]),
    ("select jsonb_object_keys('[1, 2]')", ('22023', 'cannot call jsonb_object_keys on an array')),
    (r"""select key, value::text as v, jsonb_typeof(value) from jsonb_each('{"b": "x", "a": 1, "c": null, "d": [1, {"e": 2}]}') order by key""",
     [('a', '1', 'number'), ('b', '"x"', 'string'), ('c', 'null', 'null'), ('d', '[1, {"e": 2}]', 'array')]),
    (r"""select key, value from jsonb_each_text('{"b": "x\ty", "a": 1.50, "c": null, "d": [1, {"e": 2}]}') order by key""",
     [('a', '1.50'), ('b', 'x\ty'), ('c', None), ('d', '[1, {"e": 2}]')]),
    ("select * from jsonb_each('[1, 2]')", ('22023', 'cannot call jsonb_each on a non-object')),
    (r"""select v::text as t, n from jsonb_array_elements('[1, "a", null, [2], {"b": 3}, true]') with ordinality as x(v, n) order by n""",
     [('1', 1), ('"a"', 2), ('null', 3), ('[2]', 4), ('{"b": 3}', 5), ('true', 6)]),
    (r"""select v, n from jsonb_array_elements_text('["x", "y\"z", null, 1.50, [2], {"b": false}]') with ordinality as x(v, n) order by n""",
     [('x', 1), ('y"z', 2), (None, 3), ('1.50', 4), ('[2]', 5), ('{"b": false}', 6)]),
    ("select jsonb_array_elements('[3, 1, 2]')::text as e order by e", [('1',), ('2',), ('3',)]),
    (r"""select jsonb_array_elements_text('["b", "a", "c"]') as e order by e""", [('a',), ('b',), ('c',)]),
    (r"""select jsonb_array_elements('{"a": 1}')""", ('22023', 'cannot extract elements from an object')),
    ("select jsonb_array_elements_text('1')", ('22023', 'cannot extract elements from a scalar')),
    # jsonb_set: replace, insert (create_missing defaults to true), append/prepend past the ends
    (r"""select jsonb_set('{"a": 1, "b": [1, 2]}', '{a}', '{"x": 2}')::text, jsonb_set('{"a": 1}', '{c}', '3')::text, jsonb_set('{"a": 1}', '{c}', '3', false)::text""",
     [('{"a": {"x": 2}, "b": [1, 2]}', '{"a": 1, "c": 3}', '{"a": 1}')]),
    ("select jsonb_set('[1, 2, 3]', '{-1}', '9')::text, jsonb_set('[1, 2, 3]', '{5}', '9')::text, jsonb_set('[1, 2, 3]', '{-5}', '9')::text, jsonb_set('[1, 2, 3]', '{1}', '9', false)::text",
     [('[1, 2, 9]', '[1, 2, 3, 9]', '[9, 1, 2, 3]', '[1, 9, 3]')]),
    (r"""select jsonb_set('{"a": {"b": [0, {"c": 1}]}}', '{a,b,1,c}', '"new"')::text, jsonb_set('{"a": {}}', '{x,y}', '1')::text, jsonb_set('{"a": {}}', '{a,y}', '1')::text""",
     [('{"a": {"b": [0, {"c": "new"}]}}', '{"a": {}}', '{"a": {"y": 1}}')]),
    (r"""select jsonb_set('[1, 2]', '{5}', '9', false)::text, jsonb_set('{"a": 1}', '{}', '2')::text""",
     [('[1, 2]', '{"a": 1}')]),
    # jsonb_set is strict: a NULL new value makes the whole result NULL
    (r"""select jsonb_set('{"a": 1}', '{a}', null) is null, jsonb_set('{"a": 1}', '{a}', 'null')::text""",
     [(True, '{"a": null}')]),
    ("select jsonb_set('1', '{a}', '2')", ('22023', 'cannot set path in scalar')),
    (r"""select jsonb_insert('{"a": [0, 1, 2]}', '{a,1}', '"new"')::text, jsonb_insert('{"a": [0, 1, 2]}', '{a,1}', '"new"', true)::text, jsonb_insert('{"a": [0, 1, 2]}', '{a,-1}', '"new"')::text, jsonb_insert('{"a": [0, 1, 2]}', '{a,9}', '"new"')::text, jsonb_insert('{"a": 1}', '{b}', '2')::text""",
     [('{"a": [0, "new", 1, 2]}', '{"a": [0, 1, "new", 2]}', '{"a": [0, 1, "new", 2]}', '{"a": [0, 1, 2, "new"]}', '{"a": 1, "b": 2}')]),
    (r"""select jsonb_insert('{"a": 1}', '{a}', '2')""", ('22023', 'cannot replace existing key')),
    (r"""select jsonb_strip_nulls('{"a": null, "b": {"c": null, "d": 1}, "e": [null, {"f": null}]}')::text, jsonb_strip_nulls('[null, 1]')::text, jsonb_strip_nulls('null')::text""",
     [('{"b": {"d": 1}, "e": [null, {}]}', '[null, 1]', 'null')]),
    (r"""select jsonb_pretty('{"a": [1, {"b": null}], "c": {}, "d": []}'), jsonb_pretty('"x"')""",
     [('{\n    "a": [\n        1,\n        {\n            "b": null\n        }\n    ],\n    "c": {\n    },\n    "d": [\n    ]\n}', '"x"')]),
    (r"""select jsonb_build_object('b', 1, 'a', 'x', 'c', null, 'd', true, 'e', array[1, 2], 'f', 1.50, 'g', '{"h": 1}'::jsonb)::text""",
     [('{"a": "x", "b": 1, "c": null, "d": true, "e": [1, 2], "f": 1.50, "g": {"h": 1}}',)]),
    ("select jsonb_build_object()::text, jsonb_build_object(1, 2, true, 'x', 'k', 1, 'k', 2)::text",
     [('{}', '{"1": 2, "k": 2, "true": "x"}')]),
    ("select jsonb_build_object('a')", ('22023', 'argument list must have even number of elements')),
    ('select jsonb_build_object(null, 1)', ('22023', 'argument 1: key must not be null')),
    (r"""select jsonb_build_array(1, 'a', null, true, 1.50, array['x', 'y'], '{"x": 1}'::jsonb, '[2]'::json)::text, jsonb_build_array()::text""",
     [('[1, "a", null, true, 1.50, ["x", "y"], {"x": 1}, [2]]', '[]')]),
    (r"""select to_jsonb(1)::text, to_jsonb(1.50)::text, to_jsonb('a"b\c'::text)::text, to_jsonb(true)::text, to_jsonb(null::int) is null""",
     [('1', '1.50', r'"a\"b\\c"', 'true', True)]),
    ("select to_jsonb(timestamp '2024-01-02 03:04:05.5')::text, to_jsonb(date '2024-01-02')::text, to_jsonb(array[1, 2])::text, to_jsonb(array['c', null])::text, to_jsonb('{}'::int[])::text",
     [('"2024-01-02T03:04:05.5"', '"2024-01-02"', '[1, 2]', '["c", null]', '[]')]),
    # a non-finite float becomes a JSON string
    (r"""select to_jsonb(2.5::float8)::text, to_jsonb('NaN'::float8)::text, to_jsonb('-Infinity'::float8)::text, to_jsonb('{"a": 1}'::json)::text""",
     [('2.5', '"NaN"', '"-Infinity"', '{"a": 1}')]),
    (r"""select jsonb_extract_path('{"a": {"b": [1, {"c": "x"}]}}', 'a', 'b', '1')::text, jsonb_extract_path_text('{"a": {"b": [1, {"c": "x"}]}}', 'a', 'b', '1', 'c'), jsonb_extract_path('{"a": 1}', 'z') is null, jsonb_extract_path_text('{"a": [1]}', 'a', '-1')""",
     [('{"c": "x"}', 'x', True, '1')]),
    ('select jsonb_agg(x)::text from (select x from (values (3), (1), (null), (2)) v(x) order by x) s',
     [('[1, 2, 3, null]',)]),
    ('select jsonb_agg(x) is null, count(*) from (select 1 as x where false) s', [(True, 0)]),
    ("select jsonb_object_agg(k, v)::text from (values ('b', 1), ('a', 2), ('c', null), ('b', 3)) t(k, v)",
     [('{"a": 2, "b": 3, "c": null}',)]),
    ('select jsonb_object_agg(k, v) from (values (null::text, 1)) t(k, v)',
     ('22023', 'field name must not be null')),
]


def test_jsonb_functions(conn):
    """The jsonb_* functions, to_jsonb and the aggregates."""
    run_steps(conn, FUNCS)


CASTS = [
    ("select '1'::jsonb::int, '-7'::jsonb::int2, '12345678901'::jsonb::int8, '1.50'::jsonb::numeric, '1.5'::jsonb::float8, '0.25'::jsonb::float4, 'true'::jsonb::bool, 'false'::jsonb::boolean",
     [(1, -7, 12345678901, Decimal('1.50'), 1.5, 0.25, True, False)]),
    # numeric to integer rounds half away from zero
    ("select '1.5'::jsonb::int, '2.5'::jsonb::int, '-2.5'::jsonb::int8, '1e2'::jsonb::int, '1e2'::jsonb::numeric, cast('12.340'::jsonb as numeric)",
     [(2, 3, -3, 100, Decimal('100'), Decimal('12.340'))]),
    (r"""select ('{"a": 5}'::jsonb -> 'a')::int, ('{"a": "5"}'::jsonb ->> 'a')::int, ('[true]'::jsonb -> 0)::bool, ('{"a": 2.5}'::jsonb -> 'a')::float8""",
     [(5, 5, True, 2.5)]),
    (r"""select '"a"'::jsonb::int""", ('22023', 'cannot cast jsonb string to type integer')),
    (r"""select '"1"'::jsonb::int""", ('22023', 'cannot cast jsonb string to type integer')),
    ("select 'null'::jsonb::int", ('22023', 'cannot cast jsonb null to type integer')),
    ("select '[1]'::jsonb::int", ('22023', 'cannot cast jsonb array to type integer')),
    (r"""select '{"a": 1}'::jsonb::numeric""", ('22023', 'cannot cast jsonb object to type numeric')),
    ("select 'true'::jsonb::int", ('22023', 'cannot cast jsonb boolean to type integer')),
    ("select '1'::jsonb::bool", ('22023', 'cannot cast jsonb numeric to type boolean')),
    ("select '3000000000'::jsonb::int", ('22003', 'integer out of range')),
    (r"""select null::jsonb::int is null, '"1"'::jsonb::text, '1'::jsonb::text""", [(True, '"1"', '1')]),
]


def test_jsonb_casts_to_sql_types(conn):
    """jsonb to numeric, integers, floats and boolean; the wrong JSON kind is 22023."""
    run_steps(conn, CASTS)


DOCS = [
    ('create table jb_docs (id int primary key, doc jsonb)', 'CREATE TABLE'),
    (r"""insert into jb_docs values (1, '{"k": "v", "n": 1}'), (2, '{"k": "w", "tags": ["a", "b"]}'), (3, '[1, 2]'), (4, null), (5, '"x\ny"'), (6, '{"k": "v", "n": 2, "sub": {"k": "deep"}}')""",
     'INSERT 0 6'),
    ("insert into jb_docs select 7, jsonb_build_object('k', 'v', 'tags', jsonb_build_array('b'))",
     'INSERT 0 1'),
    ("insert into jb_docs values (8, '{bad')", ('22P02', 'invalid input syntax for type json')),
    ('insert into jb_docs values (8, 5)',
     ('42804', 'column "doc" is of type jsonb but expression is of type integer')),
    ('select id, doc::text as d from jb_docs order by id',
     [(1, '{"k": "v", "n": 1}'), (2, '{"k": "w", "tags": ["a", "b"]}'), (3, '[1, 2]'), (4, None), (5, r'"x\ny"'), (6, '{"k": "v", "n": 2, "sub": {"k": "deep"}}'), (7, '{"k": "v", "tags": ["b"]}')]),
    (r"""update jb_docs set doc = doc || '{"x": 1}' where id in (1, 2, 3, 4)""", 'UPDATE 4'),
    (r"""update jb_docs set doc = jsonb_set(doc, '{tags,0}', '"z"') where id = 2""", 'UPDATE 1'),
    ("update jb_docs set doc = jsonb_set(doc, '{sub,k}', to_jsonb(upper(doc #>> '{sub,k}'))) where doc ? 'sub'",
     'UPDATE 1'),
    ("update jb_docs set doc = doc - 'n' where (doc ->> 'n')::int = 1", 'UPDATE 1'),
    ('select id, doc::text as d from jb_docs order by id',
     [(1, '{"k": "v", "x": 1}'), (2, '{"k": "w", "x": 1, "tags": ["z", "b"]}'), (3, '[1, 2, {"x": 1}]'), (4, None), (5, r'"x\ny"'), (6, '{"k": "v", "n": 2, "sub": {"k": "DEEP"}}'), (7, '{"k": "v", "tags": ["b"]}')]),
    (r"""select id from jb_docs where doc @> '{"x": 1}' order by id""", [(1,), (2,)]),
    (r"""select id from jb_docs where doc @> '{"k": "v"}' order by id""", [(1,), (6,), (7,)]),
    ("select id from jb_docs where doc ->> 'k' = 'v' order by id", [(1,), (6,), (7,)]),
    ("select id from jb_docs where doc ? 'n' order by id", [(6,)]),
    ("select id from jb_docs where doc -> 'tags' ? 'b' order by id", [(2,), (7,)]),
    ("select id from jb_docs where doc #>> '{tags,1}' = 'b' or doc #>> '{sub,k}' = 'DEEP' order by id",
     [(2,), (6,)]),
    ('select id from jb_docs where doc is null order by id', [(4,)]),
    ("select id, jsonb_typeof(doc) from jb_docs where jsonb_typeof(doc) <> 'object' order by id",
     [(3, 'array'), (5, 'string')]),
    ("select doc ->> 'k' as k, count(*) from jb_docs group by doc ->> 'k' order by k",
     [('v', 3), ('w', 1), (None, 3)]),
    ("select id, (doc -> 'n')::int + 1 as n1 from jb_docs where doc ? 'n' order by id", [(6, 3)]),
    ('drop table jb_docs', 'DROP TABLE'),
]


def test_jsonb_column_statements(server):
    """A jsonb column: literals, UPDATE with || and jsonb_set, WHERE with @>, ->>, ?."""
    run_steps_clean(server, DOCS, ["drop table if exists jb_docs"])


class RawText(Loader):
    def load(self, data):
        return bytes(data).decode()


class RawBinary(Loader):
    format = psycopg.pq.Format.BINARY

    def load(self, data):
        return bytes(data)


DOC6 = {"k": "v", "nested": {"z": [1, 2.5, None, True]}, "s": "é\n\""}
DOC6_TEXT = r'{"k": "v", "s": "é\n\"", "nested": {"z": [1, 2.5, null, true]}}'


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_jsonb_parameters_and_results(server, binary):
    """Jsonb parameters (%t, %b) and jsonb results in text and in binary format (binary: a
    version byte 1, then the text form)."""
    ph = "%b" if binary else "%t"
    with server.connect() as c:
        c.execute("drop table if exists jb_params")
        try:
            c.execute("create table jb_params (id int primary key, doc jsonb)")
            c.execute(f"insert into jb_params values (%s, {ph})", (1, Jsonb(DOC6)), binary=binary)
            c.execute(f"insert into jb_params values (%s, {ph})", (2, Jsonb([{"b": 1, "a": 2}, "t"])), binary=binary)
            c.execute(f"insert into jb_params values (%s, {ph})", (3, Jsonb("plain")), binary=binary)
            c.execute(f"insert into jb_params values (%s, {ph})", (4, None), binary=binary)
            c.execute(f"insert into jb_params values (%s, {ph}::jsonb)", (5, '{"b": 1,  "a": 1.50}'), binary=binary)
            assert c.execute("select id, doc::text from jb_params order by id").fetchall() == [
                (1, DOC6_TEXT), (2, '[{"a": 2, "b": 1}, "t"]'), (3, '"plain"'), (4, None), (5, '{"a": 1.50, "b": 1}')]
            cur = c.cursor(binary=binary)
            assert cur.execute("select id, doc from jb_params order by id").fetchall() == [
                (1, DOC6), (2, [{"a": 2, "b": 1}, "t"]), (3, "plain"), (4, None), (5, {"a": 1.5, "b": 1})]
            assert cur.execute(f"select id from jb_params where doc @> {ph} order by id",
                               (Jsonb({"nested": {"z": [True]}}),)).fetchall() == [(1,)]
            assert cur.execute(f"select id from jb_params where doc = {ph}", (Jsonb({"a": 1.5, "b": 1}),)).fetchall() == [(5,)]
            assert cur.execute("select doc ->> %s from jb_params where id = %s", ("s", 1)).fetchall() == [("é\n\"",)]
            raw = c.cursor(binary=binary)
            raw.adapters.register_loader("jsonb", RawBinary if binary else RawText)
            want = [(b'\x01{"a": 1.50, "b": 1}',), (b'\x01"plain"',)] if binary else [('{"a": 1.50, "b": 1}',), ('"plain"',)]
            assert raw.execute("select doc from jb_params where id in (3, 5) order by id desc").fetchall() == want
        finally:
            c.execute("drop table if exists jb_params")


def test_jsonb_copy_in_and_out(server):
    """COPY of a jsonb column in text format: backslashes of JSON escapes doubled, NULL as \\N."""
    with server.connect() as c:
        c.execute("drop table if exists jb_copy")
        try:
            c.execute("create table jb_copy (id int primary key, doc jsonb)")
            with c.cursor() as cur:
                with cur.copy("copy jb_copy (id, doc) from stdin") as cp:
                    cp.write(b'1\t{"b": [1, 2], "a": {"x": null}}\n2\t\\N\n3\t"tab\\\\there"\n4\t[1.50, "\xc3\xa9"]\n')
                assert cur.execute("select id, doc::text from jb_copy order by id").fetchall() == [
                    (1, '{"a": {"x": null}, "b": [1, 2]}'), (2, None), (3, r'"tab\there"'), (4, '[1.50, "é"]')]
                assert cur.execute("select doc #>> '{}' from jb_copy where id = 3").fetchall() == [("tab\there",)]
                with cur.copy("copy jb_copy (id, doc) to stdout") as cp:
                    out = b"".join(bytes(b) for b in cp)
                assert out == (b'1\t{"a": {"x": null}, "b": [1, 2]}\n2\t\\N\n3\t"tab\\\\there"\n4\t[1.50, "\xc3\xa9"]\n')
                with pytest.raises(psycopg.errors.InvalidTextRepresentation) as ei:
                    with cur.copy("copy jb_copy (id, doc) from stdin") as cp:
                        cp.write(b'5\t{"ok": 1}\n6\t{bad\n')
                assert ei.value.diag.message_primary == "invalid input syntax for type json"
                assert cur.execute("select count(*) from jb_copy").fetchall() == [(4,)]
        finally:
            c.execute("drop table if exists jb_copy")
