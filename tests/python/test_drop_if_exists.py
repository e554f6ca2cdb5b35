"""DROP ... IF EXISTS of what is not there: the command's tag, and PostgreSQL's NOTICE
that it was skipped."""

from __future__ import annotations

import pytest

CASES = [
    ("drop table if exists no_such_t", "DROP TABLE", ['table "no_such_t" does not exist, skipping']),
    ("drop table if exists no_such_t, no_such_u", "DROP TABLE",
     ['table "no_such_t" does not exist, skipping', 'table "no_such_u" does not exist, skipping']),
    ("drop view if exists no_such_v", "DROP VIEW", ['view "no_such_v" does not exist, skipping']),
    ("drop index if exists no_such_i", "DROP INDEX", ['index "no_such_i" does not exist, skipping']),
    ("drop sequence if exists no_such_s", "DROP SEQUENCE",
     ['sequence "no_such_s" does not exist, skipping']),
]


@pytest.mark.parametrize("sql,tag,notices", CASES)
def test_drop_if_exists_notices(server, sql, tag, notices):
    with server.connect() as c:
        got: list[tuple[str, str]] = []
        c.add_notice_handler(lambda d: got.append((d.severity, d.message_primary)))
        cur = c.execute(sql)
        assert cur.statusmessage == tag
        assert got == [("NOTICE", n) for n in notices]
