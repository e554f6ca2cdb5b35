"""ALTER SEQUENCE with options, as migration scripts and ORMs change a sequence's step
or bounds: the named options change, the others keep their values; the next value is
the last one handed out plus the new increment (or RESTART's); PostgreSQL's checks and
messages. The expectations were taken from PostgreSQL 15 and hold there too."""

from __future__ import annotations

import psycopg
import pytest

from conftest import run_steps_clean
from crash_util import nodes  # noqa: F401  (fixture)

STEPS = [
    ("create sequence aq", "CREATE SEQUENCE"),
    ("select nextval('aq'), nextval('aq')", [(1, 2)]),
    ("alter sequence aq increment by 10", "ALTER SEQUENCE"),
    ("select nextval('aq'), nextval('aq')", [(12, 22)]),
    ("alter sequence aq maxvalue 30", "ALTER SEQUENCE"),
    # The next would be 32.
    ("select nextval('aq')",
     ("2200H", 'nextval: reached maximum value of sequence "aq" (30)')),
    ("alter sequence aq maxvalue 100 restart with 50", "ALTER SEQUENCE"),
    ("select nextval('aq')", [(50,)]),
    ("alter sequence aq minvalue 60",
     ("22023", "START value (1) cannot be less than MINVALUE (60)")),
    ("alter sequence aq minvalue 60 start 60",
     ("22023", "RESTART value (50) cannot be less than MINVALUE (60)")),
    ("alter sequence aq minvalue 5 start with 7", "ALTER SEQUENCE"),
    ("select seqstart, seqincrement, seqmax, seqmin, seqcycle from pg_sequence"
     " where seqrelid = 'aq'::regclass", [(7, 10, 100, 5, False)]),
    ("alter sequence aq restart", "ALTER SEQUENCE"),
    ("select nextval('aq'), nextval('aq')", [(7, 17)]),
    ("alter sequence aq as smallint", "ALTER SEQUENCE"),
    ("select seqtypid::regtype::text, seqmax from pg_sequence where seqrelid = 'aq'::regclass",
     [("smallint", 100)]),
    ("alter sequence aq no maxvalue increment 1", "ALTER SEQUENCE"),
    ("select seqmax, seqincrement from pg_sequence where seqrelid = 'aq'::regclass",
     [(32767, 1)]),
    ("select last_value, is_called from aq", [(17, True)]),
    ("select nextval('aq')", [(18,)]),
    ("alter sequence aq increment 0", ("22023", "INCREMENT must not be zero")),
    ("alter sequence aq cache 0", ("22023", "CACHE (0) must be greater than zero")),
    ("alter sequence aq maxvalue 3",
     ("22023", "MINVALUE (5) must be less than MAXVALUE (3)")),
    ("alter sequence aq maxvalue 99999999999",
     ("22023", "MAXVALUE (99999999999) is out of range for sequence data type smallint")),
    ("alter sequence aq_nosuch increment 2", ("42P01", 'relation "aq_nosuch" does not exist')),
    # A serial column's sequence.
    ("create table aqt (id serial primary key, v int)", "CREATE TABLE"),
    ("insert into aqt (v) values (1), (2)", "INSERT 0 2"),
    ("alter sequence aqt_id_seq increment by 100", "ALTER SEQUENCE"),
    ("insert into aqt (v) values (3)", "INSERT 0 1"),
    ("select id, v from aqt order by id", [(1, 1), (2, 2), (102, 3)]),
    ("insert into aqt default values returning id, v", [(202, None)]),
    ("select seqincrement, seqtypid::regtype::text from pg_sequence"
     " where seqrelid = 'aqt_id_seq'::regclass", [(100, "integer")]),
]

CLEANUP = ["drop table if exists aqt", "drop sequence if exists aq"]


def test_alter_sequence_options(server):
    run_steps_clean(server, STEPS, CLEANUP)


def test_alter_sequence_refused_in_a_block(server):
    with server.connect() as c:
        for sql in CLEANUP:
            c.execute(sql)
        c.execute("create sequence aq")
        try:
            c.execute("begin")
            if server.external:
                c.execute("alter sequence aq increment by 5")
            else:
                with pytest.raises(psycopg.errors.FeatureNotSupported):
                    c.execute("alter sequence aq increment by 5")
            c.execute("rollback")
        finally:
            for sql in CLEANUP:
                c.execute(sql)


def test_altered_options_survive_a_crash(nodes):  # noqa: F811
    node = nodes().start()
    with node.connect() as c:
        c.execute("create sequence cq")
        c.execute("create table cqt (id serial primary key)")
        assert c.execute("select nextval('cq')").fetchone() == (1,)
        c.execute("alter sequence cq increment by 5 maxvalue 1000")
        c.execute("insert into cqt default values")
        c.execute("alter sequence cqt_id_seq increment by 10")
        assert c.execute("select nextval('cq')").fetchone() == (6,)
    for _ in range(2):
        node.kill()
        node.start()
        with node.connect() as c:
            got = c.execute(
                "select seqincrement, seqmax from pg_sequence where seqrelid = 'cq'::regclass"
            ).fetchone()
            assert got == (5, 1000)
            n = c.execute("select nextval('cq')").fetchone()[0]
            assert n > 6 and (n - 1) % 5 == 0, n
            c.execute("insert into cqt default values returning id")
            ids = [r[0] for r in c.execute("select id from cqt order by id")]
            assert ids[0] == 1 and (ids[-1] - 1) % 10 == 0, ids
            c.execute("checkpoint")
