"""ANALYZE: what it measures (pg_class.reltuples, pg_stats), as PostgreSQL measures the
same table when the whole table is the sample; and a join read in the order the
statistics make cheapest, with the same rows as FROM's order gives."""

from __future__ import annotations

import pytest

from conftest import run_steps

STATS = [
    ("drop table if exists st_a", "DROP TABLE"),
    ("create table st_a (a int primary key, b int, c text)", "CREATE TABLE"),
    ("insert into st_a select g, g % 10, case when g % 5 = 0 then null else 'v' || (g % 7) end "
     "from generate_series(1, 1000) g", "INSERT 0 1000"),
    # Never analyzed: -1, and no pg_stats rows.
    ("select reltuples from pg_class where relname = 'st_a'", [(-1.0,)]),
    ("select count(*) from pg_stats where tablename = 'st_a'", [(0,)]),
    ("analyze st_a", "ANALYZE"),
    ("select reltuples from pg_class where relname = 'st_a'", [(1000.0,)]),
    ("select attname, null_frac, n_distinct, most_common_vals is null from pg_stats "
     "where tablename = 'st_a' order by attname",
     [("a", 0.0, -1.0, True), ("b", 0.0, 10.0, False), ("c", 0.2, 7.0, False)]),
    # Every value of a column with few of them is a most common one.
    ("select attname, array(select unnest(most_common_vals::text::text[]) order by 1), "
     "array(select unnest(most_common_freqs) order by 1) from pg_stats "
     "where tablename = 'st_a' and attname in ('b', 'c') order by attname",
     [("b", [str(i) for i in range(10)], [0.1] * 10),
      ("c", [f"v{i}" for i in range(7)], [0.114] * 5 + [0.115] * 2)]),
    # VACUUM ANALYZE and ANALYZE of every table measure too.
    ("insert into st_a select g, 0, null from generate_series(1001, 1500) g", "INSERT 0 500"),
    ("vacuum analyze st_a", "VACUUM"),
    ("select reltuples from pg_class where relname = 'st_a'", [(1500.0,)]),
    ("delete from st_a where a > 1200", "DELETE 300"),
    ("analyze", "ANALYZE"),
    ("select reltuples, (select null_frac from pg_stats where tablename = 'st_a' and attname = 'c') "
     "from pg_class where relname = 'st_a'", [(1200.0, 0.33333334)]),
    ("analyze st_nowhere", ("42P01", 'relation "st_nowhere" does not exist')),
]


def test_analyze_measures_as_postgresql_does(server):
    with server.connect() as c:
        try:
            run_steps(c, STATS)
        finally:
            c.execute("drop table if exists st_a")


JOIN_SETUP = [
    "drop table if exists st_big, st_small, st_mid",
    "create table st_big (id int primary key, grp int, pad text)",
    "insert into st_big select g, g % 100, repeat('x', 20) from generate_series(1, 20000) g",
    "create table st_mid (id int primary key, name text)",
    "insert into st_mid select g, 'm' || g from generate_series(0, 99) g",
    "create table st_small (id int primary key, big_id int, tag text)",
    "insert into st_small select g, g * 997 % 20000 + 1, case when g % 2 = 0 then 'x' else 'y' end "
    "from generate_series(1, 20) g",
]

JOIN_QUERIES = [
    "select b.id, s.id from st_big b join st_small s on b.id = s.big_id where s.tag = 'x' order by 1",
    "select count(*), sum(b.grp) from st_big b, st_small s where b.id = s.big_id and s.tag = 'x'",
    "select s.id, m.name, b.id from st_big b join st_mid m on m.id = b.grp join st_small s on s.big_id = b.id "
    "order by 1",
    "select s.id, m.name from st_big b, st_mid m, st_small s where m.id = b.grp and s.big_id = b.id "
    "and m.name like 'm1%' order by 1",
    "select b.id, s.tag from st_small s join st_big b on b.id = s.big_id + 1 where s.id < 5 order by 1",
]


def test_joins_give_the_same_rows_in_any_order(server):
    with server.connect() as c:
        try:
            for sql in JOIN_SETUP:
                c.execute(sql)
            before = [c.execute(q).fetchall() for q in JOIN_QUERIES]
            c.execute("analyze")
            after = [c.execute(q).fetchall() for q in JOIN_QUERIES]
            assert before == after
            assert after[1] == [(10, 680)]
            assert len(after[2]) == 20
        finally:
            c.execute("drop table if exists st_big, st_small, st_mid")


def plan(c, sql: str) -> list[str]:
    return [r[0] for r in c.execute("explain (costs off) " + sql).fetchall()]


@pytest.mark.steadydb_only  # the plans' text is SteadyDB's (no costs)
def test_join_order_follows_the_statistics(server):
    q = "select b.id from st_big b join st_small s on b.id = s.big_id where s.tag = 'x'"
    with server.connect() as c:
        try:
            for sql in JOIN_SETUP:
                c.execute(sql)
            # FROM's order without statistics: a hash table on the small table, probed
            # with every row of the big one.
            assert plan(c, q) == [
                "Hash Join",
                "  Hash Cond: (b.id = s.big_id)",
                "  ->  Seq Scan on st_big b",
                "  ->  Hash",
                "        ->  Seq Scan on st_small s",
                "              Filter: (tag = 'x'::text)",
            ]
            c.execute("prepare q as " + q)
            c.execute("analyze")
            # Measured: the ten small rows first, each looking its big row up by key.
            want = [
                "Nested Loop",
                "  ->  Seq Scan on st_small s",
                "        Filter: (tag = 'x'::text)",
                "  ->  Index Scan using st_big_pkey on st_big b",
                "        Index Cond: (b.id = s.big_id)",
            ]
            assert plan(c, q) == want
            # A statement prepared before ANALYZE is planned again (same rows).
            assert len(c.execute("execute q").fetchall()) == 10
        finally:
            c.execute("deallocate all")
            c.execute("drop table if exists st_big, st_small, st_mid")


# The autoanalyzer (SteadyDB's own server; its settings are server-wide).
from crash_util import nodes  # noqa: E402,F401  (fixture)


def _reltuples(c, table: str) -> float:
    return c.execute("select reltuples from pg_class where relname = %s", (table,)).fetchone()[0]


def _wait_for(c, table: str, want: float, seconds: float = 60) -> float:
    """Poll until the table's measured rows are `want` (no timing is asserted: the
    deadline only bounds a failure)."""
    import time

    deadline = time.monotonic() + seconds
    got = _reltuples(c, table)
    while got != want and time.monotonic() < deadline:
        time.sleep(0.2)
        got = _reltuples(c, table)
    return got


@pytest.mark.steadydb_only
def test_tables_are_measured_without_analyze_and_again_after_a_restart(nodes):  # noqa: F811
    node = nodes({"autovacuum_naptime": "1", "autovacuum_analyze_threshold": "10",
                  "autovacuum_analyze_scale_factor": "0.5"}).start()
    with node.connect() as c:
        c.execute("create table aa (id int primary key, v int)")
        c.execute("insert into aa select g, g % 7 from generate_series(1, 1000) g")
        assert _wait_for(c, "aa", 1000.0) == 1000.0
        # Fewer changes than threshold + scale × rows (10 + 500): not measured again.
        c.execute("delete from aa where id <= 100")
        # More: measured again.
        c.execute("insert into aa select g, 0 from generate_series(1001, 2000) g")
        assert _wait_for(c, "aa", 1900.0) == 1900.0
        assert c.execute("select n_distinct from pg_stats where tablename = 'aa' "
                         "and attname = 'v'").fetchone() == (7.0,)
    # Statistics are kept in memory: a restart measures the tables again.
    node.stop_clean()
    node.start()
    with node.connect() as c:
        assert _wait_for(c, "aa", 1900.0) == 1900.0
