"""COMMENT ON TABLE and COMMENT ON COLUMN: what obj_description, col_description,
pg_description and psql's `\\d+` and `\\dt+` show, removal with IS NULL or '', the
transactional behaviour of a comment made in a block, the errors, and (SteadyDB only)
that comments survive a crash. The expectations were taken from PostgreSQL 15 and hold
there too."""

from __future__ import annotations

import psycopg
import pytest

from crash_util import nodes  # noqa: F401  (fixture)


def descriptions(conn, table: str) -> list:
    return conn.execute(
        "select objsubid, description from pg_description where objoid = %s::regclass"
        " order by objsubid", (table,)
    ).fetchall()


def test_comments_are_shown(db, conn):
    t = db.table("cm")
    conn.execute(f"create table {t} (id int primary key, name text, qty int)")
    assert conn.execute(f"comment on table {t} is 'Items we sell'").statusmessage == "COMMENT"
    assert conn.execute(f"comment on column {t}.name is 'What it''s called'").statusmessage == "COMMENT"
    conn.execute(f"comment on column public.{t}.qty is 'How many'")
    assert conn.execute(
        f"select obj_description('{t}'::regclass, 'pg_class'), col_description('{t}'::regclass, 2),"
        f" col_description('{t}'::regclass, 1)"
    ).fetchone() == ('Items we sell', "What it's called", None)
    assert descriptions(conn, t) == [(0, 'Items we sell'), (2, "What it's called"), (3, 'How many')]

    described = db.psql(command=f"\\d+ {t}").stdout
    assert "What it's called" in described and "How many" in described
    assert "Items we sell" in db.psql(command=f"\\dt+ {t}").stdout

    conn.execute(f"comment on column {t}.qty is null")
    conn.execute(f"comment on table {t} is ''")
    assert descriptions(conn, t) == [(2, "What it's called")]
    conn.execute(f"alter table {t} drop column name")
    assert descriptions(conn, t) == []


def test_a_comment_made_in_a_block(db, conn):
    """Seen by its own transaction at once, by others when it commits, and gone if the
    block rolls back."""
    t = db.table("cmb")
    conn.execute(f"create table {t} (id int primary key)")
    conn.execute(f"comment on table {t} is 'before'")
    other = db.connect()
    with db.connect(autocommit=False) as block:
        block.execute(f"comment on table {t} is 'in block'")
        assert block.execute(f"select obj_description('{t}'::regclass, 'pg_class')").fetchone() == ('in block',)
        assert other.execute(f"select obj_description('{t}'::regclass, 'pg_class')").fetchone() == ('before',)
        block.rollback()
    assert conn.execute(f"select obj_description('{t}'::regclass, 'pg_class')").fetchone() == ('before',)
    with db.connect(autocommit=False) as block:
        block.execute(f"comment on column {t}.id is 'the key'")
        block.commit()
    assert other.execute(f"select col_description('{t}'::regclass, 1)").fetchone() == ('the key',)


@pytest.mark.parametrize("sql, sqlstate, message", [
    ("comment on column cme.nope is 'x'", '42703', 'column "nope" of relation "cme" does not exist'),
    ("comment on table cme_nope is 'x'", '42P01', 'relation "cme_nope" does not exist'),
    ("comment on table cme_view is 'x'", '42809', '"cme_view" is not a table'),
])
def test_comment_errors(db, conn, sql, sqlstate, message):
    conn.execute("drop view if exists cme_view")
    conn.execute("drop table if exists cme")
    conn.execute("create table cme (id int primary key)")
    conn.execute("create view cme_view as select 1 as a")
    try:
        with pytest.raises(psycopg.Error) as ei:
            conn.execute(sql)
        assert (ei.value.sqlstate, ei.value.diag.message_primary) == (sqlstate, message)
    finally:
        conn.execute("drop view cme_view")
        conn.execute("drop table cme")


@pytest.mark.steadydb_only
def test_comments_survive_a_crash(nodes):  # noqa: F811
    node = nodes().start()
    with node.connect() as c:
        c.execute("create table cmc (id int primary key, v text)")
        c.execute("comment on table cmc is 'kept'")
        with c.transaction():
            c.execute("comment on column cmc.v is 'also kept'")
    for _ in range(2):
        node.kill()
        node.start()
        with node.connect() as c:
            assert descriptions(c, "cmc") == [(0, 'kept'), (2, 'also kept')]
            c.execute("checkpoint")
