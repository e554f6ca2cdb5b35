"""Views: CREATE VIEW (with a column list, over views, joined, in subqueries), DROP VIEW,
their dependencies (2BP01), their catalog rows; a view keeps the columns it was created
with when its table gains one; views survive a crash. The expectations were taken from
PostgreSQL 15 and hold there too."""

from __future__ import annotations

import psycopg
import pytest

from conftest import run_steps

from crash_util import nodes  # noqa: F401  (fixture)

STEPS = [
    ('create table vt (id int primary key, g int, s text)',
     'CREATE TABLE'),
    ("insert into vt values (1, 1, 'a'), (2, 1, 'b'), (3, 2, 'c')",
     'INSERT 0 3'),
    ('create view vv as select id, g, s from vt where g = 1',
     'CREATE VIEW'),
    ('select * from vv order by id',
     [(1, 1, 'a'), (2, 1, 'b')]),
    ('create view vv2 (ident, grp) as select id, g from vv',
     'CREATE VIEW'),
    ('select * from vv2 order by ident',
     [(1, 1), (2, 1)]),
    ('select v.ident, t.s from vv2 v join vt t on t.id = v.ident order by 1',
     [(1, 'a'), (2, 'b')]),
    ('select count(*) from vv where s in (select s from vv)',
     [(2,)]),
    ('create view vv as select 1',
     ('42P07', 'relation "vv" already exists')),
    ('drop table vt',
     ('2BP01', 'cannot drop table vt because other objects depend on it')),
    ('drop view vv',
     ('2BP01', 'cannot drop view vv because other objects depend on it')),
    ('drop view vv2, vv',
     'DROP VIEW'),
    ("select count(*) from pg_class where relname = 'vv'",
     [(0,)]),
    ('create view vv as select g, count(*) as n from vt group by g',
     'CREATE VIEW'),
    ('select * from vv order by g',
     [(1, 2), (2, 1)]),
    ("select relkind, relnatts from pg_class where relname = 'vv'",
     [('v', 2)]),
    ("select attname, format_type(atttypid, atttypmod) from pg_attribute where attrelid = 'vv'::regclass order by attnum",
     [('g', 'integer'), ('n', 'bigint')]),
    ('alter table vt add column extra int',
     'ALTER TABLE'),
    ('create view vv3 as select * from vt',
     'CREATE VIEW'),
    ('select * from vv3 order by id',
     [(1, 1, 'a', None), (2, 1, 'b', None), (3, 2, 'c', None)]),
]


def test_views(server):
    with server.connect() as c:
        for v in ["vv3", "vv2", "vv"]:
            c.execute(f"drop view if exists {v}")
        c.execute("drop table if exists vt")
        try:
            run_steps(c, STEPS)
        finally:
            for v in ["vv3", "vv2", "vv"]:
                c.execute(f"drop view if exists {v}")
            c.execute("drop table if exists vt")


def test_view_keeps_its_columns_when_its_table_gains_one(db, conn):
    t = db.table("vk")
    conn.execute(f"create table {t} (id int primary key, a text)")
    conn.execute(f"insert into {t} values (1, 'x')")
    conn.execute(f"create view {t}_v as select * from {t}")
    try:
        conn.execute(f"alter table {t} add column b int default 5")
        assert conn.execute(f"select * from {t}_v").fetchall() == [(1, "x")]
        assert conn.execute(f"select * from {t}").fetchall() == [(1, "x", 5)]
    finally:
        conn.execute(f"drop view {t}_v")


@pytest.mark.steadydb_only
def test_writes_through_views_are_refused(db, conn):
    t = db.table("vw")
    conn.execute(f"create table {t} (id int primary key)")
    conn.execute(f"create view {t}_v as select * from {t}")
    try:
        for sql in [f"insert into {t}_v values (1)", f"update {t}_v set id = 2", f"delete from {t}_v"]:
            with pytest.raises(psycopg.errors.FeatureNotSupported):
                conn.execute(sql)
    finally:
        conn.execute(f"drop view {t}_v")


@pytest.mark.steadydb_only
def test_views_survive_a_crash(nodes):  # noqa: F811
    node = nodes().start()
    with node.connect() as c:
        c.execute("create table base (id int primary key, g int)")
        c.execute("insert into base select i, i % 3 from generate_series(1, 30) i")
        c.execute("create view per_g as select g, count(*) as n from base group by g")
        c.execute("checkpoint")
        c.execute("create view per_g2 as select * from per_g where n > 0")
    for _ in range(2):
        node.kill()
        node.start()
        with node.connect() as c:
            assert c.execute("select * from per_g2 order by g").fetchall() == [(0, 10), (1, 10), (2, 10)]
            with pytest.raises(psycopg.errors.DependentObjectsStillExist):
                c.execute("drop table base")
            c.execute("checkpoint")


CASCADE_STEPS = [
    ('create table ct1 (id int primary key, a int)', 'CREATE TABLE'),
    ('create table ct2 (id int primary key, b int)', 'CREATE TABLE'),
    ('create table ctc (id int primary key, r int references ct1)', 'CREATE TABLE'),
    ('create view cv1 as select * from ct1', 'CREATE VIEW'),
    ('create view cv2 as select * from cv1', 'CREATE VIEW'),
    ('create view cv3 as select cv1.id, ct2.b from cv1 join ct2 on ct2.id = cv1.id', 'CREATE VIEW'),
    ('drop view cv1',
     ('2BP01', 'cannot drop view cv1 because other objects depend on it',
      'view cv2 depends on view cv1\nview cv3 depends on view cv1')),
    ('drop view cv1 cascade', 'DROP VIEW'),
    ("select relname from pg_class where relkind = 'v' and relname like 'cv%' order by 1", []),
    ('create view cv1 as select * from ct1', 'CREATE VIEW'),
    ('create view cv2 as select * from cv1', 'CREATE VIEW'),
    ('drop table ct1',
     ('2BP01', 'cannot drop table ct1 because other objects depend on it',
      'constraint ctc_r_fkey on table ctc depends on table ct1\n'
      'view cv1 depends on table ct1\nview cv2 depends on view cv1')),
    ('drop table ct1 cascade', 'DROP TABLE'),
    ("select relname from pg_class where relname in ('ct1', 'cv1', 'cv2')", []),
    ("select count(*) from pg_constraint where conrelid = 'ctc'::regclass and contype = 'f'", [(0,)]),
]


def test_drop_cascade_drops_the_views_that_read_it(server):
    """DROP VIEW / DROP TABLE ... CASCADE drop the views that read the object, directly or
    through other views (and a table's referencing foreign keys), with PostgreSQL's
    notices; without CASCADE, 2BP01 lists every dependent object."""
    cleanup = ["drop view if exists cv3, cv2, cv1", "drop table if exists ctc, ct2, ct1"]
    with server.connect() as c:
        for sql in cleanup:
            c.execute(sql)
        notices = []
        c.add_notice_handler(lambda d: notices.append((d.message_primary, d.message_detail)))
        try:
            run_steps(c, CASCADE_STEPS)
            assert notices == [
                ("drop cascades to 2 other objects",
                 "drop cascades to view cv2\ndrop cascades to view cv3"),
                ("drop cascades to 3 other objects",
                 "drop cascades to constraint ctc_r_fkey on table ctc\n"
                 "drop cascades to view cv1\ndrop cascades to view cv2"),
            ]
        finally:
            for sql in cleanup:
                c.execute(sql)


REPLACE_STEPS = [
    ('create table crt (id int primary key, a int, b text)', 'CREATE TABLE'),
    ("insert into crt values (1, 10, 'x'), (2, 20, 'y')", 'INSERT 0 2'),
    ('create or replace view crv as select id, a from crt', 'CREATE VIEW'),
    ('create view crv2 as select * from crv where a > 10', 'CREATE VIEW'),
    ("select oid from pg_class where relname = 'crv'", 'OID'),
    ('create or replace view crv as select id, a * 2 as a, b from crt', 'CREATE VIEW'),
    ('select * from crv order by id', [(1, 20, 'x'), (2, 40, 'y')]),
    ('select * from crv2 order by id', [(1, 20), (2, 40)]),
    ('create or replace view crv as select id, b, a from crt',
     ('42P16', 'cannot change name of view column "a" to "b"')),
    ('create or replace view crv as select id, a::bigint as a, b from crt',
     ('42P16', 'cannot change data type of view column "a" from integer to bigint')),
    ('create or replace view crv as select id from crt',
     ('42P16', 'cannot drop columns from view')),
    ('create or replace view crt as select 1',
     ('42809', '"crt" is not a view')),
    ("select attname from pg_attribute where attrelid = 'crv'::regclass order by attnum",
     [('id',), ('a',), ('b',)]),
]


def test_create_or_replace_view(server):
    """CREATE OR REPLACE VIEW replaces a view's query when the columns it had stay, in
    order, by name and type (it may add columns); the view keeps its OID, and the views
    that read it see the new query; otherwise PostgreSQL's 42P16."""
    with server.connect() as c:
        c.execute("drop view if exists crv2, crv")
        c.execute("drop table if exists crt")
        try:
            oid = None
            for sql, want in REPLACE_STEPS:
                if want == 'OID':
                    oid = c.execute(sql).fetchone()[0]
                    continue
                run_steps(c, [(sql, want)])
            assert c.execute("select oid from pg_class where relname = 'crv'").fetchone() == (oid,)
        finally:
            c.execute("drop view if exists crv2, crv")
            c.execute("drop table if exists crt")


def test_a_replaced_view_survives_a_crash(nodes):  # noqa: F811
    node = nodes().start()
    with node.connect() as c:
        c.execute("create table rb (id int primary key, g int)")
        c.execute("insert into rb select i, i % 3 from generate_series(1, 30) i")
        c.execute("create view rv as select g from rb where g = 0")
        c.execute("checkpoint")
        c.execute("create or replace view rv as select g, id from rb where g = 1")
    for _ in range(2):
        node.kill()
        node.start()
        with node.connect() as c:
            assert c.execute("select count(*), min(g), max(g), sum(id) from rv").fetchone() == (10, 1, 1, 145)
            c.execute("checkpoint")
