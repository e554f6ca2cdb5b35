"""SELECT DISTINCT: each output row once (NULLs equal), before ORDER BY and LIMIT, with
joins and aggregates. Every expectation holds on PostgreSQL 15 too."""

from __future__ import annotations

import psycopg
import pytest

from conftest import run_steps


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


DISTINCT_ON_STEPS = [
    ('create table dn (id int primary key, g int, v int, s text)',
     'CREATE TABLE'),
    ("insert into dn values (1,1,5,'a'),(2,1,3,'b'),(3,2,9,'c'),(4,2,9,'d'),(5,null,1,'e'),(6,null,2,'f'),(7,3,null,'g')",
     'INSERT 0 7'),
    ('select distinct on (g) g, v, s from dn order by g, v desc, s',
     [(1, 5, 'a'), (2, 9, 'c'), (3, None, 'g'), (None, 2, 'f')]),
    ('select distinct on (g) id from dn order by g nulls first, id desc',
     [(6,), (2,), (4,), (7,)]),
    ('select distinct on (1) g, s from dn order by 1, 2 desc',
     [(1, 'b'), (2, 'd'), (3, 'g'), (None, 'f')]),
    ('select distinct on (g, v) g, v, id from dn order by g, v, id',
     [(1, 3, 2), (1, 5, 1), (2, 9, 3), (3, None, 7), (None, 1, 5), (None, 2, 6)]),
    ('select distinct on (g) g, v from dn order by v',
     ('42P10', 'SELECT DISTINCT ON expressions must match initial ORDER BY expressions')),
    ('select distinct on (g) g, count(*) from dn group by g, v order by g, count(*) desc',
     [(1, 1), (2, 2), (3, 1), (None, 1)]),
    ('select distinct on (g) g from dn',
     [(1,), (2,), (3,), (None,)]),
    ('select count(*) from (select distinct on (g) g, s from dn order by g, s) t',
     [(4,)]),
    ('select distinct on (g) g, s from dn order by g, s limit 2 offset 1',
     [(2, 'c'), (3, 'g')]),
]


def test_distinct_on(server):
    """The first row of each DISTINCT ON value in ORDER BY's order; its expressions must
    lead ORDER BY (42P10). The expectations were taken from PostgreSQL 15."""
    with server.connect() as c:
        c.execute("drop table if exists dn")
        try:
            run_steps(c, DISTINCT_ON_STEPS)
        finally:
            c.execute("drop table if exists dn")
