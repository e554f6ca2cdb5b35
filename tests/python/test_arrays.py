"""Arrays: constructors, literals in text and binary, subscripts, ANY/ALL, ARRAY(subquery),
array functions and comparisons, casts, and array columns stored, copied and read back
after a restart. The expectations were taken from PostgreSQL 15 and hold there too."""

from __future__ import annotations

from decimal import Decimal

import psycopg
import pytest

from conftest import module_tables
from crash_util import nodes  # noqa: F401  (fixture)

SETUP = [
    "create table qa (id int primary key, g int, s text)",
    "insert into qa values (1, 1, 'a'), (2, 1, 'b'), (3, 2, 'c'), (4, null, null), (5, 3, 'e')",
]

QUERIES = [
    ('select array[1,2] || array[3], array[1,2] || 3, 0 || array[1,2]',
     [([1, 2, 3], [1, 2, 3], [0, 1, 2])]),
    ("select array['a'] || null::text[], null::int[] || null::int[], array[1] || '{2,3}'",
     [(['a'], None, [1, 2, 3])]),
    ("select array_to_string(array['a'] || array(select 'b' union all select 'c'), ',')",
     [('a,b,c',)]),
    ('select array[1,2,3]',
     [([1, 2, 3],)]),
    ('select array[\'a\', \'b c\', null, \'\', \'NULL\', \'x"y\', \'a,b\', \'q\\z\']',
     [(['a', 'b c', None, '', 'NULL', 'x"y', 'a,b', 'q\\z'],)]),
    ('select \'{1,2,3}\'::int[], \'{}\'::text[], \'{ a , "b" ,NULL}\'::text[]',
     [([1, 2, 3], [], ['a', 'b', None])]),
    ('select array[1, 2.5]',
     [([Decimal('1'), Decimal('2.5')],)]),
    ('select array[]::int[]',
     [([],)]),
    ('select (array[10,20,30])[2], (array[10,20,30])[5], (array[10,20,30])[0]',
     [(20, None, None)]),
    ('select 2 = any(array[1,2,3]), 5 = any(array[1,2,3]), 5 <> all(array[1,2,3]), null = any(array[1]), 1 = any(array[2, null])',
     [(True, False, True, None, None)]),
    ("select 2 = any('{1,2,3}')",
     [(True,)]),
    ("select array_to_string(array[1,null,3], ','), array_to_string(array[1,null,3], ',', '*'), array_to_string(array['a'], '-')",
     [('1,3', '1,*,3', 'a')]),
    ("select array_upper(array[1,2,3], 1), array_lower(array[1,2,3], 1), array_length(array[1,2], 1), cardinality(array[1,2,3]), array_upper('{}'::int[], 1)",
     [(3, 1, 2, 3, None)]),
    ('select array(select id from qa order by id), array(select s from qa where id < 0)',
     [([1, 2, 3, 4, 5], [])]),
    ('select id from qa where id = any(array[1, 3]) order by id',
     [(1,), (3,)]),
    ("select array[1,2] = array[1,2], array[1,2] < array[1,3], array[1] < array[1,0], '{1,NULL}'::int[] = '{1,NULL}'::int[]",
     [(True, True, True, True)]),
    ("select '{1,2}'::int[]::text[], '{1,2}'::text[]::int[], array[1,2]::text",
     [(['1', '2'], [1, 2], '{1,2}')]),
    ("select s from qa where s = any('{a,c}') order by s",
     [('a',), ('c',)]),
    ("select array['x']::varchar[], array[1::int2, 2::int8]",
     [(['x'], [1, 2])]),
]

ERRORS = [
    ("select '{{1,2},{3,4}}'::int[]", "0A000", None),
    ('select array[]', '42P18', 'cannot determine type of empty array'),
    ("select '{1,2'::int[]", '22P02', 'malformed array literal: "{1,2"'),
    ("select '{1,a}'::int[]", '22P02', 'invalid input syntax for type integer: "a"'),
    ("select array[1, 'a']", '22P02', 'invalid input syntax for type integer: "a"'),
    ('select array[1, true]', '42804', 'ARRAY types integer and boolean cannot be matched'),
    ('select 1 = any(5)', '42809', 'op ANY/ALL (array) requires array on right side'),
]


@pytest.fixture(scope="module")
def tables(server):
    yield from module_tables(server, "qa", SETUP)


@pytest.mark.parametrize("sql, rows", QUERIES)
def test_array_query(tables, conn, sql, rows):
    assert conn.execute(sql).fetchall() == rows


@pytest.mark.parametrize("sql, sqlstate, message", ERRORS)
def test_array_errors(tables, conn, sql, sqlstate, message):
    if message is None and "SteadyDB" not in str(conn.info.parameter_status("server_version")):
        pytest.skip("PostgreSQL has multidimensional arrays")
    with pytest.raises(psycopg.Error) as ei:
        conn.execute(sql)
    assert ei.value.sqlstate == sqlstate
    if message is not None:
        assert ei.value.diag.message_primary == message


def test_array_columns(db, conn):
    """Array columns hold arrays sent as parameters (text and binary), literals and
    empty arrays; they come back in both formats and through COPY."""
    t = db.table("arr")
    conn.execute(f"create table {t} (id int primary key, tags text[], nums int[], at timestamptz[])")
    conn.execute(f"insert into {t} values (1, %s, %s, null)", (["a", "b c", None], [1, 2, 3]))
    conn.execute(f"insert into {t} values (2, '{{}}', '{{5}}', null)")
    conn.execute(f"insert into {t} values (%s, %s, %s, %s)", (3, ["x"], [], None), prepare=True)
    expected = [(1, ["a", "b c", None], [1, 2, 3], None), (2, [], [5], None), (3, ["x"], [], None)]
    with conn.cursor(binary=True) as cur:
        cur.execute(f"select * from {t} order by id")
        assert cur.fetchall() == expected
    assert conn.execute(f"select * from {t} order by id").fetchall() == expected
    assert conn.execute(
        f"select id from {t} where 'a' = any(tags) or 2 = any(nums) order by id"
    ).fetchall() == [(1,)]
    with conn.cursor() as cur:
        with cur.copy(f"copy {t} to stdout") as cp:
            out = b"".join(bytes(x) for x in cp)
    assert out == b'1\t{a,"b c",NULL}\t{1,2,3}\t\\N\n2\t{}\t{5}\t\\N\n3\t{x}\t{}\t\\N\n'


@pytest.mark.steadydb_only
def test_array_columns_survive_restart(nodes):
    """Array values and the array column types are stored in pages, the WAL and the
    catalog: they come back after a crash (replayed) and after a clean restart."""
    node = nodes().start()
    with node.connect() as c:
        c.execute("create table arr (id int primary key, tags text[], nums bigint[])")
        c.execute("insert into arr values (1, %s, %s), (2, '{}', null)", (["a", None, "c d"], [7, -8]))
    expected = [(1, ["a", None, "c d"], [7, -8]), (2, [], None)]
    node.restart_after_crash()
    with node.connect() as c:
        assert c.execute("select * from arr order by id").fetchall() == expected
        c.execute("checkpoint")
    node.stop_clean()
    node.start()
    with node.connect() as c:
        assert c.execute("select * from arr order by id").fetchall() == expected
        assert c.execute(
            "select data_type, udt_name from information_schema.columns"
            " where table_name = 'arr' order by ordinal_position"
        ).fetchall() == [("integer", "int4"), ("ARRAY", "_text"), ("ARRAY", "_int8")]
