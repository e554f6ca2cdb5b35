"""WITH queries (non-recursive), VALUES as a query and in FROM, and functions in FROM
(generate_series, unnest, WITH ORDINALITY), alone, joined, and in correlated subqueries. The expectations were taken
from PostgreSQL 15 and hold there too."""

from __future__ import annotations

from decimal import Decimal

import psycopg
import pytest

from conftest import module_tables, run_steps

SETUP = [
    "create table qa (id int primary key, g int, s text)",
    "insert into qa values (1, 1, 'a'), (2, 1, 'b'), (3, 2, 'c'), (4, null, null), (5, 3, 'e')",
]

QUERIES = [
    ("values (1, 'a'), (2, 'b')",
     [(1, 'a'), (2, 'b')]),
    ('values (1), (2.5) order by 1 desc',
     [(Decimal('2.5'),), (Decimal('1'),)]),
    ("values ('x'), (null) order by column1 nulls first limit 1",
     [(None,)]),
    ("select * from (values (1, 'a'), (2, 'b')) as v(n, s) where n > 1",
     [(2, 'b')]),
    ("select v.column2 from (values (1, 'a'), (2, 'b')) v order by column1 desc",
     [('b',), ('a',)]),
    ('select count(*) from (values (1), (2), (3)) v(x)',
     [(3,)]),
    ('select * from generate_series(1, 5) g where g % 2 = 1',
     [(1,), (3,), (5,)]),
    ('select g from generate_series(10, 1, -3) g',
     [(10,), (7,), (4,), (1,)]),
    ('select * from generate_series(1, 3) as t(n)',
     [(1,), (2,), (3,)]),
    ('select * from unnest(array[1,2,3]) with ordinality',
     [(1, 1), (2, 2), (3, 3)]),
    ("select * from unnest(array[1,2], array['a','b','c']) as u(n, s)",
     [(1, 'a'), (2, 'b'), (None, 'c')]),
    ("select x from unnest('{a,b}'::text[]) x",
     [('a',), ('b',)]),
    ("select (select string_agg(s::text, ',') from generate_series(1, qa.id) s) from qa order by id",
     [('1',), ('1,2',), ('1,2,3',), ('1,2,3,4',), ('1,2,3,4,5',)]),
    ('select 1 union values (2) order by 1',
     [(1,), (2,)]),
    ('select s.id, g.n from qa s, generate_series(1, 2) g(n) where s.id < 3 order by 1, 2',
     [(1, 1), (1, 2), (2, 1), (2, 2)]),
    ('with x as (select id, g from qa where id < 4) select * from x order by id',
     [(1, 1), (2, 1), (3, 2)]),
    ('with x(a, b) as (select id, g from qa) select a from x where b = 1 order by a',
     [(1,), (2,)]),
    ('with x as (select id from qa), y as (select id * 10 as t from x) select sum(t) from y',
     [(150,)]),
    ('with x as (select 1 as v) select * from x, x as x2',
     [(1, 1)]),
    ('with x as (select id from qa) select count(*) from qa where id in (select id from x)',
     [(5,)]),
    ('with x as (select id from qa where g = 1) select (select count(*) from x)',
     [(2,)]),
    ('select * from (with z as (select 5 as q) select q from z) s',
     [(5,)]),
    ('with x as (select g, count(*) as n from qa group by g) select g, n from x order by g nulls first',
     [(None, 1), (1, 2), (2, 1), (3, 1)]),
    ('with x as (select id from qa) select * from x join qa on qa.id = x.id where x.id = 2',
     [(2, 2, 1, 'b')]),
    ('with x as (select id from qa) select id, (select count(*) from x where x.id < qa.id) from qa order by id',
     [(1, 0), (2, 1), (3, 2), (4, 3), (5, 4)]),
    # A WITH query scanned twice is computed once (PostgreSQL materializes it).
    ('with x as (select random() as r) select a.r = b.r from x a, x b',
     [(True,)]),
]

ERRORS = [
    ('with x as (select id from qa), x as (select 1) select * from x', '42712', 'WITH query name "x" specified more than once'),
    ('with x as (select 1) select * from y', '42P01', 'relation "y" does not exist'),
    ("select * from (values (1), ('x')) v", '22P02', 'invalid input syntax for type integer: "x"'),
    ('select * from (values (1, 2), (3)) v', '42601', 'VALUES lists must all be the same length'),
    ('select s.id, g from qa s, generate_series(1, 2) g where s.id < 3 order by 1, 2', '42702', 'column reference "g" is ambiguous'),
    ('select * from generate_series(1, 3, 0)', '22023', 'step size cannot equal zero'),
    ('select * from unnest(5)', '42883', 'function unnest(integer) does not exist'),
    ('select * from nosuch_function(1)', '42883', 'function nosuch_function(integer) does not exist'),
]


@pytest.fixture(scope="module")
def tables(server):
    yield from module_tables(server, "qa", SETUP)


@pytest.mark.parametrize("sql, rows", QUERIES)
def test_row_source(tables, conn, sql, rows):
    assert conn.execute(sql).fetchall() == rows


@pytest.mark.parametrize("sql, sqlstate, message", ERRORS)
def test_row_source_errors(tables, conn, sql, sqlstate, message):
    with pytest.raises(psycopg.Error) as ei:
        conn.execute(sql)
    assert (ei.value.sqlstate, ei.value.diag.message_primary) == (sqlstate, message)


@pytest.mark.steadydb_only
@pytest.mark.parametrize("sql", [
    "with recursive r(n) as (select 1 union all select n + 1 from r where n < 3 order by 1) select * from r",
    "with x as (delete from qa where id = 0 returning id) select * from x",
    "select id, (with w as (select qa.g as gg) select gg from w) from qa",
])
def test_with_not_supported_yet(tables, conn, sql):
    with pytest.raises(psycopg.errors.FeatureNotSupported):
        conn.execute(sql)


def test_insert_from_values_with_parameters(db, conn):
    """SQLAlchemy's bulk insert: INSERT ... SELECT from a VALUES list of parameters, in
    the order of a counter column, returning the new keys."""
    t = db.table("vals")
    conn.execute(f"create table {t} (id serial primary key, title varchar(100), price numeric(8,2))")
    rows = conn.execute(
        f"insert into {t} (title, price) select p0::varchar, p1::numeric(8, 2) from"
        " (values (%s::varchar, %s, 0), (%s::varchar, %s, 1)) as imp(p0, p1, n)"
        f" order by n returning {t}.id, {t}.title",
        ("a", 1.5, "b", 2),
    ).fetchall()
    assert rows == [(1, "a"), (2, "b")]


RECURSIVE = [
    ("create table rec_tree (id int primary key, parent int, name text)", "CREATE TABLE"),
    ("insert into rec_tree values (1, null, 'root'), (2, 1, 'a'), (3, 1, 'b'), (4, 2, 'a1'),"
     " (5, 4, 'a11'), (6, 3, 'b1')", "INSERT 0 6"),
    ('WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 10) SELECT sum(n), count(*) FROM t',
     [(55, 10)]),
    ('WITH RECURSIVE sub AS (SELECT id, name, 1 AS depth FROM rec_tree WHERE id = 2 UNION ALL SELECT c.id, c.name, s.depth + 1 FROM rec_tree c JOIN sub s ON c.parent = s.id) SELECT * FROM sub ORDER BY id',
     [(2, 'a', 1), (4, 'a1', 2), (5, 'a11', 3)]),
    ("WITH RECURSIVE path(id, p) AS (SELECT id, name FROM rec_tree WHERE parent IS NULL UNION ALL SELECT rec_tree.id, path.p || '/' || rec_tree.name FROM rec_tree, path WHERE rec_tree.parent = path.id) SELECT * FROM path ORDER BY p",
     [(1, 'root'), (2, 'root/a'), (4, 'root/a/a1'), (5, 'root/a/a1/a11'), (3, 'root/b'), (6, 'root/b/b1')]),
    ('WITH RECURSIVE c(x) AS (SELECT 1 UNION SELECT (x % 3) + 1 FROM c) SELECT x FROM c ORDER BY x',
     [(1,), (2,), (3,)]),
    ('WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1::bigint FROM t WHERE n < 3) SELECT * FROM t',
     ('42804', 'recursive query "t" column 1 has type integer in non-recursive term but type bigint overall', None, None)),
    ('WITH RECURSIVE t(n) AS (SELECT 1::bigint UNION ALL SELECT n + 1 FROM t WHERE n < 3) SELECT * FROM t',
     [(1,), (2,), (3,)]),
    ('WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < (SELECT count(*) FROM t)) SELECT * FROM t',
     ('42P19', 'recursive reference to query "t" must not appear within a subquery', None, None)),
    ('WITH RECURSIVE t AS (SELECT 1 AS n UNION ALL SELECT n+1 FROM t WHERE n < 5), u AS (SELECT n * 2 AS m FROM t) SELECT sum(m) FROM u',
     [(30,)]),
    ('WITH RECURSIVE t(n) AS (VALUES (1) UNION ALL SELECT n+1 FROM t WHERE n < 4) SELECT array_agg(n) FROM t',
     [([1, 2, 3, 4],)]),
    ('WITH RECURSIVE x AS (SELECT 1 AS a) SELECT * FROM x',
     [(1,)]),
    ('SELECT typname[0], typname[1], typname[100] FROM pg_type WHERE oid = 23',
     [('i', 'n', None)]),
    ("SELECT quote_literal('it''s'), quote_literal(E'a\\\\b'), quote_literal(42)",
     [("'it''s'", "E'a\\\\b'", "'42'")]),
    ("SELECT array_remove(ARRAY[1,2,3,2], 2), array_remove(ARRAY['a','b'], 'c')",
     [([1, 3], ['a', 'b'])]),
    ('SELECT current_schemas(false), current_schemas(true)',
     [(['public'], ['pg_catalog', 'public'])]),
    ("SELECT acldefault('r', 10), acldefault('n', 10), acldefault('f', 10), acldefault('s', 10), acldefault('T', 10)",
     [(['postgres=arwdDxt/postgres'], ['postgres=UC/postgres'], ['=X/postgres', 'postgres=X/postgres'], ['postgres=rwU/postgres'], ['=U/postgres', 'postgres=U/postgres'])]),
    ("SELECT indkey, indclass, indkey[0], indoption FROM pg_index WHERE indrelid = 'rec_tree'::regclass",
     [('1', '1978', 1, '0')]),
    ('SELECT tableoid::regclass, count(*) FROM rec_tree GROUP BY 1',
     [('rec_tree', 6)]),
    ("SELECT c.tableoid = 'pg_class'::regclass FROM pg_class c WHERE relname = 'rec_tree'",
     [(True,)]),
    ("SELECT 0::regproc, '-'::regproc",
     [('-', '-')]),
    ("SELECT * FROM pg_options_to_table(ARRAY['fillfactor=70','x'])",
     [('fillfactor', '70'), ('x', None)]),
    ('SELECT nspname, nspacl FROM pg_namespace ORDER BY 1',
     [('information_schema', ['postgres=UC/postgres', '=U/postgres']), ('pg_catalog', ['postgres=UC/postgres', '=U/postgres']), ('pg_toast', None), ('public', ['pg_database_owner=UC/pg_database_owner', '=U/pg_database_owner'])]),
    ("SELECT obj_description(2200, 'pg_namespace')",
     [('standard public schema',)]),
]


def test_with_recursive_and_catalog_functions_answer_as_postgresql(conn):
    """WITH RECURSIVE (UNION and UNION ALL, cycles ended by UNION, type and subquery
    errors), and what pg_dump's catalog queries call: name subscripts, quote_literal,
    array_remove, current_schemas, acldefault, int2vector/oidvector columns, tableoid,
    regproc, pg_options_to_table, schema privileges and comments. Every expectation is
    PostgreSQL 15's."""
    conn.execute("drop table if exists rec_tree")
    try:
        run_steps(conn, RECURSIVE)
    finally:
        conn.execute("drop table if exists rec_tree")


EXPLAINS = [
    ('DROP TABLE IF EXISTS ea',
     'DROP TABLE'),
    ('DROP TABLE IF EXISTS eb',
     'DROP TABLE'),
    ('CREATE TABLE eb (bid int PRIMARY KEY, name text)',
     'CREATE TABLE'),
    ('CREATE TABLE ea (aid int PRIMARY KEY, bid int, v int)',
     'CREATE TABLE'),
    ('CREATE INDEX ea_bid ON ea (bid)',
     'CREATE INDEX'),
    ('EXPLAIN (COSTS OFF) SELECT * FROM ea WHERE aid = 1',
     [('Index Scan using ea_pkey on ea',), ('  Index Cond: (aid = 1)',)]),
    ('EXPLAIN (COSTS OFF) SELECT * FROM ea WHERE v > 5 ORDER BY v LIMIT 3',
     [('Limit',), ('  ->  Sort',), ('        Sort Key: v',), ('        ->  Seq Scan on ea',), ('              Filter: (v > 5)',)]),
    ('EXPLAIN (COSTS OFF) SELECT bid, count(*) FROM ea GROUP BY bid',
     [('HashAggregate',), ('  Group Key: bid',), ('  ->  Seq Scan on ea',)]),
    ('EXPLAIN (COSTS OFF) SELECT count(*) FROM ea',
     [('Aggregate',), ('  ->  Seq Scan on ea',)]),
    ('EXPLAIN (COSTS OFF) SELECT * FROM ea',
     [('Seq Scan on ea',)]),
    ('EXPLAIN (COSTS OFF) SELECT 1',
     [('Result',)]),
    ('EXPLAIN (COSTS OFF) INSERT INTO ea VALUES (1, 2, 3)',
     [('Insert on ea',), ('  ->  Result',)]),
    ('EXPLAIN (COSTS OFF) UPDATE ea SET v = v + 1 WHERE aid = 3',
     [('Update on ea',), ('  ->  Index Scan using ea_pkey on ea',), ('        Index Cond: (aid = 3)',)]),
    ('EXPLAIN (COSTS OFF) DELETE FROM ea WHERE aid = 3',
     [('Delete on ea',), ('  ->  Index Scan using ea_pkey on ea',), ('        Index Cond: (aid = 3)',)]),
    ('EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM ea',
     [('Seq Scan on ea (actual rows=0 loops=1)',)]),
    ('EXPLAIN (COSTS OFF) SELECT * FROM ea WHERE aid = 1 FOR UPDATE',
     [('LockRows',), ('  ->  Index Scan using ea_pkey on ea',), ('        Index Cond: (aid = 1)',)]),
]


def test_explain_draws_plans_as_postgresql(conn):
    """EXPLAIN (COSTS OFF) of the plans PostgreSQL would also choose: a key lookup, a
    scan with a filter under a sort and a limit, hashed grouping, an aggregate, DML on a
    key, ANALYZE's row count, row locks. Every expectation is PostgreSQL 15's."""
    conn.execute("drop table if exists ea")
    conn.execute("drop table if exists eb")
    try:
        run_steps(conn, EXPLAINS)
    finally:
        conn.execute("drop table if exists ea")
        conn.execute("drop table if exists eb")


@pytest.mark.steadydb_only
def test_explain_draws_steadydbs_own_plans(conn):
    """The plans PostgreSQL draws otherwise: a join by key lookup, a secondary index
    with a filter, subplans, a recursive WITH, a set operation; EXPLAIN ANALYZE's
    summary; what EXPLAIN refuses."""
    conn.execute("drop table if exists xa")
    conn.execute("drop table if exists xb")
    conn.execute("create table xb (bid int primary key, name text)")
    conn.execute("create table xa (aid int primary key, bid int, v int)")
    conn.execute("create index xa_bid on xa (bid)")

    def plan(sql):
        return [r[0] for r in conn.execute("explain (costs off) " + sql).fetchall()]

    try:
        assert plan("select a.aid, b.name from xa a join xb b on a.bid = b.bid where a.v = 1") == [
            "Nested Loop", "  ->  Seq Scan on xa a", "        Filter: (v = 1)",
            "  ->  Index Scan using xb_pkey on xb b", "        Index Cond: (b.bid = a.bid)"]
        # A lookup through a secondary index shows its key from the outer row.
        assert plan("select * from xb b join xa a on a.bid = b.bid where b.name = 'x'") == [
            "Nested Loop", "  ->  Seq Scan on xb b", "        Filter: (name = 'x'::text)",
            "  ->  Index Scan using xa_bid on xa a", "        Index Cond: (bid = b.bid)"]
        assert plan("select * from generate_series(1, 3) g") == ["Function Scan on generate_series g"]
        assert plan("select * from xa where bid = 3 and v < 2") == [
            "Index Scan using xa_bid on xa", "  Index Cond: (bid = 3)", "  Filter: (v < 2)"]
        assert plan("select * from xa where aid in (select bid from xb)") == [
            "Seq Scan on xa", "  Filter: (SubPlan)", "  SubPlan 1", "    ->  Seq Scan on xb"]
        assert plan("with recursive t(n) as (select 1 union all select n + 1 from t where n < 3)"
                    " select * from t") == [
            "CTE Scan on t", "  ->  Recursive Union", "        ->  Result",
            "        ->  WorkTable Scan on t", "              Filter: (n < 3)"]
        assert plan("select aid from xa except select bid from xb") == [
            "HashSetOp Except", "  ->  Append", "        ->  Seq Scan on xa", "        ->  Seq Scan on xb"]
        analyzed = [r[0] for r in conn.execute("explain (analyze, costs off) select * from xa")]
        assert analyzed[0] == "Seq Scan on xa (actual rows=0 loops=1)", analyzed
        assert analyzed[1].startswith("Planning Time: ") and analyzed[2].startswith(
            "Execution Time: "), analyzed
        with pytest.raises(psycopg.errors.FeatureNotSupported):
            conn.execute("explain verbose select 1")
    finally:
        conn.execute("drop table if exists xa")
        conn.execute("drop table if exists xb")


@pytest.mark.steadydb_only
def test_explain_analyze_counts_each_node(conn):
    """EXPLAIN ANALYZE draws each node with the rows it produced per run and its runs,
    as PostgreSQL does with TIMING OFF: a lookup join's inner scan runs once per outer
    row; a node that never ran says so."""
    conn.execute("drop table if exists ya")
    conn.execute("drop table if exists yb")
    conn.execute("create table ya (id int primary key, n int)")
    conn.execute("create table yb (id int primary key, aid int, w int)")
    conn.execute("insert into ya select g, g % 10 from generate_series(1, 1000) g")
    conn.execute("insert into yb select g, g % 1000 + 1, g % 7 from generate_series(1, 3000) g")

    def plan(sql):
        return [r[0] for r in conn.execute(
            "explain (analyze, costs off, timing off, summary off) " + sql).fetchall()]

    try:
        assert plan("select * from yb join ya on ya.id = yb.aid where yb.w = 2") == [
            "Nested Loop (actual rows=429 loops=1)",
            "  ->  Seq Scan on yb (actual rows=429 loops=1)",
            "        Filter: (w = 2)",
            "        Rows Removed by Filter: 2571",
            "  ->  Index Scan using ya_pkey on ya (actual rows=1 loops=429)",
            "        Index Cond: (ya.id = yb.aid)"]
        assert plan("select n, count(*) from ya group by n order by n limit 3") == [
            "Limit (actual rows=3 loops=1)",
            "  ->  Sort (actual rows=10 loops=1)",
            "        Sort Key: n",
            "        ->  HashAggregate (actual rows=10 loops=1)",
            "              Group Key: n",
            "              ->  Seq Scan on ya (actual rows=1000 loops=1)"]
        assert plan("select * from ya where n = 3 and id < 0") == [
            "Index Scan using ya_pkey on ya (actual rows=0 loops=1)",
            "  Index Cond: (id < 0)", "  Filter: (n = 3)"]
        # The join stops before its inner side: that scan never ran.
        assert plan("select * from ya join yb on yb.id = ya.n where ya.id < 0") == [
            "Nested Loop (actual rows=0 loops=1)",
            "  ->  Index Scan using ya_pkey on ya (actual rows=0 loops=1)",
            "        Index Cond: (id < 0)",
            "  ->  Index Scan using yb_pkey on yb (never executed)",
            "        Index Cond: (yb.id = ya.n)"]
    finally:
        conn.execute("drop table if exists ya")
        conn.execute("drop table if exists yb")


def test_explain_analyze_runs_dml(conn):
    """EXPLAIN ANALYZE of INSERT, UPDATE and DELETE runs the statement (its changes stay,
    unless its block rolls back) and draws what each node did, as PostgreSQL does."""
    conn.execute("drop table if exists ea")
    conn.execute("create table ea (id int primary key, n int)")
    conn.execute("insert into ea select g, g % 10 from generate_series(1, 100) g")

    def plan(sql):
        return [r[0] for r in conn.execute(
            "explain (analyze, timing off, summary off, costs off) " + sql).fetchall()]

    try:
        assert plan("delete from ea where n = 3") == [
            "Delete on ea (actual rows=0 loops=1)",
            "  ->  Seq Scan on ea (actual rows=10 loops=1)",
            "        Filter: (n = 3)",
            "        Rows Removed by Filter: 90"]
        assert plan("insert into ea values (1000, 1)") == [
            "Insert on ea (actual rows=0 loops=1)",
            "  ->  Result (actual rows=1 loops=1)"]
        assert plan("update ea set n = 0 where id = 1000 returning *") == [
            "Update on ea (actual rows=1 loops=1)",
            "  ->  Index Scan using ea_pkey on ea (actual rows=1 loops=1)",
            "        Index Cond: (id = 1000)"]
        conn.execute("begin")
        assert plan("delete from ea")[0] == "Delete on ea (actual rows=0 loops=1)"
        conn.execute("rollback")
        assert conn.execute("select count(*), sum(n) from ea").fetchone() == (91, 420)
    finally:
        conn.execute("drop table if exists ea")


def test_explain_shows_estimates_and_structured_formats(conn):
    """EXPLAIN's default output gives each node `(cost=S..T rows=R width=W)`, the rows
    from what ANALYZE measured; FORMAT JSON, YAML and XML give the same plan as one
    document, as tools that draw plans read it."""
    import json
    import re

    conn.execute("drop table if exists xe")
    conn.execute("create table xe (id int primary key, grp int, note text)")
    conn.execute("create index xe_grp on xe (grp)")
    conn.execute("insert into xe select g, g % 10, 'n' || g from generate_series(1, 1000) g")
    conn.execute("analyze xe")
    cost = re.compile(r"  \(cost=(\d+\.\d\d)\.\.(\d+\.\d\d) rows=(\d+) width=(\d+)\)$")

    def plan(sql, options=""):
        return [r[0] for r in conn.execute(f"explain {options}{sql}").fetchall()]

    def estimate(line):
        found = cost.search(line)
        assert found, line
        startup, total, rows, width = found.groups()
        assert float(startup) <= float(total), line
        return int(rows), int(width)

    try:
        top = plan("select * from xe where id = 5")
        assert top[0].startswith("Index Scan using xe_pkey on xe  (cost="), top
        assert estimate(top[0])[0] == 1
        assert top[1] == "  Index Cond: (id = 5)"
        assert estimate(plan("select * from xe")[0])[0] == 1000
        grouped = plan("select grp, count(*) from xe group by grp")
        assert grouped[0].startswith("HashAggregate  (cost="), grouped
        assert estimate(grouped[0]) == (10, 12)
        # Only the columns a query reads are counted in a scan's width.
        counted = plan("select count(*) from xe")
        assert estimate(counted[0]) == (1, 8) and estimate(counted[1]) == (1000, 0), counted
        limited = plan("select * from xe order by note limit 3")
        assert limited[0].startswith("Limit  (cost=") and estimate(limited[0])[0] == 3, limited
        assert plan("select * from xe where id = 5", "(costs off) ") == [
            "Index Scan using xe_pkey on xe", "  Index Cond: (id = 5)"]
        analyzed = plan("select count(*) from xe", "(analyze, timing off) ")
        assert re.match(r"Aggregate  \(cost=\S+ rows=1 width=8\) \(actual rows=1 loops=1\)$",
                        analyzed[0]), analyzed
        assert analyzed[-2].startswith("Planning Time: ") and analyzed[-1].startswith(
            "Execution Time: "), analyzed

        (doc,), = conn.execute(
            "explain (format json) select grp, count(*) from xe where id > 0 group by grp order by grp"
        ).fetchall()
        doc = json.loads(doc) if isinstance(doc, str) else doc
        root = doc[0]["Plan"]
        assert root["Node Type"] == "Sort" and root["Sort Key"] == ["grp"]
        agg = root["Plans"][0]
        assert (agg["Node Type"], agg["Strategy"], agg["Parent Relationship"]) == (
            "Aggregate", "Hashed", "Outer")
        assert agg["Group Key"] == ["grp"] and agg["Plan Rows"] == 10
        scan = agg["Plans"][0]
        assert scan["Relation Name"] == "xe" and scan["Alias"] == "xe"
        assert scan["Startup Cost"] <= scan["Total Cost"]
        (doc,), = conn.execute(
            "explain (format json, analyze, timing off) select * from xe where id = 7").fetchall()
        doc = json.loads(doc) if isinstance(doc, str) else doc
        assert doc[0]["Plan"]["Actual Rows"] == 1 and doc[0]["Plan"]["Actual Loops"] == 1
        assert "Planning Time" in doc[0] and "Execution Time" in doc[0]
        assert doc[0]["Plan"]["Index Name"] == "xe_pkey"

        (yaml,), = conn.execute("explain (format yaml) select * from xe where id = 5").fetchall()
        assert yaml.startswith('- Plan: \n    Node Type: "Index Scan"\n'), yaml
        assert '    Index Name: "xe_pkey"\n' in yaml and '    Plan Rows: 1\n' in yaml, yaml
        (xml,), = conn.execute("explain (format xml, costs off) select * from xe").fetchall()
        assert xml.startswith('<explain xmlns="http://www.postgresql.org/2009/explain">\n'
                              '  <Query>\n    <Plan>\n      <Node-Type>Seq Scan</Node-Type>\n'), xml
        assert "<Relation-Name>xe</Relation-Name>" in xml and "Total-Cost" not in xml
        assert xml.endswith("</explain>")
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            conn.execute("explain (format csv) select 1")
    finally:
        conn.execute("drop table if exists xe")
