"""SELECT DISTINCT: each output row once (NULLs equal), before ORDER BY and LIMIT, with
joins and aggregates. Every expectation holds on PostgreSQL 15 too."""

from __future__ import annotations

import psycopg
import pytest


@pytest.fixture
def dups(db, conn):
    t = db.table("dups")
    conn.execute(f"create table {t} (id int primary key, g int, s text)")
    conn.execute(f"insert into {t} values (1, 1, 'a'), (2, 1, 'a'), (3, 2, 'b'), (4, null, null),"
                 " (5, null, null), (6, 2, 'c')")
    return t


def test_distinct(conn, dups):
    assert conn.execute(f"select distinct g from {dups} order by g").fetchall() == \
        [(1,), (2,), (None,)]
    assert conn.execute(f"select distinct g, s from {dups} order by g, s").fetchall() == \
        [(1, "a"), (2, "b"), (2, "c"), (None, None)]
    assert conn.execute(f"select distinct g from {dups} order by g desc limit 2").fetchall() == \
        [(None,), (2,)]
    assert conn.execute(f"select count(*) from {dups}").fetchone() == (6,)
    assert conn.execute(f"select distinct count(*) from {dups} group by g order by 1").fetchall() == \
        [(2,)]
    assert conn.execute(f"select all g from {dups} where g = 1").fetchall() == [(1,), (1,)]


def test_distinct_over_a_join(conn, dups):
    rows = conn.execute(f"select distinct a.s from {dups} a join {dups} b on a.g = b.g"
                        " order by a.s").fetchall()
    assert rows == [("a",), ("b",), ("c",)]


def test_distinct_order_by_must_be_in_the_select_list(conn, dups):
    with pytest.raises(psycopg.Error) as ei:
        conn.execute(f"select distinct g from {dups} order by id")
    assert ei.value.sqlstate == "42P10"
    assert ei.value.diag.message_primary == \
        "for SELECT DISTINCT, ORDER BY expressions must appear in select list"
