"""ALTER TABLE ... ADD COLUMN (with a default for the rows already there, NOT NULL),
RENAME COLUMN and RENAME TO: the rows already there are not rewritten and read the new
column as its default then. The expectations were taken from PostgreSQL 15 and hold
there too."""

from __future__ import annotations

from decimal import Decimal

import psycopg
import pytest

from conftest import run_steps

from crash_util import nodes  # noqa: F401  (fixture)

STEPS = [
    ('create table al (id int primary key, a int)',
     'CREATE TABLE'),
    ('insert into al values (1, 10), (2, 20)',
     'INSERT 0 2'),
    ('alter table al add column b text',
     'ALTER TABLE'),
    ('alter table al add column c int default 7 not null',
     'ALTER TABLE'),
    ('alter table al add column d numeric(6,2) default 1.5',
     'ALTER TABLE'),
    ('alter table al add column e int not null',
     ('23502', 'column "e" of relation "al" contains null values')),
    ('alter table al add column b int',
     ('42701', 'column "b" of relation "al" already exists')),
    ('alter table al add column if not exists b int',
     'ALTER TABLE'),
    ('select * from al order by id',
     [(1, 10, None, 7, Decimal('1.50')), (2, 20, None, 7, Decimal('1.50'))]),
    ('insert into al (id, a) values (3, 30)',
     'INSERT 0 1'),
    ('select * from al order by id',
     [(1, 10, None, 7, Decimal('1.50')), (2, 20, None, 7, Decimal('1.50')), (3, 30, None, 7, Decimal('1.50'))]),
    ('update al set c = c + 1 where id = 1',
     'UPDATE 1'),
    ('select * from al order by id',
     [(1, 10, None, 8, Decimal('1.50')), (2, 20, None, 7, Decimal('1.50')), (3, 30, None, 7, Decimal('1.50'))]),
    ('alter table al alter column c drop default',
     'ALTER TABLE'),
    ('insert into al (id, a) values (4, 40)',
     ('23502', 'null value in column "c" of relation "al" violates not-null constraint')),
    ('alter table al rename column a to aa',
     'ALTER TABLE'),
    ('select id, aa from al where aa > 15 order by id',
     [(2, 20), (3, 30)]),
    ('alter table al rename column nope to x',
     ('42703', 'column "nope" does not exist')),
    ('alter table al rename column aa to b',
     ('42701', 'column "b" of relation "al" already exists')),
    ('alter table al rename to al2',
     'ALTER TABLE'),
    ('select count(*) from al2',
     [(3,)]),
    ('select count(*) from al',
     ('42P01', 'relation "al" does not exist')),
    ('create index on al2 (c)',
     'CREATE INDEX'),
    ('select id from al2 where c = 7 order by id',
     [(2,), (3,)]),
]


def test_alter_table_columns(server):
    with server.connect() as c:
        c.execute("drop table if exists al, al2")
        try:
            run_steps(c, STEPS)
        finally:
            c.execute("drop table if exists al, al2")


@pytest.mark.steadydb_only
def test_volatile_default_of_a_new_column_is_refused(db, conn):
    """Each existing row would need its own value, which needs a rewrite."""
    t = db.table("alv")
    conn.execute(f"create table {t} (id int primary key)")
    with pytest.raises(psycopg.errors.FeatureNotSupported):
        conn.execute(f"alter table {t} add column f float8 default random()")


@pytest.mark.steadydb_only
def test_added_and_renamed_columns_survive_a_crash(nodes):  # noqa: F811
    node = nodes().start()
    with node.connect() as c:
        c.execute("create table rc (id int primary key, a int)")
        c.execute("insert into rc select g, g from generate_series(1, 100) g")
        c.execute("checkpoint")
        c.execute("alter table rc add column b text default 'x'")
        c.execute("alter table rc rename column a to aa")
        c.execute("alter table rc rename to rc2")
        c.execute("insert into rc2 values (101, 1, 'y')")
    for _ in range(2):
        node.kill()
        node.start()
        with node.connect() as c:
            assert c.execute("select count(*), count(b), sum(aa) from rc2 where b = 'x'").fetchone() == (100, 100, 5050)
            assert c.execute("select * from rc2 where id > 99 order by id").fetchall() == [(100, 100, "x"), (101, 1, "y")]
            c.execute("checkpoint")
