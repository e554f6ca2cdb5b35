"""Roles, passwords and pg_hba.conf: who gets in, and the SQLSTATE of who does not.

The role statements run against PostgreSQL 15 too (STEADYDB_TEST_EXTERNAL); the
authentication tests start servers of their own, each with the pg_hba.conf it needs.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import struct
import subprocess
import time
import uuid
from pathlib import Path

import psycopg
import pytest

from conftest import Server, _resolve_bin, free_port

SUPERUSER_PASSWORD = "Sup3r-secret-pw"


def _name(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


@pytest.fixture
def roles(db):
    """Role names to use; each is dropped afterwards."""
    made: list[str] = []

    def make(prefix: str = "r") -> str:
        made.append(_name(prefix))
        return made[-1]

    yield make
    with db.connect() as c:
        for name in made:
            c.execute(f'drop role if exists "{name}"')


def _env_without_pg() -> dict:
    """This process's environment without its PG* variables (a client run by a test
    gets only the connection settings the test gives it)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PG")}


def _state(conn, sql: str):
    try:
        conn.execute(sql)
    except psycopg.Error as e:
        return e.sqlstate, e.diag.message_primary
    return None


# ------------------------------------------------------------ role statements


def test_create_alter_and_drop_roles(db, roles):
    c = db.connect()
    a, b = roles("alice"), roles("bob")
    c.execute(f"create role {a} login createdb connection limit 3 password 'pw1' valid until '2100-01-01'")
    c.execute(f"create user {b}")
    got = c.execute(
        "select rolname, rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolcanlogin, "
        "rolreplication, rolconnlimit, rolpassword, rolvaliduntil::text, rolbypassrls "
        f"from pg_roles where rolname in ('{a}', '{b}') order by rolname"
    ).fetchall()
    assert got == [
        (a, False, True, False, True, True, False, 3, "********", "2100-01-01 00:00:00+00", False),
        (b, False, True, False, False, True, False, -1, "********", None, False),
    ]
    c.execute(f"alter role {a} nologin connection limit -1 nocreatedb replication")
    c.execute(f"alter user {b} with nologin")
    got = c.execute(
        "select rolname, rolcanlogin, rolcreatedb, rolreplication, rolconnlimit "
        f"from pg_roles where rolname in ('{a}', '{b}') order by rolname"
    ).fetchall()
    assert got == [(a, False, False, True, -1), (b, False, False, False, -1)]
    assert c.execute(
        f"select usename, usecreatedb from pg_user where usename = '{a}'"
    ).fetchall() == []
    c.execute(f"drop role {a}, {b}")
    assert c.execute(
        f"select count(*) from pg_roles where rolname in ('{a}', '{b}')"
    ).fetchone() == (0,)


def test_passwords_are_stored_as_scram_verifiers(db, roles):
    c = db.connect()
    a, m = roles("alice"), roles("mdfive")
    c.execute(f"create role {a} password 'clear text'")
    (stored,) = c.execute(f"select rolpassword from pg_authid where rolname = '{a}'").fetchone()
    assert stored.startswith("SCRAM-SHA-256$4096:") and "clear text" not in stored
    c.execute("set password_encryption = 'md5'")
    c.execute(f"create role {m} password 'pw'")
    import hashlib
    (stored,) = c.execute(f"select rolpassword from pg_authid where rolname = '{m}'").fetchone()
    assert stored == "md5" + hashlib.md5(f"pw{m}".encode()).hexdigest()
    c.execute("reset password_encryption")
    # A verifier given is stored as given (what psql's \password sends).
    verifier = "SCRAM-SHA-256$4096:c2FsdHNhbHRzYWx0c2FsdA==$" + "A" * 43 + "=:" + "B" * 43 + "="
    c.execute(f"alter role {a} password '{verifier}'")
    assert c.execute(f"select rolpassword from pg_authid where rolname = '{a}'").fetchone() == (verifier,)
    c.execute(f"alter role {a} password null")
    assert c.execute(f"select rolpassword from pg_authid where rolname = '{a}'").fetchone() == (None,)


@pytest.mark.parametrize("sql, state, message", [
    ("create role {a}", "42710", 'role "{a}" already exists'),
    ("drop role {n}", "42704", 'role "{n}" does not exist'),
    ("alter role {n} login", "42704", 'role "{n}" does not exist'),
    ("create role pg_{n}", "42939", 'role name "pg_{n}" is reserved'),
    ("create role {n} connection limit -2", "22023", "invalid connection limit: -2"),
    ("alter role {a} login nologin", "42601", "conflicting or redundant options"),
    ("drop role postgres", "55006", "current user cannot be dropped"),
])
def test_role_statement_errors(db, roles, sql, state, message):
    c = db.connect()
    a, n = roles("a"), roles("n")
    c.execute(f"create role {a}")
    assert _state(c, sql.format(a=a, n=n)) == (state, message.format(a=a, n=n))


def test_drop_role_if_exists_notices(db, roles):
    c = db.connect()
    n = roles("n")
    notices = []
    c.add_notice_handler(lambda d: notices.append(d.message_primary))
    c.execute(f"drop role if exists {n}")
    assert notices == [f'role "{n}" does not exist, skipping']


def _members(c, names) -> list:
    """(member, role, admin_option) of pg_auth_members among `names`."""
    return c.execute(
        "select m.rolname, r.rolname, a.admin_option from pg_auth_members a "
        "join pg_roles m on m.oid = a.member join pg_roles r on r.oid = a.roleid "
        "where m.rolname = any(%s) order by 1, 2", (list(names),)).fetchall()


def test_role_membership(db, roles):
    """GRANT and REVOKE of roles, CREATE ROLE's IN ROLE / ROLE / ADMIN, and PostgreSQL's
    notices and errors for them (the same run against PostgreSQL 15)."""
    c = db.connect()
    notices = []
    c.add_notice_handler(lambda d: notices.append((d.severity_nonlocalized, d.message_primary)))
    staff, sales, alice, bob, boss = (roles(n) for n in ("staff", "sales", "alice", "bob", "boss"))
    c.execute(f"create role {staff}")
    c.execute(f"create role {sales} in role {staff}")
    c.execute(f"create role {alice} login in role {sales}")
    c.execute(f"create role {bob} login")
    c.execute(f"create role {boss} role {bob} admin {alice}")
    every = [staff, sales, alice, bob, boss]
    assert _members(c, every) == sorted([
        (sales, staff, False), (alice, sales, False), (bob, boss, False), (alice, boss, True)])
    assert c.execute(f"grant {staff} to {bob}").statusmessage == "GRANT ROLE"
    c.execute(f"grant {staff} to {bob}")
    assert notices[-1] == ("NOTICE", f'role "{bob}" is already a member of role "{staff}"')
    assert c.execute(f"revoke {sales} from {bob}").statusmessage == "REVOKE ROLE"
    assert notices[-1] == ("WARNING", f'role "{bob}" is not a member of role "{sales}"')
    c.execute(f"grant {staff} to {bob} with admin option")
    c.execute(f"revoke admin option for {staff} from {bob}")
    assert (bob, staff, False) in _members(c, [bob])
    for sql, expected in [
        (f"grant {staff} to {staff}", ("0LP01", f'role "{staff}" is a member of role "{staff}"')),
        (f"grant {sales} to {staff}", ("0LP01", f'role "{sales}" is a member of role "{staff}"')),
        (f"grant {staff} to nosuch_role", ("42704", 'role "nosuch_role" does not exist')),
        (f"grant nosuch_role to {bob}", ("42704", 'role "nosuch_role" does not exist')),
    ]:
        assert _state(c, sql) == expected, sql
    # A dropped role leaves no membership behind.
    c.execute(f"drop role {sales}")
    assert _members(c, every) == sorted([(bob, boss, False), (alice, boss, True), (bob, staff, False)])


def test_privileges_come_through_inherited_roles_and_set_role(db, roles):
    """A member has its groups' privileges (unless NOINHERIT); SET ROLE and SET SESSION
    AUTHORIZATION change current_user, transactionally, as in PostgreSQL 15."""
    c = db.connect()
    t = roles("t")
    group, alice, other = roles("grp"), roles("alice"), roles("other")
    c.execute(f"create table {t} (k int primary key)")
    try:
        c.execute(f"insert into {t} values (1)")
        c.execute(f"create role {group}")
        c.execute(f"create role {alice} login in role {group}")
        c.execute(f"create role {other} login")
        c.execute(f"grant select on {t} to {group}")
        c.execute(f"set session authorization {alice}")
        assert c.execute("select current_user, session_user").fetchone() == (alice, alice)
        assert c.execute("show is_superuser").fetchone() == ("off",)
        assert c.execute(f"select count(*) from {t}").fetchone() == (1,)
        denied = ("42501", f"permission denied for table {t}")
        assert _state(c, f"insert into {t} values (2)") == denied
        assert _state(c, f"set role {other}") == ("42501", f'permission denied to set role "{other}"')
        assert _state(c, "set role nosuch_role") == ("22023", 'role "nosuch_role" does not exist')
        c.execute(f"set role {group}")
        assert c.execute("select current_user, session_user").fetchone() == (group, alice)
        assert c.execute("show role").fetchone() == (group,)
        c.execute("reset role")
        c.execute("begin")
        c.execute(f"set local role {group}")
        assert c.execute("select current_user").fetchone() == (group,)
        c.execute("commit")
        c.execute("begin")
        c.execute(f"set role {group}")
        c.execute("rollback")
        assert c.execute("select current_user, current_role").fetchone() == (alice, alice)
        c.execute("reset session authorization")
        assert c.execute("select current_user, session_user").fetchone() == ("postgres", "postgres")
        # NOINHERIT: the group's privileges only after SET ROLE to it.
        c.execute(f"alter role {alice} noinherit")
        c.execute(f"set session authorization {alice}")
        assert _state(c, f"select count(*) from {t}") == denied
        c.execute(f"set role {group}")
        assert c.execute(f"select count(*) from {t}").fetchone() == (1,)
        c.execute("reset all")
        assert c.execute("select current_user").fetchone() == (group,)
        c.execute("set session authorization default")
        assert c.execute("select current_user, session_user").fetchone() == ("postgres", "postgres")
        assert c.execute("show role").fetchone() == ("none",)
    finally:
        c.execute("reset session authorization")
        c.execute(f"drop table {t}")


def test_privilege_inquiry_functions(db, roles):
    """has_table_privilege, has_sequence_privilege, has_schema_privilege and
    has_database_privilege, of the current role and of a named one, as PostgreSQL 15
    answers them."""
    c = db.connect()
    t, s, alice = roles("t"), roles("s"), roles("alice")
    c.execute(f"create table {t} (k int primary key)")
    c.execute(f"create sequence {s}")

    def ask(sql):
        return c.execute(sql).fetchone()[0]

    try:
        c.execute(f"create role {alice} login")
        c.execute(f"grant select on {t} to {alice}")
        c.execute(f"grant usage on sequence {s} to {alice}")
        assert ask(f"select has_table_privilege('{t}', 'insert')") is True
        assert ask(f"select has_table_privilege('{alice}', '{t}', 'select')") is True
        assert ask(f"select has_table_privilege('{alice}', '{t}', 'insert')") is False
        assert ask(f"select has_table_privilege('{alice}', '{t}', 'insert, select')") is True
        assert ask(f"select has_table_privilege('{alice}', '{t}'::regclass, 'SELECT')") is True
        assert ask(f"select has_sequence_privilege('{alice}', '{s}', 'usage')") is True
        assert ask(f"select has_sequence_privilege('{alice}', '{s}', 'update')") is False
        assert ask(f"select has_schema_privilege('{alice}', 'public', 'usage')") is True
        assert ask(f"select has_schema_privilege('{alice}', 'public', 'create')") is False
        assert ask(f"select has_database_privilege('{alice}', current_database(), 'connect')") is True
        assert ask(f"select has_database_privilege('{alice}', current_database(), 'create')") is False
        c.execute(f"set role {alice}")
        assert ask(f"select has_table_privilege('{t}', 'select')") is True
        assert ask(f"select has_table_privilege('{t}', 'delete')") is False
        c.execute("reset role")
        for sql, expected in [
            (f"select has_table_privilege('{t}', 'fly')", ("22023", 'unrecognized privilege type: "fly"')),
            ("select has_table_privilege('nosuch_table', 'select')",
             ("42P01", 'relation "nosuch_table" does not exist')),
            (f"select has_table_privilege('nosuch_role', '{t}', 'select')",
             ("42704", 'role "nosuch_role" does not exist')),
            (f"select has_sequence_privilege('{t}', 'usage')", ("42809", f'"{t}" is not a sequence')),
            ("select has_schema_privilege('nosuch', 'usage')", ("3F000", 'schema "nosuch" does not exist')),
        ]:
            assert _state(c, sql) == expected, sql
    finally:
        c.execute("reset role")
        c.execute(f"drop table {t}")
        c.execute(f"drop sequence {s}")


def test_every_statement_kind_checks_privileges(db, roles):
    """A role with SELECT on one table and nothing else, statement by statement: what
    PostgreSQL 15 refuses with 42501 (or warns of) is refused (or warned of) alike."""
    c = db.connect()
    t, child, seq, app = roles("pt"), roles("pc"), roles("ps"), roles("app")
    c.execute(f"create role {app}")
    c.execute(f"create table {t} (id serial primary key, v text)")
    c.execute(f"create table {child} (id int primary key, p int references {t}(id))")
    c.execute(f"create sequence {seq}")
    c.execute(f"insert into {t} (v) values ('a')")
    c.execute(f"grant select on {t} to {app}")
    warnings = []
    c.add_notice_handler(lambda d: warnings.append(d.message_primary))
    denied_t = ("42501", f"permission denied for table {t}")
    denied_c = ("42501", f"permission denied for table {child}")
    denied_s = ("42501", f"permission denied for sequence {seq}")
    try:
        c.execute(f"set session authorization {app}")
        for sql, expected in [
            (f"select * from {t}", None),
            (f"insert into {t} (v) values ('b')", denied_t),
            (f"update {t} set v = 'x'", denied_t),
            (f"delete from {t}", denied_t),
            (f"truncate {t}", denied_t),
            (f"select * from {t} for update", denied_t),
            (f"select * from {t} for share", denied_t),
            (f"select 1 from {t} where id in (select p from {child})", denied_c),
            (f"select (select count(*) from {child})", denied_c),
            (f"select * from {t} where exists (select 1 from {child} where p = {t}.id)", denied_c),
            (f"explain select * from {child}", denied_c),
            (f"select nextval('{seq}')", denied_s),
            (f"select setval('{seq}', 5)", denied_s),
            (f"select currval('{seq}')", denied_s),
            (f"select * from {seq}", denied_s),
            ("select pg_reload_conf()", ("42501", "permission denied for function pg_reload_conf")),
            ("checkpoint", ("42501", "must be superuser or have privileges of pg_checkpoint to do CHECKPOINT")),
            (f"create index on {t} (v)", ("42501", f"must be owner of table {t}")),
            (f"drop table {t}", ("42501", f"must be owner of table {t}")),
            (f"grant select on {child} to public", denied_c),
        ]:
            assert _state(c, sql) == expected, sql
        for mode, expected in [("access share", None), ("row exclusive", denied_t),
                               ("row share", denied_t), ("access exclusive", denied_t)]:
            c.execute("begin")
            assert _state(c, f"lock table {t} in {mode} mode") == expected, mode
            c.execute("rollback")
        # Other roles' sessions (this one's too: it authenticated as postgres) are hidden.
        with db.connect() as other:
            other_pid = other.execute("select pg_backend_pid()").fetchone()[0]
            assert c.execute("select usename, state, query from pg_stat_activity where pid = %s",
                             (other_pid,)).fetchone() == ("postgres", None, "<insufficient privilege>")
        # A privilege held without its grant option grants nothing, with a warning.
        c.execute(f"grant select on {t} to public")
        c.execute(f"vacuum {t}")
        c.execute(f"analyze {t}")
        assert warnings == [f'no privileges were granted for "{t}"',
                            f'skipping "{t}" --- only table or database owner can vacuum it',
                            f'skipping "{t}" --- only table or database owner can analyze it']
        c.execute("reset session authorization")
        c.execute(f"grant update on {t} to {app}")
        c.execute(f"grant usage on sequence {seq} to {app}")
        c.execute(f"set session authorization {app}")
        assert _state(c, f"select * from {t} for update") is None
        c.execute("begin")
        assert _state(c, f"lock table {t} in row exclusive mode") is None
        c.execute("rollback")
        assert c.execute(f"select nextval('{seq}'), currval('{seq}'), lastval()").fetchone() == (1, 1, 1)
        assert _state(c, f"select setval('{seq}', 5)") == denied_s
    finally:
        c.execute("reset session authorization")
        c.execute(f"drop table {child}, {t}")
        c.execute(f"drop sequence {seq}")


def test_currval_and_lastval(db, roles):
    c = db.connect()
    seq = roles("s")
    c.execute(f"create sequence {seq}")
    try:
        not_yet = "55000"
        assert _state(c, f"select currval('{seq}')") == (
            not_yet, f'currval of sequence "{seq}" is not yet defined in this session')
        assert _state(c, "select lastval()") == (not_yet, "lastval is not yet defined in this session")
        assert c.execute(f"select nextval('{seq}'), nextval('{seq}')").fetchone() == (1, 2)
        assert c.execute(f"select currval('{seq}'), lastval()").fetchone() == (2, 2)
        c.execute(f"select setval('{seq}', 42)")
        assert c.execute(f"select currval('{seq}'), lastval()").fetchone() == (42, 42)
        c.execute(f"select setval('{seq}', 50, false)")
        assert c.execute(f"select currval('{seq}')").fetchone() == (42,)
        # Another session has its own.
        with db.connect() as other:
            assert _state(other, f"select currval('{seq}')")[0] == not_yet
    finally:
        c.execute(f"drop sequence {seq}")


def test_alter_role_set_gives_sessions_their_settings(db, roles):
    """ALTER ROLE ... SET / RESET: kept as given in rolconfig and pg_db_role_setting,
    applied when the role's sessions start (before the client's own), checked as SET
    checks them (the same run against PostgreSQL 15)."""
    c = db.connect()
    r = roles("rs")
    c.execute(f"create role {r} login")
    c.execute(f"alter role {r} set statement_timeout = '5s'")
    c.execute(f"alter role {r} set work_mem = 2048")
    c.execute(f"alter role {r} set statement_timeout to '7s'")
    assert c.execute(f"select rolconfig from pg_roles where rolname = '{r}'").fetchone() == (
        ["statement_timeout=7s", "work_mem=2048"],)
    assert c.execute("select setdatabase, setconfig from pg_db_role_setting s join pg_roles r "
                     f"on r.oid = s.setrole where rolname = '{r}'").fetchone() == (
        0, ["statement_timeout=7s", "work_mem=2048"])
    with db.connect(user=r) as s:
        assert s.execute("show statement_timeout").fetchone() == ("7s",)
        assert s.execute("show work_mem").fetchone() == ("2MB",)
    with db.connect(user=r, options="-c work_mem=4MB") as s:
        assert s.execute("show work_mem").fetchone() == ("4MB",)
    for sql, expected in [
        (f"alter role {r} set nosuch_setting = 1", ("42704", 'unrecognized configuration parameter "nosuch_setting"')),
        (f"alter role {r} set shared_buffers = '1GB'",
         ("55P02", 'parameter "shared_buffers" cannot be changed without restarting the server')),
        (f"alter role {r} set work_mem = 'lots'", ("22023", 'invalid value for parameter "work_mem": "lots"')),
        ("alter role nosuch_role set work_mem = 64", ("42704", 'role "nosuch_role" does not exist')),
    ]:
        assert _state(c, sql) == expected, sql
    c.execute("set work_mem = '3MB'")
    c.execute(f"alter role {r} set work_mem from current")
    c.execute(f"alter role {r} reset statement_timeout")
    assert c.execute(f"select rolconfig from pg_roles where rolname = '{r}'").fetchone() == (
        ["work_mem=3MB"],)
    c.execute(f"alter role {r} reset all")
    assert c.execute(f"select rolconfig from pg_roles where rolname = '{r}'").fetchone() == (None,)
    with db.connect(user=r) as s:
        assert s.execute("show statement_timeout").fetchone() == ("0",)


def test_hba_group_and_samerole_lines(auth_server):
    """`+group` matches members of the group, directly or through another group;
    `samerole` a member of the role named like the database."""
    srv = auth_server(
        "host all postgres 127.0.0.1/32 scram-sha-256\n"
        "host all +staff 127.0.0.1/32 scram-sha-256\n"
        "host samerole all 127.0.0.1/32 md5\n"
        "host all all 127.0.0.1/32 reject\n"
    )
    with srv.connect() as c:
        c.execute("create role staff")
        c.execute("create role sales in role staff")
        c.execute("create role alice login password 'a' in role sales")
        c.execute("create role bob login password 'b'")
    with srv.connect(user="alice", password="a") as a:
        assert a.execute("select current_user").fetchone() == ("alice",)
        # Only a client that authenticated as a superuser may change its session user.
        assert _state(a, "set session authorization postgres") == (
            "42501", 'permission denied to set session authorization "postgres"')
        a.execute("set session authorization alice")
    state, message = srv.refused(user="bob", password="b")
    assert state == "28000" and 'pg_hba.conf rejects connection for host "127.0.0.1", user "bob"' in message
    with srv.connect() as c:
        c.execute("grant postgres to bob")
    with srv.connect(user="bob", password="b") as b:
        assert b.execute("select current_user").fetchone() == ("bob",)
    with srv.connect() as c:
        c.execute("revoke postgres from bob")
        c.execute("grant staff to bob")
    with srv.connect(user="bob", password="b") as b:
        assert b.execute("select current_user").fetchone() == ("bob",)
    with srv.connect() as c:
        c.execute("drop role staff")
    for user, password in (("alice", "a"), ("bob", "b")):
        assert srv.refused(user=user, password=password)[0] == "28000"


def test_pg_authid_is_for_superusers_only(auth_server):
    srv = auth_server("host all all 127.0.0.1/32 scram-sha-256\n")
    with srv.connect() as c:
        c.execute("create role plain login password 'pw'")
    with srv.connect(user="plain", password="pw") as p:
        assert _state(p, "select rolpassword from pg_authid") == (
            "42501", "permission denied for table pg_authid")
        assert p.execute("select rolname from pg_roles where rolname = 'plain'").fetchone() == ("plain",)
        assert _state(p, "create role x") == ("42501", "permission denied to create role")
        assert _state(p, "alter role plain createdb") == ("42501", "permission denied")
        assert _state(p, "alter role postgres password 'x'") == (
            "42501", "must be superuser to alter superuser roles or change superuser attribute")
        p.execute("alter role plain password 'pw2'")
    with srv.connect(user="plain", password="pw2") as p:
        assert p.execute("select current_user").fetchone() == ("plain",)
        assert p.execute("show is_superuser").fetchone() == ("off",)


def test_only_superusers_change_the_schema(auth_server):
    """Every relation belongs to a superuser, and PostgreSQL 15 lets no other role
    create in schema public: DDL by another role is 42501 with PostgreSQL's messages."""
    srv = auth_server("host all all 127.0.0.1/32 scram-sha-256\n")
    with srv.connect() as c:
        c.execute("create role plain login password 'pw'")
        c.execute("create table owned (k int primary key, v text)")
        c.execute("create index owned_v on owned (v)")
        c.execute("create sequence owned_seq")
        c.execute("create view owned_view as select k from owned")
    with srv.connect(user="plain", password="pw") as p:
        for sql, message in [
            ("create table mine (k int)", "permission denied for schema public"),
            ("create sequence mine_seq", "permission denied for schema public"),
            ("create view mine_view as select 1", "permission denied for schema public"),
            ("drop table owned", "must be owner of table owned"),
            ("alter table owned add column w int", "must be owner of table owned"),
            ("create index on owned (k)", "must be owner of table owned"),
            ("drop index owned_v", "must be owner of index owned_v"),
            ("truncate owned", "permission denied for table owned"),
            ("drop sequence owned_seq", "must be owner of sequence owned_seq"),
            ("drop view owned_view", "must be owner of view owned_view"),
            ("checkpoint", "must be superuser or have privileges of pg_checkpoint to do CHECKPOINT"),
        ]:
            assert _state(p, sql) == ("42501", message), sql
    with srv.connect() as c:
        assert c.execute("select count(*) from owned").fetchone() == (0,)
        c.execute("drop view owned_view")
        c.execute("drop table owned")


def test_grant_and_revoke(auth_server):
    """A role may read and write only what was granted to it or to PUBLIC; the messages
    and the relacl/datacl texts are PostgreSQL's (checked against PostgreSQL 15)."""
    srv = auth_server("host all all 127.0.0.1/32 scram-sha-256\n")
    c = srv.connect()
    c.execute("create role app login password 'a'")
    c.execute("create table gt (k int primary key, v text)")
    c.execute("insert into gt values (1, 'one')")
    c.execute("create view gtv as select k from gt")
    c.execute("create sequence gs")

    def as_app(sql):
        with srv.connect(user="app", password="a") as a:
            return _state(a, sql)

    denied = ("42501", "permission denied for table gt")
    for sql in ["select * from gt", "insert into gt values (2, 'two')", "update gt set v = 'x'",
                "delete from gt", "truncate gt", "copy gt to stdout",
                "insert into gt values (3, 'x') on conflict do nothing"]:
        assert as_app(sql) == denied, sql
    assert as_app("select * from gtv") == ("42501", "permission denied for view gtv")
    assert as_app("select * from gs") == ("42501", "permission denied for sequence gs")

    c.execute("grant select on gt, gtv to app")
    c.execute("grant usage on sequence gs to app")
    assert as_app("select * from gt") is None
    assert as_app("select * from gtv") is None
    assert as_app("insert into gt values (2, 'two')") == denied
    c.execute("grant insert, update on table gt to app")
    assert as_app("insert into gt values (2, 'two')") is None
    assert as_app("update gt set v = v || '!' where k = 2") is None
    assert as_app("delete from gt where k = 2") == denied
    assert c.execute("select relacl from pg_class where relname = 'gt'").fetchone() == (
        ["postgres=arwdDxt/postgres", "app=arw/postgres"],)

    state, message = _state(c, "drop role app")
    assert (state, message) == ("2BP01", 'role "app" cannot be dropped because some objects depend on it')
    with pytest.raises(psycopg.Error) as e:
        c.execute("drop role app")
    assert e.value.diag.message_detail == (
        "privileges for table gt\nprivileges for view gtv\nprivileges for sequence gs")

    c.execute("grant all on all tables in schema public to app")
    assert as_app("delete from gt where k = 2") is None
    c.execute("revoke all on gt from app")
    assert as_app("select * from gt") == denied
    c.execute("grant select on gt to public")
    assert as_app("select count(*) from gt") is None

    for sql, expected in [
        ("grant usage on gt to app", ("0LP01", "invalid privilege type USAGE for table")),
        ("grant select on nosuch to app", ("42P01", 'relation "nosuch" does not exist')),
        ("grant select on gt to nobody", ("42704", 'role "nobody" does not exist')),
        ("grant select on sequence gt to app", ("42809", '"gt" is not a sequence')),
    ]:
        assert _state(c, sql) == expected, sql

    c.execute("revoke connect on database postgres from public")
    assert c.execute("select datacl from pg_database").fetchone() == (["=T/postgres", "postgres=CTc/postgres"],)
    state, message = srv.refused(user="app", password="a")
    assert state == "42501" and 'permission denied for database "postgres"' in message
    c.execute("grant connect on database postgres to app")
    assert as_app("select 1") is None
    c.execute("revoke all on all tables in schema public from app, public")
    c.execute("revoke all on sequence gs from app")
    c.execute("revoke connect on database postgres from app")
    c.execute("grant connect on database postgres to public")
    c.execute("drop role app")
    c.close()


# ------------------------------------------------------------ authentication


class AuthServer:
    def __init__(self, tmp_path: Path, hba: str, settings: list[str]):
        self.datadir = tmp_path / "data"
        self.datadir.mkdir(parents=True)
        (self.datadir / "pg_hba.conf").write_text(hba)
        pwfile = tmp_path / "pwfile"
        pwfile.write_text(SUPERUSER_PASSWORD + "\n")
        self.port = free_port()
        self.log_path = tmp_path / "server.log"
        self.sockdir = tmp_path / "sock"
        self.sockdir.mkdir()
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [str(_resolve_bin()), "server", "-D", str(self.datadir), "-p", str(self.port),
                 "--pwfile", str(pwfile), "-c", f"unix_socket_directories={self.sockdir}",
                 *[a for s in settings for a in ("-c", s)]],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            )
        deadline = time.monotonic() + 60
        while True:
            assert self.proc.poll() is None, self.log()
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, self.log()
                time.sleep(0.1)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def conninfo(self, user="postgres", password=SUPERUSER_PASSWORD, host="127.0.0.1", **kw) -> str:
        parts = {"host": host, "port": self.port, "user": user, "dbname": "postgres",
                 "connect_timeout": 10, "sslmode": "disable", **kw}
        if password is not None:
            parts["password"] = password
        return " ".join(f"{k}='{v}'" for k, v in parts.items())

    def connect(self, **kw) -> psycopg.Connection:
        return psycopg.connect(self.conninfo(**kw), autocommit=True)

    def refused(self, user="postgres", password=SUPERUSER_PASSWORD, host="127.0.0.1",
                sslmode="disable", replication=None) -> tuple[str, str]:
        """The SQLSTATE and message of a refused connection (asyncpg: libpq keeps a
        connection failure's SQLSTATE from psycopg); psycopg is refused too."""
        import asyncio

        import asyncpg

        with pytest.raises(psycopg.OperationalError):
            extra = {"replication": replication} if replication else {}
            self.connect(user=user, password=password, host=host, sslmode=sslmode, **extra).close()

        async def attempt():
            settings = {"replication": replication} if replication else {}
            conn = await asyncpg.connect(host=host, port=self.port, user=user, password=password,
                                         database="postgres", ssl=sslmode, timeout=30,
                                         server_settings=settings)
            await conn.close()

        with pytest.raises(asyncpg.PostgresError) as e:
            asyncio.run(attempt())
        return e.value.sqlstate, str(e.value)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@pytest.fixture
def auth_server(tmp_path, request):
    if os.environ.get("STEADYDB_TEST_EXTERNAL"):
        pytest.skip("starts SteadyDB servers of its own")
    made: list[AuthServer] = []

    def start(hba: str, settings: list[str] = ()) -> AuthServer:
        made.append(AuthServer(tmp_path / f"s{len(made)}", hba, list(settings)))
        return made[-1]

    yield start
    for s in made:
        s.stop()


def test_scram_logins(auth_server):
    srv = auth_server("host all all 127.0.0.1/32 scram-sha-256\n")
    with srv.connect() as c:
        assert c.execute("select current_user, session_user").fetchone() == ("postgres", "postgres")
        c.execute("create role alice login password 'wonderland'")
        c.execute("create role nologin_role password 'x'")
    with srv.connect(user="alice", password="wonderland") as c:
        assert c.execute("select current_user").fetchone() == ("alice",)
    failed = 'password authentication failed for user "{}"'
    for user, password in [("alice", "wrong"), ("nobody", "wonderland"), ("alice", "")]:
        state, message = srv.refused(user=user, password=password)
        assert state == "28P01" and failed.format(user) in message
    state, message = srv.refused(user="nologin_role", password="x")
    assert (state, 'role "nologin_role" is not permitted to log in' in message) == ("28000", True)


def test_a_failed_password_is_slowed(auth_server):
    srv = auth_server("host all all 127.0.0.1/32 scram-sha-256\n")
    times = []
    for _ in range(3):
        start = time.monotonic()
        srv.refused(password="wrong")
        times.append(time.monotonic() - start)
    # 0.2 s, then 0.4 s, then 0.8 s at least (an upper bound would depend on the machine).
    assert times[1] >= 0.4 and times[2] >= 0.8, times
    with srv.connect() as c:
        assert c.execute("select 1").fetchone() == (1,)


def test_md5_method(auth_server):
    srv = auth_server("host all all 127.0.0.1/32 md5\n")
    with srv.connect() as c:
        c.execute("create role scrammed login password 'one'")
        c.execute("set password_encryption = 'md5'")
        c.execute("create role hashed login password 'two'")
    # A SCRAM verifier on an md5 line: SCRAM is used, as PostgreSQL does.
    with srv.connect(user="scrammed", password="one") as c:
        assert c.execute("select current_user").fetchone() == ("scrammed",)
    with srv.connect(user="hashed", password="two") as c:
        assert c.execute("select current_user").fetchone() == ("hashed",)
    assert srv.refused(user="hashed", password="three")[0] == "28P01"


def test_md5_verifier_cannot_do_scram(auth_server):
    srv = auth_server("host all all 127.0.0.1/32 scram-sha-256\n")
    with srv.connect() as c:
        c.execute("set password_encryption = 'md5'")
        c.execute("create role hashed login password 'two'")
    assert srv.refused(user="hashed", password="two")[0] == "28P01"
    assert "does not have a valid SCRAM secret" in srv.log()


def test_clear_text_password_only_on_encrypted_or_local_connections(auth_server):
    srv = auth_server("local all all password\nhost all all 127.0.0.1/32 password\n")
    state, message = srv.refused()
    assert state == "28000" and "only allowed on encrypted connections" in message
    with srv.connect(host=str(srv.sockdir)) as c:
        assert c.execute("select 1").fetchone() == (1,)
    assert srv.refused(host=str(srv.sockdir), password="nope")[0] == "28P01"


def test_reject_and_no_matching_line(auth_server):
    srv = auth_server(
        "host all postgres 127.0.0.1/32 scram-sha-256\n"
        "host all blocked 127.0.0.1/32 reject\n"
        "host all all 10.0.0.0/8 trust\n"
    )
    with srv.connect() as c:
        c.execute("create role blocked login password 'b'")
        c.execute("create role stray login password 's'")
    state, message = srv.refused(user="blocked", password="b")
    assert state == "28000"
    assert ('pg_hba.conf rejects connection for host "127.0.0.1", user "blocked", '
            'database "postgres", no encryption') in message
    state, message = srv.refused(user="stray", password="s")
    assert state == "28000"
    assert ('no pg_hba.conf entry for host "127.0.0.1", user "stray", database "postgres", '
            'no encryption') in message


def test_trust_still_needs_a_role(auth_server):
    srv = auth_server("host all all 127.0.0.1/32 trust\n")
    state, message = srv.refused(user="ghost", password=None)
    assert state == "28000" and 'role "ghost" does not exist' in message


def test_peer_for_local_connections(auth_server):
    import pwd
    me = pwd.getpwuid(os.getuid()).pw_name
    srv = auth_server(f"local all all peer\nhost all all 127.0.0.1/32 scram-sha-256\n")
    with srv.connect() as c:
        c.execute(f'create role "{me}" login')
        c.execute("create role someone_else login")
    with srv.connect(user=me, password=None, host=str(srv.sockdir)) as c:
        assert c.execute("select current_user").fetchone() == (me,)
    state, message = srv.refused(user="someone_else", password=None, host=str(srv.sockdir))
    assert state == "28000" and 'Peer authentication failed for user "someone_else"' in message


def test_user_name_maps(auth_server):
    """peer with map=: pg_ident.conf lets the OS user log in as the roles its map names
    (an exact line, and a pattern with \\1); others are refused; a reload applies a new
    file and keeps the maps in force past a bad one."""
    import pwd
    me = pwd.getpwuid(os.getuid()).pw_name
    srv = auth_server("local all all peer map=office\nhost all all 127.0.0.1/32 scram-sha-256\n")
    ident = srv.datadir / "pg_ident.conf"
    ident.write_text(f"# MAPNAME SYSTEM-USERNAME PG-USERNAME\noffice {me} alice\n"
                     f"office \"/^({me})$\" \\1_admin\nother {me} bob\n")
    with srv.connect() as c:
        for role in ("alice", "bob", f"{me}_admin"):
            c.execute(f'create role "{role}" login')
        assert c.execute("select pg_reload_conf()").fetchone() == (True,)
    local = str(srv.sockdir)
    for role in ("alice", f"{me}_admin"):
        with srv.connect(user=role, password=None, host=local) as c:
            assert c.execute("select current_user").fetchone() == (role,)
    state, message = srv.refused(user="bob", password=None, host=local)
    assert state == "28000" and 'Peer authentication failed for user "bob"' in message
    # A bad file is logged; the maps in force stay.
    ident.write_text("office onlytwo\n")
    with srv.connect() as c:
        c.execute("select pg_reload_conf()")
    with srv.connect(user="alice", password=None, host=local) as c:
        assert c.execute("select 1").fetchone() == (1,)
    assert "missing entry at end of line" in srv.log()
    ident.write_text(f"office {me} bob\n")
    with srv.connect() as c:
        c.execute("select pg_reload_conf()")
    with srv.connect(user="bob", password=None, host=local) as c:
        assert c.execute("select current_user").fetchone() == ("bob",)
    assert srv.refused(user="alice", password=None, host=local)[0] == "28000"


def test_connection_limit_and_expiry(auth_server):
    srv = auth_server("host all all 127.0.0.1/32 scram-sha-256\n")
    with srv.connect() as c:
        c.execute("create role limited login password 'l' connection limit 1")
        c.execute("create role expired login password 'e' valid until '2001-01-01'")
    with srv.connect(user="limited", password="l"):
        state, message = srv.refused(user="limited", password="l")
        assert state == "53300" and 'too many connections for role "limited"' in message
    with srv.connect(user="limited", password="l") as c:
        assert c.execute("select 1").fetchone() == (1,)
    assert srv.refused(user="expired", password="e")[0] == "28P01"
    assert "has an expired password" in srv.log()


def test_replication_needs_the_attribute(auth_server):
    srv = auth_server(
        "host all all 127.0.0.1/32 scram-sha-256\n"
        "host replication all 127.0.0.1/32 scram-sha-256\n"
    )
    with srv.connect() as c:
        c.execute("create role plain login password 'p'")
        c.execute("create role replicator login replication password 'r'")
    state, message = srv.refused(user="plain", password="p", replication="true")
    assert state == "42501" and "must be superuser or replication role" in message
    with psycopg.connect(srv.conninfo(user="replicator", password="r", replication="true"),
                         autocommit=True) as c:
        c.pgconn.exec_(b"IDENTIFY_SYSTEM")


def test_reload_applies_a_good_file_and_keeps_the_rules_for_a_bad_one(auth_server):
    srv = auth_server("host all all 127.0.0.1/32 scram-sha-256\n")
    hba = srv.datadir / "pg_hba.conf"
    hba.write_text("host all all 127.0.0.1/32 bogus-method\n")
    with srv.connect() as c:
        assert c.execute("select pg_reload_conf()").fetchone() == (True,)
    time.sleep(0.5)
    assert 'invalid authentication method "bogus-method"' in srv.log()
    with srv.connect() as c:
        c.execute("create role shut_out login password 'x'")
    hba.write_text("host all shut_out 127.0.0.1/32 reject\nhost all all 127.0.0.1/32 scram-sha-256\n")
    srv.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    while True:
        try:
            srv.connect(user="shut_out", password="x").close()
            refused = False
        except psycopg.OperationalError as e:
            refused = "pg_hba.conf rejects connection" in str(e)
        if refused or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert srv.refused(user="shut_out", password="x")[0] == "28000"


def test_authentication_timeout(auth_server):
    srv = auth_server("host all all 127.0.0.1/32 scram-sha-256\n", ["authentication_timeout=1s"])
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
    body = b"user\0postgres\0database\0postgres\0\0"
    s.sendall(struct.pack("!ii", 8 + len(body), 196608) + body)
    start = time.monotonic()
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    assert data[:1] == b"R"  # asked for a password, then closed when none came
    assert time.monotonic() - start >= 0.9


def test_the_password_is_never_stored_or_logged_in_clear(auth_server):
    srv = auth_server("host all all 127.0.0.1/32 scram-sha-256\n")
    secret = "Very-Unusual-Secret-" + uuid.uuid4().hex
    with srv.connect() as c:
        c.execute(f"create role witness login password '{secret}'")
        c.execute(f"alter role witness password '{secret}x'")
        # A failing statement is logged with its text: the password is masked there.
        with pytest.raises(psycopg.Error):
            c.execute(f"create role witness password '{secret}y'")
        c.execute("checkpoint")
    with srv.connect(user="witness", password=secret + "x") as c:
        assert c.execute("select 1").fetchone() == (1,)
    srv.stop()
    assert secret not in srv.log()
    assert "'********'" in srv.log()
    for path in srv.datadir.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    assert SUPERUSER_PASSWORD.encode() not in b"".join(
        p.read_bytes() for p in srv.datadir.rglob("*") if p.is_file())


@pytest.mark.skipif(shutil.which("psql") is None, reason="needs psql")
def test_psql_with_pgpassword(auth_server):
    srv = auth_server("host all all 127.0.0.1/32 scram-sha-256\n")
    env = _env_without_pg()
    args = ["psql", "-h", "127.0.0.1", "-p", str(srv.port), "-U", "postgres", "-d", "postgres",
            "-XAtc", "select current_user"]
    ok = subprocess.run(args, env={**env, "PGPASSWORD": SUPERUSER_PASSWORD},
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and ok.stdout.strip() == "postgres", ok.stderr
    bad = subprocess.run(args, env={**env, "PGPASSWORD": "wrong"},
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0
    assert 'password authentication failed for user "postgres"' in bad.stderr


def test_a_new_data_directory_requires_passwords(tmp_path):
    """Without --auth, pg_hba.conf asks TCP clients for SCRAM passwords and the superuser
    gets a generated one, printed once on standard output and nowhere else."""
    if os.environ.get("STEADYDB_TEST_EXTERNAL"):
        pytest.skip("starts a SteadyDB server of its own")
    datadir, port = tmp_path / "data", free_port()
    out_path, err_path = tmp_path / "out", tmp_path / "err"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen([str(_resolve_bin()), "server", "-D", str(datadir), "-p", str(port),
                                 "-c", f"unix_socket_directories={tmp_path}"],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=err)
    try:
        deadline = time.monotonic() + 60
        while "password of superuser" not in out_path.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, err_path.read_text()
            time.sleep(0.1)
        password = out_path.read_text().split(" is ")[1].split()[0]
        assert "scram-sha-256" in (datadir / "pg_hba.conf").read_text()
        deadline = time.monotonic() + 30
        while True:
            try:
                conn = psycopg.connect(host="127.0.0.1", port=port, user="postgres",
                                       password=password, dbname="postgres", sslmode="disable")
                break
            except psycopg.OperationalError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        with conn:
            assert conn.execute("select 1").fetchone() == (1,)
        with pytest.raises(psycopg.OperationalError) as e:
            psycopg.connect(host="127.0.0.1", port=port, user="postgres", password="x",
                            dbname="postgres", sslmode="disable")
        assert 'password authentication failed for user "postgres"' in str(e.value)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    assert password not in err_path.read_text()
    for path in datadir.rglob("*"):
        if path.is_file():
            assert password.encode() not in path.read_bytes(), path


# ------------------------------------------------------------ TLS


def _make_certificates(where: Path) -> Path:
    """A CA, and a server certificate it signed for localhost and 127.0.0.1 (openssl)."""
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl")
    where.mkdir(parents=True, exist_ok=True)

    def run(*args):
        subprocess.run(["openssl", *args], cwd=where, check=True, capture_output=True)

    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run("req", "-x509", *curve, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
        "-subj", "/CN=SteadyDB test CA")
    run("req", *curve, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost")
    (where / "ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.crt", "-days", "2", "-extfile", "ext")
    return where


def _make_client_certificate(certs: Path, cn: str, v1: bool = False) -> tuple[str, str]:
    """A client certificate for `cn` signed by the CA in `certs`: (cert, key) paths. X.509
    v3 (with an extension), or v1 as PostgreSQL's documentation makes one with OpenSSL 3."""
    def run(*args):
        subprocess.run(["openssl", *args], cwd=certs, check=True, capture_output=True)

    run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", f"{cn}.key", "-out", f"{cn}.csr", "-subj", f"/CN={cn}")
    (certs / "client-ext").write_text("extendedKeyUsage=clientAuth\n")
    extensions = [] if v1 else ["-extfile", "client-ext"]
    run("x509", "-req", "-in", f"{cn}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-set_serial", "4242", "-out", f"{cn}.crt", "-days", "2", *extensions)
    os.chmod(certs / f"{cn}.key", 0o600)
    return str(certs / f"{cn}.crt"), str(certs / f"{cn}.key")


def _refused_with_certificate(srv, user: str, cert: tuple[str, str] | None,
                              password: str | None = None) -> tuple[str, str]:
    """The SQLSTATE and message of a TLS connection refused after the handshake, the
    client sending `cert` (asyncpg, which keeps a refusal's SQLSTATE)."""
    import asyncio
    import ssl

    import asyncpg

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    if cert:
        context.load_cert_chain(*cert)

    async def attempt():
        conn = await asyncpg.connect(host="127.0.0.1", port=srv.port, user=user,
                                     password=password, database="postgres", ssl=context,
                                     timeout=30)
        await conn.close()

    with pytest.raises(asyncpg.PostgresError) as e:
        asyncio.run(attempt())
    return e.value.sqlstate, str(e.value)


@pytest.fixture
def tls_server(auth_server, tmp_path):
    certs = _make_certificates(tmp_path / "certs")

    def start(hba: str, settings: list[str] = ()):
        return auth_server(hba, ["ssl=on", f"ssl_cert_file={certs / 'server.crt'}",
                                 f"ssl_key_file={certs / 'server.key'}", *settings])

    start.certs = certs
    return start


def test_tls_require_and_verify_full(tls_server):
    srv = tls_server("hostssl all all 127.0.0.1/32 scram-sha-256\n")
    with srv.connect(sslmode="require") as c:
        ssl, version, cipher, bits = c.execute(
            "select ssl, version, cipher, bits from pg_stat_ssl where pid = pg_backend_pid()"
        ).fetchone()
        assert ssl and version in ("TLSv1.2", "TLSv1.3") and cipher and bits >= 128
        assert c.pgconn.ssl_in_use
    ca = str(tls_server.certs / "ca.crt")
    for host in ("localhost", "127.0.0.1"):
        with srv.connect(sslmode="verify-full", sslrootcert=ca, host=host) as c:
            assert c.execute("select 1").fetchone() == (1,)
    # A plain connection to a hostssl-only server is refused.
    state, message = srv.refused(sslmode="disable")
    assert state == "28000" and "no encryption" in message and "no pg_hba.conf entry" in message


def test_tls_replies_go_out_in_batches(tls_server):
    """32 pgbench clients over TLS: the replies that end their round trips are encrypted
    by each connection's session and leave together with other connections' (where
    io_uring works); every transaction is acknowledged and stored, with no error."""
    from conftest import find_pg_tool
    from pgbench_util import parse_report

    srv = tls_server("hostssl all all 127.0.0.1/32 scram-sha-256\n")
    with srv.connect(sslmode="require") as c:
        c.execute("create table tls_batch (id serial primary key, client int, n int)")
        before = c.execute("select state, batches, replies from steadydb_stat_reply_batches").fetchone()
    script = srv.datadir.parent / "tls_batch.sql"
    script.write_text("insert into tls_batch (client, n) values (:client_id, 1);\n")
    env = {**_env_without_pg(), "PGSSLMODE": "require", "PGPASSWORD": SUPERUSER_PASSWORD}
    res = subprocess.run(
        [find_pg_tool("pgbench"), "-h", "127.0.0.1", "-p", str(srv.port), "-U", "postgres", "-n",
         "-M", "prepared", "-c", "32", "-j", "2", "-t", "150", "-f", str(script), "postgres"],
        capture_output=True, text=True, timeout=600, env=env)
    assert res.returncode == 0 and not res.stderr.strip(), res.stdout + res.stderr
    processed, failed, _ = parse_report(res.stdout)
    assert (processed, failed) == (32 * 150, 0), res.stdout
    with srv.connect(sslmode="require") as c:
        assert c.execute("select count(*), count(distinct client) from tls_batch").fetchone() == (
            32 * 150, 32)
        state, batches, replies = c.execute(
            "select state, batches, replies from steadydb_stat_reply_batches").fetchone()
    assert state in ("on", "unavailable")
    if state == "on":
        # Every connection here is TLS: batches went out, some with several replies.
        assert batches > before[1], (before, batches, replies)
        assert replies - before[2] > batches - before[1], (before, batches, replies)


def test_scram_channel_binding_over_tls(tls_server):
    """Over TLS the server offers SCRAM-SHA-256-PLUS: libpq's channel_binding=require
    gets in (its proof is bound to the server's certificate); without TLS there is
    nothing to bind to, and libpq refuses to go on."""
    srv = tls_server("hostssl all all 127.0.0.1/32 scram-sha-256\n"
                     "hostnossl all all 127.0.0.1/32 scram-sha-256\n")
    with srv.connect(sslmode="require", channel_binding="require") as c:
        assert c.execute("select ssl from pg_stat_ssl where pid = pg_backend_pid()").fetchone() == (True,)
    with srv.connect(sslmode="require", channel_binding="disable") as c:
        assert c.execute("select 1").fetchone() == (1,)
    with srv.connect(sslmode="disable") as c:
        assert c.execute("select 1").fetchone() == (1,)
    with pytest.raises(psycopg.OperationalError) as e:
        srv.connect(sslmode="disable", channel_binding="require").close()
    assert "channel binding" in str(e.value)
    with pytest.raises(psycopg.OperationalError):
        srv.connect(sslmode="require", channel_binding="require", password="wrong").close()


def test_tls_refuses_a_client_that_trusts_another_ca(tls_server, tmp_path):
    srv = tls_server("hostssl all all 127.0.0.1/32 scram-sha-256\n")
    other = _make_certificates(tmp_path / "other")
    with pytest.raises(psycopg.OperationalError) as e:
        srv.connect(sslmode="verify-full", sslrootcert=str(other / "ca.crt"), host="localhost")
    assert "certificate verify failed" in str(e.value)
    with srv.connect(sslmode="require") as c:
        assert c.execute("select 1").fetchone() == (1,)


def test_client_certificates(tls_server, tmp_path):
    """Method cert and clientcert=verify-ca / verify-full, with ssl_ca_file: who gets in
    with which certificate, and PostgreSQL's refusals (28000)."""
    certs = tls_server.certs
    srv = tls_server(
        "hostssl all postgres 127.0.0.1/32 scram-sha-256\n"
        "hostssl all certuser 127.0.0.1/32 cert\n"
        "hostssl all vca 127.0.0.1/32 scram-sha-256 clientcert=verify-ca\n"
        "hostssl all vfull 127.0.0.1/32 scram-sha-256 clientcert=verify-full\n",
        [f"ssl_ca_file={certs / 'ca.crt'}"])
    with srv.connect(sslmode="require") as c:
        for role in ("certuser", "vca", "vfull"):
            c.execute(f"create role {role} login password 'pw'")
    mine, someone = _make_client_certificate(certs, "certuser"), _make_client_certificate(certs, "someone")
    vfull = _make_client_certificate(certs, "vfull")

    def connect(user, cert, password=None):
        return srv.connect(user=user, password=password, sslmode="require",
                           sslcert=cert[0], sslkey=cert[1])

    # cert: the certificate alone logs in, and pg_stat_ssl shows it.
    with connect("certuser", mine) as c:
        dn, issuer, serial = c.execute(
            "select client_dn, issuer_dn, client_serial from pg_stat_ssl "
            "where pid = pg_backend_pid()").fetchone()
        assert (dn, issuer, serial) == ("/CN=certuser", "/CN=SteadyDB test CA", 4242)
    assert _refused_with_certificate(srv, "certuser", None) == (
        "28000", "connection requires a valid client certificate")
    assert _refused_with_certificate(srv, "certuser", someone) == (
        "28000", 'certificate authentication failed for user "certuser"')
    # verify-ca: any certificate the CA signed, and the password.
    with connect("vca", someone, "pw") as c:
        assert c.execute("select current_user").fetchone() == ("vca",)
    assert _refused_with_certificate(srv, "vca", None, "pw") == (
        "28000", "connection requires a valid client certificate")
    # verify-full: the certificate's CN must be the user; a mismatch fails as the
    # method does (the reason goes to the log), as in PostgreSQL.
    with connect("vfull", vfull, "pw") as c:
        assert c.execute("select 1").fetchone() == (1,)
    assert _refused_with_certificate(srv, "vfull", someone, "pw") == (
        "28P01", 'password authentication failed for user "vfull"')
    assert 'clientcert=verify-full) failed for user "vfull": CN mismatch' in srv.log()
    with pytest.raises(psycopg.OperationalError):
        connect("vfull", vfull, "wrong").close()
    # A certificate another CA signed fails the handshake itself, v3 or v1.
    other = _make_certificates(tmp_path / "other")
    for v1 in (False, True):
        stranger = _make_client_certificate(other, "certuser", v1=v1)
        with pytest.raises(psycopg.OperationalError):
            connect("certuser", stranger).close()
    # An X.509 v1 certificate (OpenSSL 3's `x509 -req` without extensions) the CA signed.
    old_style = _make_client_certificate(certs, "certuser", v1=True)
    assert b"Version: 1 (0x0)" in subprocess.run(
        ["openssl", "x509", "-in", old_style[0], "-noout", "-text"], capture_output=True).stdout
    with connect("certuser", old_style) as c:
        assert c.execute("select current_user").fetchone() == ("certuser",)
    # Over TLS 1.2 too (the handshake's signature is checked apart for v1).
    with srv.connect(user="certuser", password=None, sslmode="require", sslcert=old_style[0],
                     sslkey=old_style[1], ssl_max_protocol_version="TLSv1.2") as c:
        assert c.execute("select version from pg_stat_ssl where pid = pg_backend_pid()"
                         ).fetchone() == ("TLSv1.2",)
    # A map lets a certificate's name be another role's (here, CN "someone" as vca).
    (srv.datadir / "pg_ident.conf").write_text("certs someone vca\n")
    (srv.datadir / "pg_hba.conf").write_text(
        "hostssl all postgres 127.0.0.1/32 scram-sha-256\n"
        "hostssl all all 127.0.0.1/32 cert map=certs\n")
    with srv.connect(sslmode="require") as c:
        c.execute("select pg_reload_conf()")
    with connect("vca", someone) as c:
        assert c.execute("select current_user").fetchone() == ("vca",)
    assert _refused_with_certificate(srv, "vfull", someone) == (
        "28000", 'certificate authentication failed for user "vfull"')
    # Without ssl_ca_file no line can ask for a certificate.
    plain = tls_server("hostssl all all 127.0.0.1/32 cert\n")
    state, message = _refused_with_certificate(plain, "postgres", None)
    assert (state, message) == (
        "F0000", "client certificates can only be checked if a root certificate store is available")


def test_password_method_over_tls_and_hostnossl(tls_server):
    srv = tls_server(
        "hostnossl all plain_only 127.0.0.1/32 scram-sha-256\n"
        "hostssl all all 127.0.0.1/32 password\n"
    )
    with srv.connect(sslmode="require") as c:
        c.execute("create role plain_only login password 'p'")
        assert c.execute("select ssl from pg_stat_ssl where pid = pg_backend_pid()").fetchone() == (True,)
    with srv.connect(user="plain_only", password="p", sslmode="disable") as c:
        assert c.execute("select ssl from pg_stat_ssl where pid = pg_backend_pid()").fetchone() == (False,)
    assert srv.refused(sslmode="require", password="wrong")[0] == "28P01"


def test_unencrypted_bytes_after_an_ssl_request_are_refused(tls_server):
    srv = tls_server("hostssl all all 127.0.0.1/32 scram-sha-256\n")
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
    body = b"user\0postgres\0database\0postgres\0\0"
    startup = struct.pack("!ii", 8 + len(body), 196608) + body
    s.sendall(struct.pack("!ii", 8, 80877103) + startup)
    reply = s.recv(4096)
    assert reply[:1] == b"E" and b"received unencrypted data after SSL request" in reply
    s.close()
    # A GSSAPI encryption request is declined, and the connection goes on in clear.
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
    s.sendall(struct.pack("!ii", 8, 80877104))
    assert s.recv(1) == b"N"
    s.close()


@pytest.mark.skipif(shutil.which("psql") is None, reason="needs psql")
def test_psql_over_tls(tls_server):
    srv = tls_server("hostssl all all 127.0.0.1/32 scram-sha-256\n")
    env = _env_without_pg()
    env.update(PGPASSWORD=SUPERUSER_PASSWORD, PGSSLMODE="verify-full",
               PGSSLROOTCERT=str(tls_server.certs / "ca.crt"))
    out = subprocess.run(
        ["psql", "-h", "localhost", "-p", str(srv.port), "-U", "postgres", "-d", "postgres",
         "-XAtc", "select ssl from pg_stat_ssl where pid = pg_backend_pid()"],
        env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "t", out.stderr


AUTH_CHECKS = ["auth_scram_tls", "auth_verify_full", "auth_wrong_password", "auth_plain_refused",
               "auth_md5", "auth_password", "auth_cert", "auth_cert_missing",
               "auth_group_verify_full", "auth_verify_full_mismatch", "auth_reject"]


@pytest.mark.parametrize("client", ["pgx", "pgjdbc"])
def test_drivers_authenticate_over_tls(tls_server, client):
    """pgx and pgjdbc (the client matrix's programs, AUTH_CHECKS=1) against a server that
    admits only hostssl lines, through every method: SCRAM (require and verify-full), md5,
    password, cert, a +group line with clientcert=verify-full, and reject; a wrong
    password gets 28P01 and a plain connection 28000."""
    import test_client_matrix as matrix

    tool = matrix.TOOLS[client]
    if shutil.which(tool) is None:
        raise AssertionError(f"{tool} is not installed: the driver checks need it")
    cmd = matrix.build(client)
    certs = tls_server.certs
    srv = tls_server(
        "hostssl all md5user 127.0.0.1/32 md5\n"
        "hostssl all pwuser 127.0.0.1/32 password\n"
        "hostssl all certuser 127.0.0.1/32 cert\n"
        "hostssl all +grp 127.0.0.1/32 scram-sha-256 clientcert=verify-full\n"
        "hostssl all rejected 127.0.0.1/32 reject\n"
        "hostssl all all 127.0.0.1/32 scram-sha-256\n",
        [f"ssl_ca_file={certs / 'ca.crt'}"])
    with srv.connect(sslmode="require") as c:
        c.execute("create role grp")
        for user in ("md5user", "pwuser", "certuser", "grpuser", "rejected"):
            c.execute(f"create role {user} login password '{SUPERUSER_PASSWORD}'")
        c.execute("grant grp to grpuser")
    for user in ("certuser", "grpuser"):
        _, key = _make_client_certificate(certs, user)
        subprocess.run(["openssl", "pkcs8", "-topk8", "-inform", "PEM", "-outform", "DER",
                        "-in", key, "-out", str(certs / f"{user}.pk8"), "-nocrypt"],
                       check=True, capture_output=True)
    env = _env_without_pg()
    env.update(PGHOST="127.0.0.1", PGPORT=str(srv.port), PGUSER="postgres", PGDATABASE="postgres",
               PGPASSWORD=SUPERUSER_PASSWORD, AUTH_CHECKS="1",
               AUTH_SSLROOTCERT=str(certs / "ca.crt"), AUTH_CERTDIR=str(certs))
    out = matrix.run(cmd, matrix.CLIENTS, matrix.RUN_TIMEOUT, env)
    import json
    results = {r["check"]: r for r in map(json.loads, filter(lambda l: l.startswith("{"), out.splitlines()))}
    assert list(results) == AUTH_CHECKS, out
    failed = {c: r.get("detail") for c, r in results.items() if not r["ok"]}
    assert not failed, failed


class _Standby:
    """A standby server started from a base backup's directory, with PGPASSWORD set."""

    def __init__(self, directory: Path, tmp_path: Path, password: str):
        self.port, sockdir = free_port(), tmp_path / "standby-sock"
        sockdir.mkdir()
        self.log_path = tmp_path / "standby.log"
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [str(_resolve_bin()), "server", "--auth", "trust", "-D", str(directory),
                 "-p", str(self.port), "-c", f"unix_socket_directories={sockdir}"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                env={**_env_without_pg(), "PGPASSWORD": password})

    def query(self, sql: str):
        try:
            with psycopg.connect(f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres "
                                 f"sslmode=disable password={SUPERUSER_PASSWORD} connect_timeout=10",
                                 autocommit=True) as s:
                return s.execute(sql).fetchone()[0]
        except psycopg.Error:
            return None

    def wait_for(self, sql: str, expected):
        deadline = time.monotonic() + 60
        while self.query(sql) != expected:
            assert self.proc.poll() is None, self.log_path.read_text()
            assert time.monotonic() < deadline, self.log_path.read_text()
            time.sleep(0.2)

    def stop(self) -> str:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(60)
        return self.log_path.read_text()


def _basebackup(srv, user: str, password: str, directory: Path, *extra: str):
    return subprocess.run(
        [str(_resolve_bin()), "basebackup", "-h", "127.0.0.1", "-p", str(srv.port),
         "-U", user, "-D", str(directory), *extra],
        env={**_env_without_pg(), "PGPASSWORD": password},
        capture_output=True, text=True, timeout=300)


def test_a_standby_streams_from_a_primary_that_requires_scram(auth_server, tmp_path):
    """steadydb basebackup and the standby's walreceiver prove a replication role's
    password with SCRAM (PGPASSWORD); the password is not written into the standby's
    directory; a wrong one is refused."""
    srv = auth_server(
        "host all all 127.0.0.1/32 scram-sha-256\n"
        "host replication all 127.0.0.1/32 scram-sha-256\n"
    )
    with srv.connect() as c:
        c.execute("create role replicator login replication password 'rep-pw-5150'")
        c.execute("create table r (k int primary key)")
        c.execute("insert into r values (1)")
    bad = _basebackup(srv, "replicator", "wrong", tmp_path / "refused")
    assert bad.returncode != 0
    assert 'password authentication failed for user "replicator"' in bad.stderr
    standby_dir = tmp_path / "standby"
    good = _basebackup(srv, "replicator", "rep-pw-5150", standby_dir)
    assert good.returncode == 0, good.stderr
    for path in standby_dir.rglob("*"):
        if path.is_file():
            assert b"rep-pw-5150" not in path.read_bytes(), path
    standby = _Standby(standby_dir, tmp_path, "rep-pw-5150")
    try:
        standby.wait_for("select count(*) from r", 1)
        with srv.connect() as c:
            c.execute("insert into r values (2)")
        standby.wait_for("select count(*) from r", 2)
    finally:
        log = standby.stop()
    assert "rep-pw-5150" not in log


def test_a_standby_streams_over_tls(tls_server, tmp_path):
    """A primary that takes replication only over TLS: basebackup and the walreceiver
    verify its certificate (verify-full) and bind SCRAM to it; the walsender's session is
    encrypted; a plain connection, or one that trusts another CA, is refused."""
    srv = tls_server("hostssl all all 127.0.0.1/32 scram-sha-256\n"
                     "hostssl replication replicator 127.0.0.1/32 scram-sha-256\n")
    with srv.connect(sslmode="require") as c:
        c.execute("create role replicator login replication password 'tls-rep-77'")
        c.execute("create table r (k int primary key)")
        c.execute("insert into r values (1)")
    ca = tls_server.certs / "ca.crt"
    plain = _basebackup(srv, "replicator", "tls-rep-77", tmp_path / "plain", "-d", "sslmode=disable")
    assert plain.returncode != 0
    assert "no pg_hba.conf entry for replication connection" in plain.stderr, plain.stderr
    other = _make_certificates(tmp_path / "other-ca")
    untrusted = _basebackup(srv, "replicator", "tls-rep-77", tmp_path / "untrusted", "-d",
                            f"host=localhost sslmode=verify-full sslrootcert={other / 'ca.crt'}")
    assert untrusted.returncode != 0
    assert "certificate" in untrusted.stderr.lower(), untrusted.stderr
    standby_dir = tmp_path / "standby"
    good = _basebackup(srv, "replicator", "tls-rep-77", standby_dir, "-d",
                       f"host=localhost sslmode=verify-full sslrootcert={ca} channel_binding=require")
    assert good.returncode == 0, good.stderr
    conf = (standby_dir / "steadydb.conf").read_text()
    assert "sslmode=verify-full" in conf and "channel_binding=require" in conf, conf
    standby = _Standby(standby_dir, tmp_path, "tls-rep-77")
    try:
        standby.wait_for("select count(*) from r", 1)
        with srv.connect(sslmode="require") as c:
            c.execute("insert into r values (2)")
            deadline = time.monotonic() + 60
            while True:
                row = c.execute(
                    "select s.ssl, s.version from pg_stat_replication r "
                    "join pg_stat_ssl s on s.pid = r.pid").fetchone()
                if row is not None:
                    break
                assert time.monotonic() < deadline
                time.sleep(0.2)
            assert row[0] is True and row[1] in ("TLSv1.2", "TLSv1.3"), row
        standby.wait_for("select count(*) from r", 2)
        assert "sslmode=verify-full" in standby.query("select conninfo from pg_stat_wal_receiver")
        # remote_apply is released by the replayer's report, sent on the same TLS session
        # as the receiver's: the commit returns once the standby shows the row.
        with open(srv.datadir / "steadydb.conf", "a") as conf_file:
            conf_file.write("synchronous_standby_names = '*'\n")
        with srv.connect(sslmode="require") as c:
            c.execute("select pg_reload_conf()")
            deadline = time.monotonic() + 30
            while c.execute("select count(*) from pg_stat_replication "
                            "where sync_state = 'sync'").fetchone() != (1,):
                assert time.monotonic() < deadline
                time.sleep(0.1)
            c.execute("set synchronous_commit = remote_apply")
            for k in range(3, 13):
                c.execute("insert into r values (%s)", (k,))
                assert standby.query("select max(k) from r") == k
    finally:
        log = standby.stop()
    assert "tls-rep-77" not in log
