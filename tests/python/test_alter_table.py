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


REWRITE_TYPE = [
    ('DROP TABLE IF EXISTS rwt, rwt2', 'DROP TABLE'),
    ('CREATE TABLE rwt (id int PRIMARY KEY, t text, n int, d numeric(8,3))', 'CREATE TABLE'),
    ('CREATE INDEX rwt_n ON rwt (n)', 'CREATE INDEX'),
    ("INSERT INTO rwt VALUES (1, '1', 10, 1.5), (2, '22', 20, 2.25), (3, NULL, 30, -3.125)", 'INSERT 0 3'),
    ('ALTER TABLE rwt ALTER COLUMN t TYPE int',
     ('42804', 'column "t" cannot be cast automatically to type integer')),
    ('ALTER TABLE rwt ALTER COLUMN t TYPE int USING t::int', 'ALTER TABLE'),
    ('ALTER TABLE rwt ALTER COLUMN n TYPE text', 'ALTER TABLE'),
    ("SELECT id FROM rwt WHERE n = '20'", [(2,)]),
    ('ALTER TABLE rwt ALTER COLUMN d TYPE int', 'ALTER TABLE'),
    ('SELECT * FROM rwt ORDER BY id', [(1, 1, '10', 2), (2, 22, '20', 2), (3, None, '30', -3)]),
    ('ALTER TABLE rwt ALTER COLUMN id TYPE text', 'ALTER TABLE'),
    ("INSERT INTO rwt VALUES ('10', 5, '7', 1)", 'INSERT 0 1'),
    ('SELECT id FROM rwt ORDER BY id', [('1',), ('10',), ('2',), ('3',)]),
    ('ALTER TABLE rwt ALTER COLUMN id TYPE int USING id::int + 1', 'ALTER TABLE'),
    ('SELECT id FROM rwt ORDER BY id', [(2,), (3,), (4,), (11,)]),
    ('ALTER TABLE rwt ALTER COLUMN id TYPE int USING 1',
     ('23505', 'could not create unique index "rwt_pkey"', 'Key (id)=(1) is duplicated.')),
    ('ALTER TABLE rwt ALTER COLUMN n TYPE int USING n::int * 2', 'ALTER TABLE'),
    ('SELECT id FROM rwt WHERE n = 40', [(3,)]),
    ("ALTER TABLE rwt ALTER COLUMN t TYPE boolean",
     ('42804', 'column "t" cannot be cast automatically to type boolean')),
    ("ALTER TABLE rwt ALTER COLUMN n TYPE text USING 'x' || n",
     'ALTER TABLE'),
    ('ALTER TABLE rwt ALTER COLUMN n TYPE int USING n::int',
     ('22P02', 'invalid input syntax for type integer: "x20"')),
    ('CREATE TABLE rwt2 (id int, v text NOT NULL)', 'CREATE TABLE'),
    ("INSERT INTO rwt2 VALUES (1, 'a'), (2, '')", 'INSERT 0 2'),
    ("ALTER TABLE rwt2 ALTER COLUMN v TYPE int USING nullif(v, '')::int",
     ('22P02', 'invalid input syntax for type integer: "a"')),
    ("DELETE FROM rwt2 WHERE v = 'a'", 'DELETE 1'),
    ("ALTER TABLE rwt2 ALTER COLUMN v TYPE int USING nullif(v, '')::int",
     ('23502', 'column "v" of relation "rwt2" contains null values')),
    ("ALTER TABLE rwt2 ALTER COLUMN v TYPE varchar(3) USING v || 'long'",
     ('22001', 'value too long for type character varying(3)')),
    ('BEGIN', 'BEGIN'),
    ("ALTER TABLE rwt2 ALTER COLUMN id TYPE text USING 'x' || id", 'ALTER TABLE'),
    ('SELECT * FROM rwt2', [('x2', '')]),
    ('ROLLBACK', 'ROLLBACK'),
    ('SELECT * FROM rwt2', [(2, '')]),
    ('BEGIN', 'BEGIN'),
    ("ALTER TABLE rwt2 ALTER COLUMN id TYPE text USING 'x' || id", 'ALTER TABLE'),
    ('COMMIT', 'COMMIT'),
    ('SELECT * FROM rwt2', [('x2', '')]),
    ("SELECT data_type FROM information_schema.columns WHERE table_name = 'rwt2' ORDER BY ordinal_position",
     [('text',), ('text',)]),
    ('DROP TABLE rwt, rwt2', 'DROP TABLE'),
]


def test_alter_column_type_rewriting_the_rows_answers_as_postgresql(server):
    """ALTER COLUMN ... TYPE [USING] that converts every value (as Django's AlterField
    from a CharField to an IntegerField emits it): casts with PostgreSQL's errors, a key
    column's values checked for duplicates, the indexes rebuilt, in a block too, where a
    rollback keeps the old type. Every expectation is PostgreSQL 15's."""
    with server.connect(autocommit=True) as c:
        run_steps(c, REWRITE_TYPE)


@pytest.mark.steadydb_only
def test_a_rewritten_column_survives_a_crash(nodes):  # noqa: F811
    node = nodes().start()
    with node.connect() as c:
        c.execute("create table rwc (id text primary key, n text)")
        c.execute("create index rwc_n on rwc (n)")
        c.execute("insert into rwc select g::text, (g * 2)::text from generate_series(1, 500) g")
        c.execute("alter table rwc alter column id type int using id::int")
        c.execute("alter table rwc alter column n type bigint using n::bigint")
        c.execute("insert into rwc values (501, 1002)")
    for _ in range(2):
        node.kill()
        node.start()
        with node.connect() as c:
            assert c.execute("select count(*), sum(id), sum(n) from rwc").fetchone() == (501, 125751, 251502)
            assert c.execute("select id from rwc where n = 600").fetchone() == (300,)
            assert c.execute("select n from rwc where id = 77").fetchone() == (154,)
            with pytest.raises(psycopg.errors.UniqueViolation):
                c.execute("insert into rwc values (5, 1)")
            c.execute("checkpoint")

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



def test_a_dropped_primary_key(server):
    """As `pg_dump --clean` output drops keys before it drops tables: the rows stay, the
    key's values may repeat, its columns stay NOT NULL, the indexes still find the rows;
    a foreign key that needs it keeps it (2BP01)."""
    with server.connect() as c:
        c.execute("drop table if exists dk_child, dk")
        c.execute("create table dk (id int primary key, v text)")
        c.execute("create index dk_v on dk (v)")
        c.execute("insert into dk select g, 'v' || (g % 10) from generate_series(1, 500) g")
        c.execute("create table dk_child (pid int references dk)")
        with pytest.raises(psycopg.errors.DependentObjectsStillExist) as ei:
            c.execute("alter table dk drop constraint dk_pkey")
        assert ei.value.diag.message_detail == "constraint dk_child_pid_fkey on table dk_child depends on index dk_pkey"
        c.execute("drop table dk_child")
        c.execute("alter table dk drop constraint dk_pkey")
        assert c.execute("select count(*) from pg_constraint where conrelid = 'dk'::regclass").fetchone() == (0,)
        c.execute("insert into dk values (1, 'again')")
        with pytest.raises(psycopg.errors.NotNullViolation):
            c.execute("insert into dk values (null, 'x')")
        assert c.execute("select count(*), count(distinct id), sum(id) from dk").fetchone() == (501, 500, 125251)
        assert c.execute("select count(*) from dk where v = 'v3'").fetchone() == (50,)
        c.execute("update dk set v = 'changed' where id = 1")
        assert c.execute("select count(*) from dk where v = 'changed'").fetchone() == (2,)
        c.execute("drop table dk")


@pytest.mark.steadydb_only
def test_a_dropped_primary_key_survives_a_crash(nodes):  # noqa: F811
    node = nodes().start()
    with node.connect() as c:
        c.execute("create table dkc (id int primary key, v text)")
        c.execute("insert into dkc select g, 'v' || g from generate_series(1, 300) g")
        c.execute("alter table dkc drop constraint dkc_pkey")
        c.execute("insert into dkc values (1, 'again')")
    for _ in range(2):
        node.kill()
        node.start()
        with node.connect() as c:
            assert c.execute("select count(*), count(distinct id), sum(id) from dkc").fetchone() == (301, 300, 45151)
            c.execute("insert into dkc values (2, 'more')")
            c.execute("delete from dkc where v = 'more'")
            assert c.execute("select count(*) from dkc").fetchone() == (301,)
            c.execute("checkpoint")


ALTER_TYPE = [
    ('DROP VIEW IF EXISTS actv',
     'DROP VIEW'),
    ('DROP TABLE IF EXISTS act',
     'DROP TABLE'),
    ('CREATE TABLE act (id smallint PRIMARY KEY, s varchar(10), c char(4), n int, p numeric(6,2), t text)',
     'CREATE TABLE'),
    ('CREATE INDEX act_s ON act (s)',
     'CREATE INDEX'),
    ("INSERT INTO act VALUES (1, 'abc', 'ab', 5, 1.50, 'hello world'), (2, 'abcdefghij', NULL, -7, 9999.99, NULL), (3, NULL, 'abcd', 2147483647, NULL, 'x')",
     'INSERT 0 3'),
    ('ALTER TABLE act ALTER COLUMN s TYPE varchar(20)',
     'ALTER TABLE'),
    ('ALTER TABLE act ALTER COLUMN s TYPE varchar(5)',
     ('22001', 'value too long for type character varying(5)', None, None)),
    ('ALTER TABLE act ALTER COLUMN s TYPE text',
     'ALTER TABLE'),
    ('ALTER TABLE act ALTER COLUMN t TYPE varchar(11)',
     'ALTER TABLE'),
    ('ALTER TABLE act ALTER COLUMN t TYPE varchar(10)',
     ('22001', 'value too long for type character varying(10)', None, None)),
    ('ALTER TABLE act ALTER COLUMN n TYPE bigint',
     'ALTER TABLE'),
    ('ALTER TABLE act ALTER COLUMN id TYPE integer',
     'ALTER TABLE'),
    ('ALTER TABLE act ALTER COLUMN p TYPE numeric(10,2)',
     'ALTER TABLE'),
    ('ALTER TABLE act ALTER COLUMN c TYPE varchar(10)',
     'ALTER TABLE'),
    ('ALTER TABLE act ALTER COLUMN zz TYPE text',
     ('42703', 'column "zz" of relation "act" does not exist', None, None)),
    ('ALTER TABLE act ALTER COLUMN id TYPE serial',
     ('42704', 'type "serial" does not exist', None, None)),
    ("INSERT INTO act VALUES (40000, 'x', 'y', 9000000000, 123456.78, 'z')",
     'INSERT 0 1'),
    ('SELECT * FROM act ORDER BY id',
     [(1, 'abc', 'ab', 5, Decimal('1.50'), 'hello world'), (2, 'abcdefghij', None, -7, Decimal('9999.99'), None), (3, None, 'abcd', 2147483647, None, 'x'), (40000, 'x', 'y', 9000000000, Decimal('123456.78'), 'z')]),
    ("SELECT id FROM act WHERE s = 'abcdefghij'",
     [(2,)]),
    ("SELECT column_name, data_type, character_maximum_length, numeric_precision FROM information_schema.columns WHERE table_name = 'act' ORDER BY ordinal_position",
     [('id', 'integer', None, 32), ('s', 'text', None, None), ('c', 'character varying', 10, None), ('n', 'bigint', None, 64), ('p', 'numeric', None, 10), ('t', 'character varying', 11, None)]),
    ('BEGIN',
     'BEGIN'),
    ('ALTER TABLE act ALTER COLUMN t TYPE varchar(50)',
     'ALTER TABLE'),
    ("SELECT character_maximum_length FROM information_schema.columns WHERE table_name = 'act' AND column_name = 't'",
     [(50,)]),
    ('ROLLBACK',
     'ROLLBACK'),
    ("SELECT character_maximum_length FROM information_schema.columns WHERE table_name = 'act' AND column_name = 't'",
     [(11,)]),
    ('CREATE VIEW actv AS SELECT id, s FROM act',
     'CREATE VIEW'),
    ('ALTER TABLE act ALTER COLUMN s TYPE varchar(30)',
     ('0A000', 'cannot alter type of a column used by a view or rule', 'rule _RETURN on view actv depends on column "s"', None)),
    ('DROP VIEW actv',
     'DROP VIEW'),
    ('DROP TABLE act',
     'DROP TABLE'),
]


def test_alter_column_type_answers_as_postgresql(server):
    """ALTER COLUMN ... TYPE where no row needs rewriting (a string's length or kind, a
    wider integer, a numeric's precision): the values are checked against the new type
    (22001), rows written before read as the new type, indexes and blocks keep working,
    and a column a view reads is refused as in PostgreSQL. Every expectation is
    PostgreSQL 15's."""
    with server.connect(autocommit=True) as c:
        run_steps(c, ALTER_TYPE)


@pytest.mark.steadydb_only
def test_a_widened_column_survives_a_checkpoint_and_a_crash(nodes):  # noqa: F811
    """Rows written before an integer column was widened read as the wider type after a
    checkpoint and a crash, beside rows written after."""
    node = nodes().start()
    with node.connect() as c:
        c.execute("create table wid (id int primary key, n int, s varchar(5))")
        c.execute("insert into wid select g, g * 1000, 's' || g from generate_series(1, 300) g")
        c.execute("checkpoint")
        c.execute("alter table wid alter column n type bigint")
        c.execute("alter table wid alter column s type varchar(50)")
        c.execute("insert into wid values (301, 9000000000, 'a longer value than before')")
    node.kill()
    node.start()
    with node.connect() as c:
        assert c.execute("select sum(n), max(length(s)) from wid").fetchone() == (45150000 + 9000000000, 26)
        assert c.execute("select n from wid where id = 7").fetchone() == (7000,)
        assert c.execute("select format_type(atttypid, atttypmod) from pg_attribute"
                         " where attrelid = 'wid'::regclass and attname = 'n'").fetchone() == ("bigint",)


def test_rename_to_in_a_block(db, server):
    """ALTER TABLE ... RENAME TO on an existing table inside a transaction block (a
    Django RenameModel): the new name at once for the block, the old one back after a
    rollback (also to a savepoint), the new one for everyone after a commit."""
    t, renamed = db.table("rnb"), db.table("rnb_new")
    with server.connect() as c:
        c.execute(f"create table {t} (id int primary key, v int)")
        c.execute(f"insert into {t} values (1, 10), (2, 20)")
    with server.connect(autocommit=False) as c:
        c.execute(f"alter table {t} rename to {renamed}")
        assert c.execute(f"select sum(v) from {renamed}").fetchone() == (30,)
        with pytest.raises(psycopg.errors.UndefinedTable):
            c.execute(f"select * from {t}")
        c.rollback()
        assert c.execute(f"select sum(v) from {t}").fetchone() == (30,)
        c.execute("savepoint a")
        c.execute(f"alter table {t} rename to {renamed}")
        c.execute("rollback to savepoint a")
        assert c.execute(f"select count(*) from {t}").fetchone() == (2,)
        c.execute(f"alter table {t} rename to {renamed}")
        c.execute(f"insert into {renamed} values (3, 30)")
        c.commit()
    with server.connect() as c:
        assert c.execute(f"select sum(v) from {renamed}").fetchone() == (60,)
        assert c.execute("select count(*) from pg_class where relname = %s", (t,)).fetchone() == (0,)
        assert c.execute(f"select pg_get_serial_sequence('{renamed}', 'id')").fetchone() == (None,)


@pytest.mark.steadydb_only
def test_a_rename_in_a_block_survives_a_crash(nodes):  # noqa: F811
    """A committed block's RENAME TO is there after a crash; an open block's, after a
    checkpoint and a crash, is not."""
    node = nodes().start()
    with node.connect() as c:
        c.execute("create table rn_a (id int primary key)")
        c.execute("create table rn_b (id int primary key)")
        c.execute("insert into rn_a values (1)")
        c.execute("insert into rn_b values (2)")
    with node.connect(autocommit=False) as c:
        c.execute("alter table rn_a rename to rn_a2")
        c.commit()
    open_block = node.connect(autocommit=False)
    open_block.execute("alter table rn_b rename to rn_b2")
    with node.connect() as c:
        c.execute("checkpoint")
    node.kill()
    node.start()
    with node.connect() as c:
        assert c.execute("select * from rn_a2").fetchall() == [(1,)]
        assert c.execute("select * from rn_b").fetchall() == [(2,)]
        with pytest.raises(psycopg.errors.UndefinedTable):
            c.execute("select * from rn_b2")
