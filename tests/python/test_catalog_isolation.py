"""The catalogs show another session's uncommitted DDL as it was before: a column
added, an index created or dropped in an open transaction block appears to others only
when the block commits (and never if it rolls back), while the block itself sees its
changes at once — as PostgreSQL's MVCC catalogs do."""

from __future__ import annotations

COLUMNS = ("select column_name from information_schema.columns "
           "where table_name = 'ci_t' order by ordinal_position")
INDEXES = ("select c.relname from pg_index i join pg_class c on c.oid = i.indexrelid "
           "where i.indrelid = 'ci_t'::regclass order by 1")
ATTRIBUTES = ("select attname from pg_attribute where attrelid = 'ci_t'::regclass "
              "and attnum > 0 and not attisdropped order by attnum")


def test_uncommitted_ddl_is_not_seen_by_others(server):
    with server.connect() as a, server.connect() as b:
        a.execute("drop table if exists ci_t")
        a.execute("create table ci_t (id int primary key, v int)")
        a.execute("create index ci_t_old on ci_t (v)")
        try:
            a.execute("begin")
            a.execute("alter table ci_t add column w text")
            a.execute("create index ci_t_v on ci_t (v, id)")
            a.execute("drop index ci_t_old")
            # The block sees its own changes...
            assert a.execute(COLUMNS).fetchall() == [("id",), ("v",), ("w",)]
            assert a.execute(INDEXES).fetchall() == [("ci_t_pkey",), ("ci_t_v",)]
            # ...others the committed definition.
            assert b.execute(COLUMNS).fetchall() == [("id",), ("v",)]
            assert b.execute(ATTRIBUTES).fetchall() == [("id",), ("v",)]
            assert b.execute(INDEXES).fetchall() == [("ci_t_old",), ("ci_t_pkey",)]
            a.execute("rollback")
            assert b.execute(COLUMNS).fetchall() == [("id",), ("v",)]
            a.execute("begin")
            a.execute("alter table ci_t add column w text")
            a.execute("commit")
            assert b.execute(COLUMNS).fetchall() == [("id",), ("v",), ("w",)]
            assert b.execute(ATTRIBUTES).fetchall() == [("id",), ("v",), ("w",)]
        finally:
            if a.info.transaction_status != 0:
                a.execute("rollback")
            a.execute("drop table if exists ci_t")
