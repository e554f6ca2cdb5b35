"""Foreign keys: REFERENCES in CREATE TABLE and ALTER TABLE ... ADD FOREIGN KEY (checked
against the rows there), on a primary key or a unique constraint, with NO ACTION,
RESTRICT, CASCADE, SET NULL and SET DEFAULT on delete and update, self-references,
deferrable constraints and SET CONSTRAINTS, the catalogs' and information_schema's view
of them, and DROP / TRUNCATE of a referenced table refused; catalog changes of existing
tables inside transaction blocks (committed or rolled back with the block), DROP COLUMN
and SET / DROP NOT NULL. The expectations were taken from PostgreSQL 15 and hold there
too."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from conftest import run_steps, run_steps_clean
from crash_util import nodes  # noqa: F401  (fixture)

STEPS = [
    ('create table fk_p (id int primary key, code text unique, name text)',
     'CREATE TABLE'),
    ('create table fk_c (id serial primary key, pid int references fk_p on delete cascade, note text)',
     'CREATE TABLE'),
    ('create table fk_n (id int primary key, pid int default 1 constraint fk_n_parent references fk_p (id) on delete set null on update cascade)',
     'CREATE TABLE'),
    ("create table fk_d (id int primary key, pcode text default 'a' references fk_p (code) on delete set default)",
     'CREATE TABLE'),
    ('create table fk_r (id int primary key, pid int references fk_p on delete restrict)',
     'CREATE TABLE'),
    ("insert into fk_p values (1, 'a', 'one'), (2, 'b', 'two'), (3, 'c', 'three'), (4, 'd', 'four')",
     'INSERT 0 4'),
    ("insert into fk_c (pid, note) values (1, 'x'), (2, 'y'), (2, 'z'), (null, 'orphan is fine')",
     'INSERT 0 4'),
    ("insert into fk_c (pid, note) values (9, 'bad')",
     ('23503', 'insert or update on table "fk_c" violates foreign key constraint "fk_c_pid_fkey"', 'Key (pid)=(9) is not present in table "fk_p".', 'fk_c_pid_fkey')),
    ("update fk_c set pid = 8 where note = 'x'",
     ('23503', 'insert or update on table "fk_c" violates foreign key constraint "fk_c_pid_fkey"', 'Key (pid)=(8) is not present in table "fk_p".', 'fk_c_pid_fkey')),
    ('insert into fk_n values (10, 2), (11, 3)',
     'INSERT 0 2'),
    ("insert into fk_d values (20, 'b'), (21, 'c')",
     'INSERT 0 2'),
    ('insert into fk_r values (30, 4)',
     'INSERT 0 1'),
    ('delete from fk_p where id = 4',
     ('23503', 'update or delete on table "fk_p" violates foreign key constraint "fk_r_pid_fkey" on table "fk_r"', 'Key (id)=(4) is still referenced from table "fk_r".', 'fk_r_pid_fkey')),
    ('update fk_p set id = 40 where id = 4',
     ('23503', 'update or delete on table "fk_p" violates foreign key constraint "fk_r_pid_fkey" on table "fk_r"', 'Key (id)=(4) is still referenced from table "fk_r".', 'fk_r_pid_fkey')),
    ('delete from fk_p where id = 2',
     'DELETE 1'),
    ('select id, pid, note from fk_c order by id',
     [(1, 1, 'x'), (4, None, 'orphan is fine')]),
    ('select id, pid from fk_n order by id',
     [(10, None), (11, 3)]),
    ('select id, pcode from fk_d order by id',
     [(20, 'a'), (21, 'c')]),
    ('update fk_p set id = 33 where id = 3',
     'UPDATE 1'),
    ('select id, pid from fk_n order by id',
     [(10, None), (11, 33)]),
    ('delete from fk_p where id = 1',
     ('23503', 'update or delete on table "fk_p" violates foreign key constraint "fk_d_pcode_fkey" on table "fk_d"', 'Key (code)=(a) is still referenced from table "fk_d".', 'fk_d_pcode_fkey')),
    ('select id, pcode from fk_d order by id',
     [(20, 'a'), (21, 'c')]),
    ('select count(*) from fk_c',
     [(2,)]),
    ("insert into fk_p values (5, 'e', 'five'), (6, 'f', 'six')",
     'INSERT 0 2'),
    ("insert into fk_c (pid, note) values (5, 'p'), (6, 'q')",
     'INSERT 0 2'),
    ("delete from fk_p where id in (5, 6) and name = 'five'",
     'DELETE 1'),
    ('select pid, note from fk_c order by id',
     [(1, 'x'), (None, 'orphan is fine'), (6, 'q')]),
    ('drop table fk_p',
     ('2BP01', 'cannot drop table fk_p because other objects depend on it', 'constraint fk_c_pid_fkey on table fk_c depends on table fk_p\nconstraint fk_n_parent on table fk_n depends on table fk_p\nconstraint fk_d_pcode_fkey on table fk_d depends on table fk_p\nconstraint fk_r_pid_fkey on table fk_r depends on table fk_p', None)),
    ('truncate fk_p',
     ('0A000', 'cannot truncate a table referenced in a foreign key constraint', 'Table "fk_c" references "fk_p".', None)),
    ("select conname, contype, condeferrable, condeferred, confupdtype, confdeltype, confmatchtype, conkey, confkey, pg_get_constraintdef(oid, true) from pg_constraint where contype = 'f' and conrelid::regclass::text like 'fk\\_%' order by conname",
     [('fk_c_pid_fkey', 'f', False, False, 'a', 'c', 's', [2], [1], 'FOREIGN KEY (pid) REFERENCES fk_p(id) ON DELETE CASCADE'), ('fk_d_pcode_fkey', 'f', False, False, 'a', 'd', 's', [2], [2], 'FOREIGN KEY (pcode) REFERENCES fk_p(code) ON DELETE SET DEFAULT'), ('fk_n_parent', 'f', False, False, 'c', 'n', 's', [2], [1], 'FOREIGN KEY (pid) REFERENCES fk_p(id) ON UPDATE CASCADE ON DELETE SET NULL'), ('fk_r_pid_fkey', 'f', False, False, 'a', 'r', 's', [2], [1], 'FOREIGN KEY (pid) REFERENCES fk_p(id) ON DELETE RESTRICT')]),
    ("select constraint_name, unique_constraint_name, match_option, update_rule, delete_rule from information_schema.referential_constraints where constraint_name like 'fk\\_%' order by 1",
     [('fk_c_pid_fkey', 'fk_p_pkey', 'NONE', 'NO ACTION', 'CASCADE'), ('fk_d_pcode_fkey', 'fk_p_code_key', 'NONE', 'NO ACTION', 'SET DEFAULT'), ('fk_n_parent', 'fk_p_pkey', 'NONE', 'CASCADE', 'SET NULL'), ('fk_r_pid_fkey', 'fk_p_pkey', 'NONE', 'NO ACTION', 'RESTRICT')]),
    ("select constraint_name, constraint_type, is_deferrable, initially_deferred from information_schema.table_constraints where table_name = 'fk_n' and constraint_type <> 'CHECK' order by 1",
     [('fk_n_parent', 'FOREIGN KEY', 'NO', 'NO'), ('fk_n_pkey', 'PRIMARY KEY', 'NO', 'NO')]),
    ("select constraint_name, column_name, ordinal_position, position_in_unique_constraint from information_schema.key_column_usage where table_name in ('fk_n', 'fk_d') order by 1, 3",
     [('fk_d_pcode_fkey', 'pcode', 1, 1), ('fk_d_pkey', 'id', 1, None), ('fk_n_parent', 'pid', 1, 1), ('fk_n_pkey', 'id', 1, None)]),
    ('create table fk_m (a int, b text, foreign key (a, b) references fk_p (id, code))',
     ('42830', 'there is no unique constraint matching given keys for referenced table "fk_p"', None, None)),
    ('create table fk_m (a int references fk_p (name))',
     ('42830', 'there is no unique constraint matching given keys for referenced table "fk_p"', None, None)),
    ('create table fk_m (a text references fk_p)',
     ('42804', 'foreign key constraint "fk_m_a_fkey" cannot be implemented', 'Key columns "a" and "id" are of incompatible types: text and integer.', None)),
    ('create table fk_m (a int references fk_nope)',
     ('42P01', 'relation "fk_nope" does not exist', None, None)),
    ('create table fk_m (a int, b int, foreign key (a, b) references fk_p (id))',
     ('42830', 'number of referencing and referenced columns for foreign key disagree', None, None)),
    ('create table fk_m (a int references fk_p initially deferred not deferrable)',
     ('42601', 'constraint declared INITIALLY DEFERRED must be DEFERRABLE', None, None)),
    ('create table fk_t (id int primary key, parent int references fk_t on delete cascade)',
     'CREATE TABLE'),
    ('insert into fk_t values (1, null), (2, 1), (3, 2), (4, 3), (5, 1), (6, 6)',
     'INSERT 0 6'),
    ('delete from fk_t where id = 2',
     'DELETE 1'),
    ('select * from fk_t order by id',
     [(1, None), (5, 1), (6, 6)]),
    ('delete from fk_t where id = 6',
     'DELETE 1'),
    ('select * from fk_t order by id',
     [(1, None), (5, 1)]),
    ('insert into fk_t values (7, 8), (8, 7)',
     'INSERT 0 2'),
    ('update fk_t set parent = 9 where id = 5',
     ('23503', 'insert or update on table "fk_t" violates foreign key constraint "fk_t_parent_fkey"', 'Key (parent)=(9) is not present in table "fk_t".', 'fk_t_parent_fkey')),
    ('alter table fk_r drop constraint fk_r_pid_fkey',
     'ALTER TABLE'),
    ('insert into fk_r values (31, 99)',
     'INSERT 0 1'),
    ('alter table fk_r add constraint fk_r_pid_fkey foreign key (pid) references fk_p on delete restrict',
     ('23503', 'insert or update on table "fk_r" violates foreign key constraint "fk_r_pid_fkey"', 'Key (pid)=(99) is not present in table "fk_p".', 'fk_r_pid_fkey')),
    ('delete from fk_r where id = 31',
     'DELETE 1'),
    ('alter table fk_r add constraint fk_r_pid_fkey foreign key (pid) references fk_p on delete restrict',
     'ALTER TABLE'),
    ('alter table fk_r add foreign key (pid) references fk_p',
     'ALTER TABLE'),
    ("select conname from pg_constraint where conrelid = 'fk_r'::regclass and contype = 'f' order by 1",
     [('fk_r_pid_fkey',), ('fk_r_pid_fkey1',)]),
    ('drop table fk_r, fk_d, fk_n, fk_c, fk_t',
     'DROP TABLE'),
    ('drop table fk_p',
     'DROP TABLE'),
]

DEFERRED_STEPS = [
    ('create table fd_p (id int primary key)',
     'CREATE TABLE'),
    ('create table fd_c (id int primary key, pid int constraint fd_c_fk references fd_p deferrable initially deferred)',
     'CREATE TABLE'),
    ('create table fd_i (id int primary key, pid int constraint fd_i_fk references fd_p deferrable)',
     'CREATE TABLE'),
    ('create table fd_n (id int primary key, pid int constraint fd_n_fk references fd_p)',
     'CREATE TABLE'),
    ('begin',
     'BEGIN'),
    ('insert into fd_c values (1, 7)',
     'INSERT 0 1'),
    ('insert into fd_p values (7)',
     'INSERT 0 1'),
    ('commit',
     'COMMIT'),
    ('select * from fd_c',
     [(1, 7)]),
    ('begin',
     'BEGIN'),
    ('insert into fd_c values (2, 8)',
     'INSERT 0 1'),
    ('commit',
     ('23503', 'insert or update on table "fd_c" violates foreign key constraint "fd_c_fk"', 'Key (pid)=(8) is not present in table "fd_p".', 'fd_c_fk')),
    ('select * from fd_c order by id',
     [(1, 7)]),
    ('begin',
     'BEGIN'),
    ('insert into fd_i values (1, 9)',
     ('23503', 'insert or update on table "fd_i" violates foreign key constraint "fd_i_fk"', 'Key (pid)=(9) is not present in table "fd_p".', 'fd_i_fk')),
    ('rollback',
     'ROLLBACK'),
    ('begin',
     'BEGIN'),
    ('set constraints fd_i_fk deferred',
     'SET CONSTRAINTS'),
    ('insert into fd_i values (1, 9)',
     'INSERT 0 1'),
    ('insert into fd_p values (9)',
     'INSERT 0 1'),
    ('commit',
     'COMMIT'),
    ('select * from fd_i',
     [(1, 9)]),
    ('begin',
     'BEGIN'),
    ('insert into fd_c values (3, 10)',
     'INSERT 0 1'),
    ('set constraints all immediate',
     ('23503', 'insert or update on table "fd_c" violates foreign key constraint "fd_c_fk"', 'Key (pid)=(10) is not present in table "fd_p".', 'fd_c_fk')),
    ('rollback',
     'ROLLBACK'),
    ('begin',
     'BEGIN'),
    ('insert into fd_c values (3, 10)',
     'INSERT 0 1'),
    ('savepoint s1',
     'SAVEPOINT'),
    ('insert into fd_c values (4, 11)',
     'INSERT 0 1'),
    ('rollback to savepoint s1',
     'ROLLBACK'),
    ('insert into fd_p values (10)',
     'INSERT 0 1'),
    ('commit',
     'COMMIT'),
    ('select * from fd_c order by id',
     [(1, 7), (3, 10)]),
    ('set constraints all deferred',
     'SET CONSTRAINTS'),
    ('begin',
     'BEGIN'),
    ('set constraints fd_n_fk deferred',
     ('42809', 'constraint "fd_n_fk" is not deferrable', None, None)),
    ('rollback',
     'ROLLBACK'),
    ('begin',
     'BEGIN'),
    ('set constraints nope deferred',
     ('42704', 'constraint "nope" does not exist', None, None)),
    ('rollback',
     'ROLLBACK'),
    ('begin',
     'BEGIN'),
    ('delete from fd_p where id = 7',
     'DELETE 1'),
    ('insert into fd_p values (7)',
     'INSERT 0 1'),
    ('commit',
     'COMMIT'),
    ('begin',
     'BEGIN'),
    ('delete from fd_p where id = 7',
     'DELETE 1'),
    ('commit',
     ('23503', 'update or delete on table "fd_p" violates foreign key constraint "fd_c_fk" on table "fd_c"', 'Key (id)=(7) is still referenced from table "fd_c".', 'fd_c_fk')),
    ('begin',
     'BEGIN'),
    ('update fd_c set pid = null where id = 1',
     'UPDATE 1'),
    ('delete from fd_p where id = 7',
     'DELETE 1'),
    ('commit',
     'COMMIT'),
    ('select * from fd_p order by id',
     [(9,), (10,)]),
    ('begin',
     'BEGIN'),
    ('insert into fd_n values (1, 9)',
     'INSERT 0 1'),
    ('delete from fd_c where id = 1',
     'DELETE 1'),
    ('savepoint a',
     'SAVEPOINT'),
    ('insert into fd_c values (5, 12)',
     'INSERT 0 1'),
    ('release savepoint a',
     'RELEASE'),
    ('delete from fd_c where id = 5',
     'DELETE 1'),
    ('commit',
     'COMMIT'),
    ('select * from fd_c order by id',
     [(3, 10)]),
    ('begin',
     'BEGIN'),
    ("alter table fd_n add column extra text default 'e'",
     'ALTER TABLE'),
    ('alter table fd_n alter column pid set not null',
     'ALTER TABLE'),
    ('insert into fd_n values (2, 7)',
     ('23503', 'insert or update on table "fd_n" violates foreign key constraint "fd_n_fk"', 'Key (pid)=(7) is not present in table "fd_p".', 'fd_n_fk')),
    ('select * from fd_n order by id',
     ('25P02', 'current transaction is aborted, commands ignored until end of transaction block', None, None)),
    ('rollback',
     'ROLLBACK'),
    ('select * from fd_n order by id',
     [(1, 9)]),
    ("select attname from pg_attribute where attrelid = 'fd_n'::regclass and attnum > 0 order by attnum",
     [('id',), ('pid',)]),
    ('begin',
     'BEGIN'),
    ("alter table fd_n add column extra text default 'e'",
     'ALTER TABLE'),
    ('alter table fd_n drop column pid',
     'ALTER TABLE'),
    ('insert into fd_n values (3)',
     'INSERT 0 1'),
    ('commit',
     'COMMIT'),
    ('select * from fd_n order by id',
     [(1, 'e'), (3, 'e')]),
    ("select attname, attisdropped, atttypid from pg_attribute where attrelid = 'fd_n'::regclass and attnum > 0 order by attnum",
     [('id', False, 23), ('........pg.dropped.2........', True, 0), ('extra', False, 25)]),
    ("select column_name from information_schema.columns where table_name = 'fd_n' order by ordinal_position",
     [('id',), ('extra',)]),
    ('insert into fd_n (id, pid) values (4, 1)',
     ('42703', 'column "pid" of relation "fd_n" does not exist', None, None)),
    ('begin',
     'BEGIN'),
    ('alter table fd_n alter column extra set not null',
     'ALTER TABLE'),
    ('update fd_n set extra = null where id = 3',
     ('23502', 'null value in column "extra" of relation "fd_n" violates not-null constraint', 'Failing row contains (3, null).', None)),
    ('commit',
     'ROLLBACK'),
    ('alter table fd_n alter column extra drop not null',
     'ALTER TABLE'),
    ('update fd_n set extra = null where id = 3',
     'UPDATE 1'),
    ('alter table fd_n alter column extra set not null',
     ('23502', 'column "extra" of relation "fd_n" contains null values', None, None)),
    ('alter table fd_n alter column id drop not null',
     ('42P16', 'column "id" is in a primary key', None, None)),
    ('select * from fd_n order by id',
     [(1, 'e'), (3, None)]),
    ('drop table fd_c, fd_i, fd_n, fd_p',
     'DROP TABLE'),
]



def test_foreign_keys(server):
    run_steps_clean(server, STEPS, ["drop table if exists fk_r, fk_d, fk_n, fk_c, fk_t, fk_m, fk_p"])


def test_deferred_constraints_and_changes_in_blocks(server):
    run_steps_clean(server, DEFERRED_STEPS, ["drop table if exists fd_c, fd_i, fd_n, fd_p"])


def in_thread(fn):
    """Run `fn` on a thread; its result (or exception) once joined."""
    out: dict = {}

    def run():
        try:
            out["value"] = fn()
        except Exception as e:  # noqa: BLE001
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out


def test_a_referencing_insert_waits_for_a_delete_of_its_row(db):
    """The insert's check locks the referenced row (KEY SHARE) and so waits for the
    delete that holds it; once that commits, the row is gone: 23503. The other way
    round, the delete waits for the insert and finds its row: 23503."""
    p, c = db.table("fkp"), db.table("fkc")
    a, b = db.connect(autocommit=False), db.connect(autocommit=False)
    a.execute(f"create table {p} (id int primary key)")
    a.execute(f"create table {c} (id int primary key, pid int references {p})")
    a.execute(f"insert into {p} values (1), (2)")
    a.commit()
    a.execute(f"delete from {p} where id = 1")
    t, out = in_thread(lambda: b.execute(f"insert into {c} values (1, 1)"))
    time.sleep(0.3)
    assert t.is_alive(), "the insert did not wait for the delete"
    a.commit()
    t.join(10)
    assert isinstance(out.get("error"), psycopg.errors.ForeignKeyViolation), out
    b.rollback()
    b.execute(f"insert into {c} values (2, 2)")
    t, out = in_thread(lambda: a.execute(f"delete from {p} where id = 2"))
    time.sleep(0.3)
    assert t.is_alive(), "the delete did not wait for the insert"
    b.commit()
    t.join(10)
    assert isinstance(out.get("error"), psycopg.errors.ForeignKeyViolation), out
    a.rollback()
    a.close()
    b.close()


def test_a_change_in_a_block_keeps_others_out_until_it_ends(db):
    """ALTER TABLE on an existing table inside a block: others wait for the table until
    the block ends, then see the change if it committed, and the old table if not."""
    t = db.table("fkb")
    a, b = db.connect(autocommit=False), db.connect()
    a.execute(f"create table {t} (id int primary key, v int not null)")
    a.execute(f"insert into {t} values (1, 10)")
    a.commit()
    a.execute(f"alter table {t} drop column v")
    th, out = in_thread(lambda: b.execute(f"select * from {t}").fetchall())
    time.sleep(0.3)
    assert th.is_alive(), "a reader did not wait for the change"
    a.rollback()
    th.join(10)
    assert out.get("value") == [(1, 10)], out
    a.execute(f"alter table {t} drop column v")
    th, out = in_thread(lambda: b.execute(f"select * from {t}").fetchall())
    time.sleep(0.3)
    a.commit()
    th.join(10)
    assert out.get("value") == [(1,)], out
    a.close()
    b.close()


def test_changes_in_blocks_survive_a_crash_and_uncommitted_ones_do_not(nodes):  # noqa: F811
    node = nodes().start()
    with node.connect() as c:
        c.execute("create table kp (id int primary key)")
        c.execute("create table kc (id int primary key, pid int, note text not null)")
        c.execute("insert into kp values (1)")
        c.execute("insert into kc values (1, 1, 'a')")
    with node.connect(autocommit=False) as c:
        c.execute("alter table kc add constraint kc_fk foreign key (pid) references kp")
        c.execute("alter table kc alter column note drop not null")
        c.execute("alter table kc add column extra int default 7")
        c.execute("insert into kc (id, pid) values (2, 1)")
        c.commit()
    open_block = node.connect(autocommit=False)
    open_block.execute("alter table kc drop column extra")
    open_block.execute("insert into kp values (2)")
    with node.connect() as c:
        # The checkpoint's catalog image holds the committed definition, not the open
        # block's.
        c.execute("checkpoint")
    node.kill()
    node.start()
    with node.connect() as c:
        assert c.execute("select * from kc order by id").fetchall() == [(1, 1, "a", 7), (2, 1, None, 7)]
        assert c.execute("select * from kp").fetchall() == [(1,)]
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            c.execute("insert into kc values (3, 5, 'x')")
        c.execute("alter table kc drop column extra")
    node.kill()
    node.start()
    with node.connect() as c:
        assert c.execute("select * from kc order by id").fetchall() == [(1, 1, "a"), (2, 1, None)]


def test_many_pending_checks_settle_and_forward_references_still_pass(db, conn):
    """A statement (or a transaction, for deferred constraints) that queues thousands of
    checks settles them as it goes (those that pass are done); the rest, here rows that
    reference rows coming later in the same COPY, pass at its end."""
    t = db.table("fkf")
    conn.execute(f"create table {t} (id int primary key, next int references {t})")
    n = 10_000
    null = "\\N"
    with conn.cursor().copy(f"copy {t} from stdin") as cp:
        for i in range(1, n + 1):
            cp.write(f"{i}\t{i + 1 if i < n else null}\n")
    assert conn.execute(f"select count(*), count(next) from {t}").fetchone() == (n, n - 1)
    with pytest.raises(psycopg.errors.ForeignKeyViolation):
        with conn.cursor().copy(f"copy {t} from stdin") as cp:
            for i in range(n + 1, 2 * n + 1):
                cp.write(f"{i}\t{i + 1 if i != n + 5000 else 3 * n}\n")
            cp.write(f"{2 * n + 1}\t{null}\n")
    assert conn.execute(f"select count(*) from {t}").fetchone() == (n,)
    p, c = db.table("fkdp"), db.table("fkdc")
    conn.execute(f"create table {p} (id int primary key)")
    conn.execute(f"create table {c} (id int primary key, pid int references {p} deferrable initially deferred)")
    with conn.transaction():
        cur = conn.cursor()
        cur.executemany(f"insert into {c} values (%s, %s)", [(i, i) for i in range(6000)])
        cur.executemany(f"insert into {p} values (%s)", [(i,) for i in range(6000)])
    assert conn.execute(f"select count(*) from {c}").fetchone() == (6000,)


ODD_STEPS = [
    ('create table fo_p (id int primary key, u int unique)',
     'CREATE TABLE'),
    ('create view fo_v as select * from fo_p',
     'CREATE VIEW'),
    ('create table fo_c (a int references fo_v)',
     ('42809', 'referenced relation "fo_v" is not a table', None, None)),
    ('create table fo_c (a int8 references fo_p (u))',
     'CREATE TABLE'),
    ('insert into fo_c values (3000000000)',
     ('23503', 'insert or update on table "fo_c" violates foreign key constraint "fo_c_a_fkey"', 'Key (a)=(3000000000) is not present in table "fo_p".', 'fo_c_a_fkey')),
    ('begin',
     'BEGIN'),
    ('set constraints fo_p_pkey deferred',
     ('42809', 'constraint "fo_p_pkey" is not deferrable', None, None)),
    ('rollback',
     'ROLLBACK'),
    ('set constraints all',
     ('42601', 'syntax error at end of input', None, None)),
    ('drop table fo_c',
     'DROP TABLE'),
    ('drop view fo_v',
     'DROP VIEW'),
    ('drop table fo_p',
     'DROP TABLE'),
]


def test_foreign_keys_odd_cases(server):
    """A view referenced, a value the referenced column cannot hold, SET CONSTRAINTS on a
    constraint that cannot be deferred, and a SET CONSTRAINTS without its mode."""
    run_steps_clean(server, ODD_STEPS, [
        "drop table if exists fo_c", "drop view if exists fo_v", "drop table if exists fo_p"])


ADD_COLUMN_STEPS = [
    ('create table ar_p (id int primary key, code text unique)',
     'CREATE TABLE'),
    ('create table ar_c (id int primary key)',
     'CREATE TABLE'),
    ("insert into ar_p values (1, 'a'), (2, 'b')",
     'INSERT 0 2'),
    ('insert into ar_c values (10), (11)',
     'INSERT 0 2'),
    ('alter table ar_c add column pid int references ar_p',
     'ALTER TABLE'),
    ('insert into ar_c values (12, 5)',
     ('23503', 'insert or update on table "ar_c" violates foreign key constraint "ar_c_pid_fkey"', 'Key (pid)=(5) is not present in table "ar_p".', 'ar_c_pid_fkey')),
    ('insert into ar_c values (12, 2)',
     'INSERT 0 1'),
    ("alter table ar_c add column pcode text default 'zz' references ar_p (code)",
     ('23503', 'insert or update on table "ar_c" violates foreign key constraint "ar_c_pcode_fkey"', 'Key (pcode)=(zz) is not present in table "ar_p".', 'ar_c_pcode_fkey')),
    ("alter table ar_c add column pcode text default 'a' constraint ar_c_code_fk references ar_p (code) on delete cascade deferrable initially deferred",
     'ALTER TABLE'),
    ('select * from ar_c order by id',
     [(10, None, 'a'), (11, None, 'a'), (12, 2, 'a')]),
    ("select conname, pg_get_constraintdef(oid) from pg_constraint where conrelid = 'ar_c'::regclass and contype = 'f' order by 1",
     [('ar_c_code_fk', 'FOREIGN KEY (pcode) REFERENCES ar_p(code) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED'), ('ar_c_pid_fkey', 'FOREIGN KEY (pid) REFERENCES ar_p(id)')]),
    ("delete from ar_p where code = 'a'",
     'DELETE 1'),
    ('delete from ar_c where pid = 2',
     'DELETE 0'),
    ("delete from ar_p where code = 'a'",
     'DELETE 0'),
    ('select * from ar_c order by id',
     []),
    ('begin',
     'BEGIN'),
    ('alter table ar_c add column other int references ar_p',
     'ALTER TABLE'),
    ("insert into ar_c values (20, null, 'b', 7)",
     ('23503', 'insert or update on table "ar_c" violates foreign key constraint "ar_c_other_fkey"', 'Key (other)=(7) is not present in table "ar_p".', 'ar_c_other_fkey')),
    ('rollback',
     'ROLLBACK'),
    ('begin',
     'BEGIN'),
    ('alter table ar_c add column other int references ar_p',
     'ALTER TABLE'),
    ("insert into ar_c values (20, null, 'b', 2)",
     'INSERT 0 1'),
    ('commit',
     'COMMIT'),
    ('select * from ar_c order by id',
     [(20, None, 'b', 2)]),
    ('create table ar_e (id int primary key)',
     'CREATE TABLE'),
    ('alter table ar_e add column x int default 9 references ar_p',
     'ALTER TABLE'),
    ('select * from ar_e',
     []),
    ('drop table ar_e, ar_c, ar_p',
     'DROP TABLE'),
]


def test_add_column_with_references(server):
    """ALTER TABLE ... ADD COLUMN ... REFERENCES: the rows there hold the column's default,
    which must be in the referenced table if any row is there; inside a block too."""
    run_steps_clean(server, ADD_COLUMN_STEPS, ["drop table if exists ar_e, ar_c, ar_p"])


TRUNCATES = [
    ('DROP TABLE IF EXISTS tc',
     'DROP TABLE'),
    ('DROP TABLE IF EXISTS tp',
     'DROP TABLE'),
    ('CREATE TABLE tp (id serial PRIMARY KEY, n int)',
     'CREATE TABLE'),
    ('CREATE TABLE tc (id serial PRIMARY KEY, pid int REFERENCES tp)',
     'CREATE TABLE'),
    ('INSERT INTO tp (n) VALUES (1), (2)',
     'INSERT 0 2'),
    ('INSERT INTO tc (pid) VALUES (1)',
     'INSERT 0 1'),
    ('TRUNCATE tc RESTART IDENTITY',
     'TRUNCATE TABLE'),
    ('INSERT INTO tc (pid) VALUES (1) RETURNING id',
     [(1,)]),
    ('TRUNCATE tp',
     ('0A000', 'cannot truncate a table referenced in a foreign key constraint', 'Table "tc" references "tp".', None)),
    ('TRUNCATE tp CASCADE',
     'TRUNCATE TABLE'),
    ('SELECT count(*) FROM tc',
     [(0,)]),
    ('INSERT INTO tp (n) VALUES (5) RETURNING id',
     [(3,)]),
    ('TRUNCATE tp, tc RESTART IDENTITY CASCADE',
     'TRUNCATE TABLE'),
    ('INSERT INTO tp (n) VALUES (5) RETURNING id',
     [(1,)]),
    ('TRUNCATE tp CONTINUE IDENTITY CASCADE',
     'TRUNCATE TABLE'),
    ('INSERT INTO tp (n) VALUES (6) RETURNING id',
     [(2,)]),
    ('BEGIN',
     'BEGIN'),
    ('TRUNCATE tp RESTART IDENTITY CASCADE',
     'TRUNCATE TABLE'),
    ('INSERT INTO tp (n) VALUES (7) RETURNING id',
     [(1,)]),
    ('ROLLBACK',
     'ROLLBACK'),
    ('INSERT INTO tp (n) VALUES (8) RETURNING id',
     [(3,)]),
    ('DROP TABLE tc',
     'DROP TABLE'),
    ('DROP TABLE tp',
     'DROP TABLE'),
]


def test_truncate_cascade_and_restart_identity(server):
    """TRUNCATE ... CASCADE truncates the tables whose foreign keys reference it (with
    PostgreSQL's notice); RESTART IDENTITY restarts their serial sequences, and a
    rollback sets them back. Every expectation is PostgreSQL 15's."""
    notices = []
    with server.connect(autocommit=True) as c:
        c.add_notice_handler(lambda d: notices.append((d.severity, d.message_primary)))
        run_steps(c, TRUNCATES)
    assert ("NOTICE", 'truncate cascades to table "tc"') in notices, notices


DROP_CASCADE = [
    ('DROP TABLE IF EXISTS dc2',
     'DROP TABLE'),
    ('DROP TABLE IF EXISTS dc',
     'DROP TABLE'),
    ('DROP TABLE IF EXISTS dp',
     'DROP TABLE'),
    ('CREATE TABLE dp (id int PRIMARY KEY)',
     'CREATE TABLE'),
    ('CREATE TABLE dc (id int PRIMARY KEY, pid int CONSTRAINT dc_p REFERENCES dp, qid int CONSTRAINT dc_q REFERENCES dp)',
     'CREATE TABLE'),
    ('CREATE TABLE dc2 (id int PRIMARY KEY, pid int REFERENCES dp)',
     'CREATE TABLE'),
    ('INSERT INTO dp VALUES (1)',
     'INSERT 0 1'),
    ('INSERT INTO dc VALUES (1, 1, 1)',
     'INSERT 0 1'),
    ('DROP TABLE dp',
     ('2BP01', 'cannot drop table dp because other objects depend on it', 'constraint dc_p on table dc depends on table dp\nconstraint dc_q on table dc depends on table dp\nconstraint dc2_pid_fkey on table dc2 depends on table dp', None)),
    ('DROP TABLE dp CASCADE',
     'DROP TABLE'),
    ("SELECT conname FROM pg_constraint WHERE conrelid = 'dc'::regclass ORDER BY 1",
     [('dc_pkey',)]),
    ('INSERT INTO dc VALUES (2, 99, 99)',
     'INSERT 0 1'),
    ('SELECT count(*) FROM dc',
     [(2,)]),
    ('DROP TABLE dc, dc2',
     'DROP TABLE'),
]


def test_drop_table_cascade_drops_the_foreign_keys_referencing_it(server):
    """DROP TABLE ... CASCADE drops the other tables' foreign keys that reference it,
    with PostgreSQL's notice, and leaves their rows; a table with two foreign keys to
    one table is created without waiting on itself. Every expectation is PostgreSQL
    15's."""
    notices = []
    with server.connect(autocommit=True) as c:
        c.add_notice_handler(lambda d: notices.append((d.severity, d.message_primary)))
        run_steps(c, DROP_CASCADE)
    assert ("NOTICE", "drop cascades to 3 other objects") in notices, notices


MATCH_FULL_STEPS = [
    ('create table mfp (a int, b int, primary key (a, b))', 'CREATE TABLE'),
    ('insert into mfp values (1, 1)', 'INSERT 0 1'),
    ('create table mfc (id int primary key, a int, b int, '
     'constraint mfc_fk foreign key (a, b) references mfp match full)', 'CREATE TABLE'),
    ('insert into mfc values (1, 1, 1), (2, null, null)', 'INSERT 0 2'),
    ('insert into mfc values (3, 1, null)',
     ('23503', 'insert or update on table "mfc" violates foreign key constraint "mfc_fk"',
      'MATCH FULL does not allow mixing of null and nonnull key values.', 'mfc_fk')),
    ('update mfc set b = null where id = 1',
     ('23503', 'insert or update on table "mfc" violates foreign key constraint "mfc_fk"',
      'MATCH FULL does not allow mixing of null and nonnull key values.', 'mfc_fk')),
    ('insert into mfc values (4, 2, 2)',
     ('23503', 'insert or update on table "mfc" violates foreign key constraint "mfc_fk"',
      'Key (a, b)=(2, 2) is not present in table "mfp".', 'mfc_fk')),
    ("select confmatchtype, pg_get_constraintdef(oid) from pg_constraint where conname = 'mfc_fk'",
     [('f', 'FOREIGN KEY (a, b) REFERENCES mfp(a, b) MATCH FULL')]),
    # MATCH SIMPLE lets a row with some NULLs through; ADD ... MATCH FULL then refuses it.
    ('create table mfs (id int primary key, a int, b int)', 'CREATE TABLE'),
    ('insert into mfs values (1, 1, null)', 'INSERT 0 1'),
    ('alter table mfs add constraint mfs_fk foreign key (a, b) references mfp match full',
     ('23503', 'insert or update on table "mfs" violates foreign key constraint "mfs_fk"',
      'MATCH FULL does not allow mixing of null and nonnull key values.', 'mfs_fk')),
    ('alter table mfs add constraint mfs_fk foreign key (a, b) references mfp', 'ALTER TABLE'),
    ('create table mfx (a int, b int, foreign key (a, b) references mfp match partial)',
     ('0A000', 'MATCH PARTIAL not yet implemented')),
]


def test_match_full(server):
    """MATCH FULL: a row's key columns are all NULL or none is, and a full key must be
    referenced; shown by the catalogs."""
    run_steps_clean(server, MATCH_FULL_STEPS, ["drop table if exists mfc, mfs, mfx, mfp"])


NOT_VALID_STEPS = [
    ('create table nvp (id int primary key)', 'CREATE TABLE'),
    ('create table nvc (id int primary key, pid int)', 'CREATE TABLE'),
    ('insert into nvp values (1)', 'INSERT 0 1'),
    ('insert into nvc values (1, 1), (2, 7)', 'INSERT 0 2'),
    ('alter table nvc add constraint nvc_fk foreign key (pid) references nvp',
     ('23503', 'insert or update on table "nvc" violates foreign key constraint "nvc_fk"',
      'Key (pid)=(7) is not present in table "nvp".', 'nvc_fk')),
    ('alter table nvc add constraint nvc_fk foreign key (pid) references nvp not valid', 'ALTER TABLE'),
    # New rows are checked; the row there is not, until VALIDATE CONSTRAINT.
    ('insert into nvc values (3, 8)',
     ('23503', 'insert or update on table "nvc" violates foreign key constraint "nvc_fk"',
      'Key (pid)=(8) is not present in table "nvp".', 'nvc_fk')),
    ("select convalidated, pg_get_constraintdef(oid) from pg_constraint where conname = 'nvc_fk'",
     [(False, 'FOREIGN KEY (pid) REFERENCES nvp(id) NOT VALID')]),
    ('alter table nvc validate constraint nvc_fk',
     ('23503', 'insert or update on table "nvc" violates foreign key constraint "nvc_fk"',
      'Key (pid)=(7) is not present in table "nvp".', 'nvc_fk')),
    ('insert into nvp values (7)', 'INSERT 0 1'),
    ('alter table nvc validate constraint nvc_fk', 'ALTER TABLE'),
    ("select convalidated, pg_get_constraintdef(oid) from pg_constraint where conname = 'nvc_fk'",
     [(True, 'FOREIGN KEY (pid) REFERENCES nvp(id)')]),
    ('delete from nvp where id = 7',
     ('23503', 'update or delete on table "nvp" violates foreign key constraint "nvc_fk" on table "nvc"',
      'Key (id)=(7) is still referenced from table "nvc".', 'nvc_fk')),
]


def test_foreign_key_not_valid_and_validate(server):
    run_steps_clean(server, NOT_VALID_STEPS, ["drop table if exists nvc, nvp"])


def test_constraints_not_valid_survive_a_crash(nodes):  # noqa: F811
    """Whether a constraint is validated, and MATCH FULL, are part of the logged
    definition: replayed after a crash, and kept by a checkpoint."""
    node = nodes().start()
    with node.connect() as c:
        c.execute("create table sp (a int, b int, primary key (a, b))")
        c.execute("create table sc (id int primary key, a int, b int, q int)")
        c.execute("insert into sc values (1, 5, 5, -1)")
        c.execute("alter table sc add constraint sc_fk foreign key (a, b) references sp match full not valid")
        c.execute("alter table sc add constraint sc_q check (q > 0) not valid")
    shown = ("select conname, convalidated, confmatchtype from pg_constraint "
             "where conrelid = 'sc'::regclass and contype in ('c', 'f') order by 1")
    for checkpoint in (False, True):
        if checkpoint:
            with node.connect() as c:
                c.execute("checkpoint")
        node.kill()
        node.start()
        with node.connect() as c:
            assert c.execute(shown).fetchall() == [("sc_fk", False, "f"), ("sc_q", False, " ")]
            with pytest.raises(psycopg.errors.CheckViolation):
                c.execute("insert into sc values (2, null, null, 0)")
            with pytest.raises(psycopg.errors.ForeignKeyViolation):
                c.execute("insert into sc values (2, 1, null, 1)")
    with node.connect() as c:
        c.execute("update sc set q = 1")
        c.execute("alter table sc validate constraint sc_q")
    node.kill()
    node.start()
    with node.connect() as c:
        assert c.execute(shown).fetchall() == [("sc_fk", False, "f"), ("sc_q", True, " ")]
