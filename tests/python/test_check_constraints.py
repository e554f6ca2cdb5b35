"""CHECK constraints: in CREATE TABLE (on a column or the table, named or not, named as
PostgreSQL names them), checked on INSERT, UPDATE, ON CONFLICT DO UPDATE and COPY with
23514 and PostgreSQL's fields; NULL passes; shown by the catalogs and psql. The
expectations were taken from PostgreSQL 15 and hold there too."""

from __future__ import annotations

import psycopg
import pytest

from conftest import run_steps

STEPS = [
    ('create table ck (id int primary key, qty int check (qty > 0), price numeric(8,2), name text,'
     ' constraint ck_price_pos check (price >= 0), check (qty < 1000 and price < 10000),'
     ' check (length(name) > 1))',
     'CREATE TABLE'),
    ("insert into ck values (1, 5, 1.5, 'ab')",
     'INSERT 0 1'),
    ("insert into ck values (2, 0, 1.5, 'ab')",
     ('23514', 'new row for relation "ck" violates check constraint "ck_qty_check"', 'Failing row contains (2, 0, 1.50, ab).', 'ck_qty_check')),
    ("insert into ck values (3, 5, -1, 'ab')",
     ('23514', 'new row for relation "ck" violates check constraint "ck_price_pos"', 'Failing row contains (3, 5, -1.00, ab).', 'ck_price_pos')),
    ("insert into ck values (4, 5000, 1, 'ab')",
     ('23514', 'new row for relation "ck" violates check constraint "ck_check"', 'Failing row contains (4, 5000, 1.00, ab).', 'ck_check')),
    ('insert into ck values (5, null, null, null)',
     'INSERT 0 1'),
    ("insert into ck values (6, 1, 1, 'x')",
     ('23514', 'new row for relation "ck" violates check constraint "ck_name_check"', 'Failing row contains (6, 1, 1.00, x).', 'ck_name_check')),
    ('update ck set qty = -1 where id = 1',
     ('23514', 'new row for relation "ck" violates check constraint "ck_qty_check"', 'Failing row contains (1, -1, 1.50, ab).', 'ck_qty_check')),
    ('update ck set qty = qty + 1 where id = 1',
     'UPDATE 1'),
    ("insert into ck values (1, 5, 1.5, 'ab') on conflict (id) do update set qty = -5",
     ('23514', 'new row for relation "ck" violates check constraint "ck_qty_check"', 'Failing row contains (1, -5, 1.50, ab).', 'ck_qty_check')),
    ('select id, qty from ck order by id',
     [(1, 6), (5, None)]),
    ("select conname, contype from pg_constraint where conrelid = 'ck'::regclass order by conname",
     [('ck_check', 'c'), ('ck_name_check', 'c'), ('ck_pkey', 'p'), ('ck_price_pos', 'c'), ('ck_qty_check', 'c')]),
    ("select pg_get_constraintdef(oid, true) from pg_constraint where conname in ('ck_qty_check', 'ck_name_check')"
     " order by conname",
     [('CHECK (length(name) > 1)',), ('CHECK (qty > 0)',)]),
    ("select relchecks from pg_class where relname = 'ck'",
     [(4,)]),
    ('create table ckx (a int, b int, check (b > 0), check (a > b), check (1 > 0))',
     'CREATE TABLE'),
    ("select conname from pg_constraint where conrelid = 'ckx'::regclass order by conname",
     [('ckx_b_check',), ('ckx_check',), ('ckx_check1',)]),
    ('drop table ckx',
     'DROP TABLE'),
    ('create table ck2 (a int check (a > (select 1)))',
     ('0A000', 'cannot use subquery in check constraint', None, None)),
    ('create table ck2 (a int check (count(*) > 1))',
     ('42803', 'aggregate functions are not allowed in check constraints', None, None)),
    ('create table ck2 (a int check (a + 1))',
     ('42804', 'argument of CHECK must be type boolean, not type integer', None, None)),
    ('create table ck2 (a int, constraint c1 check (a > 0), constraint c1 check (a < 5))',
     ('42710', 'check constraint "c1" already exists', None, None)),
]


def test_check_constraints(server):
    with server.connect() as c:
        c.execute("drop table if exists ck, ckx, ck2")
        try:
            run_steps(c, STEPS)
        finally:
            c.execute("drop table if exists ck, ckx, ck2")


def test_copy_checks_rows(db, conn):
    """COPY FROM checks each row, into a table created in the same transaction too."""
    t = db.table("ckc")
    conn.execute(f"create table {t} (id int, v int check (v >= 0))")
    with pytest.raises(psycopg.errors.CheckViolation):
        with conn.cursor().copy(f"copy {t} from stdin") as cp:
            cp.write("1\t5\n2\t-1\n")
    assert conn.execute(f"select count(*) from {t}").fetchone() == (0,)
    with conn.transaction():
        t2 = db.table("ckd")
        conn.execute(f"create table {t2} (id int, v int check (v >= 0))")
        with pytest.raises(psycopg.errors.CheckViolation):
            with conn.cursor().copy(f"copy {t2} from stdin") as cp:
                cp.write("1\t5\n2\t-1\n")
        raise psycopg.Rollback


def test_psql_describes_checks(db, conn):
    t = db.table("ckp")
    conn.execute(f"create table {t} (id int primary key, qty int check (qty > 0), name text check (length(name) > 1))")
    out = db.psql(command=f"\\d {t}").stdout
    assert out.endswith(
        "Check constraints:\n"
        f'    "{t}_name_check" CHECK (length(name) > 1)\n'
        f'    "{t}_qty_check" CHECK (qty > 0)\n\n'
    ), out


ALTER_STEPS = [
    ('create table cka (id int primary key, a int, b int)', 'CREATE TABLE'),
    ('insert into cka values (1, 1, 1), (2, null, 5), (3, 9, 9)', 'INSERT 0 3'),
    ('alter table cka add constraint cka_b check (b < 9)',
     ('23514', 'check constraint "cka_b" of relation "cka" is violated by some row', None, 'cka_b')),
    ('alter table cka add constraint cka_b check (b < 9) not valid', 'ALTER TABLE'),
    ('alter table cka add constraint cka_b check (b < 100)',
     ('42710', 'constraint "cka_b" for relation "cka" already exists')),
    ('alter table cka add constraint cka_pkey check (b < 100)',
     ('42710', 'constraint "cka_pkey" for relation "cka" already exists')),
    # A constraint NOT VALID still checks new rows.
    ('insert into cka values (4, 1, 10)',
     ('23514', 'new row for relation "cka" violates check constraint "cka_b"', 'Failing row contains (4, 1, 10).', 'cka_b')),
    ("select convalidated, pg_get_constraintdef(oid) from pg_constraint where conname = 'cka_b'",
     [(False, 'CHECK ((b < 9)) NOT VALID')]),
    ('alter table cka validate constraint cka_b',
     ('23514', 'check constraint "cka_b" of relation "cka" is violated by some row', None, 'cka_b')),
    ('alter table cka validate constraint cka_pkey',
     ('42809', 'constraint "cka_pkey" of relation "cka" is not a foreign key or check constraint')),
    ('alter table cka validate constraint nosuch',
     ('42704', 'constraint "nosuch" of relation "cka" does not exist')),
    ('update cka set b = 1 where id = 3', 'UPDATE 1'),
    ('alter table cka validate constraint cka_b', 'ALTER TABLE'),
    ('alter table cka validate constraint cka_b', 'ALTER TABLE'),
    ("select convalidated from pg_constraint where conname = 'cka_b'", [(True,)]),
    # Unnamed: named for the one column read, numbered past a name taken.
    ('alter table cka add check (b > 0)', 'ALTER TABLE'),
    ('alter table cka add check (b > 0)', 'ALTER TABLE'),
    ('alter table cka add check (a > 0 or b > 0)', 'ALTER TABLE'),
    ("select conname from pg_constraint where conrelid = 'cka'::regclass and contype = 'c' order by 1",
     [('cka_b',), ('cka_b_check',), ('cka_b_check1',), ('cka_check',)]),
    ('alter table cka add check (b + 1)',
     ('42804', 'argument of CHECK must be type boolean, not type integer')),
    ('alter table cka drop constraint cka_b_check1', 'ALTER TABLE'),
    ('alter table cka drop constraint cka_b_check1',
     ('42704', 'constraint "cka_b_check1" of relation "cka" does not exist')),
    ('alter table cka drop constraint if exists cka_b_check1', 'ALTER TABLE'),
    ('alter table cka drop constraint cka_b', 'ALTER TABLE'),
    ('insert into cka values (5, 1, 50)', 'INSERT 0 1'),
    ("select conname from pg_constraint where conrelid = 'cka'::regclass and contype = 'c' order by 1",
     [('cka_b_check',), ('cka_check',)]),
]


def test_alter_table_adds_validates_and_drops_checks(server):
    """ALTER TABLE ... ADD CHECK checks the rows there (unless NOT VALID, which only new
    rows must pass until VALIDATE CONSTRAINT), names an unnamed one as PostgreSQL does,
    and DROP CONSTRAINT removes one, with PostgreSQL's errors and notices."""
    with server.connect() as c:
        c.execute("drop table if exists cka")
        notices = []
        c.add_notice_handler(lambda d: notices.append(d.message_primary))
        try:
            run_steps(c, ALTER_STEPS)
            assert notices == ['constraint "cka_b_check1" of relation "cka" does not exist, skipping']
        finally:
            c.execute("drop table if exists cka")


def test_psql_shows_a_check_not_valid(db, conn):
    t = db.table("ckn")
    conn.execute(f"create table {t} (id int primary key, qty int)")
    conn.execute(f"alter table {t} add constraint {t}_qty check (qty > 0) not valid")
    out = db.psql(command=f"\\d {t}").stdout
    assert out.endswith(
        "Check constraints:\n"
        f'    "{t}_qty" CHECK (qty > 0) NOT VALID\n\n'
    ), out
