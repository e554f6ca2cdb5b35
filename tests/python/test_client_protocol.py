"""What drivers read from the protocol besides rows: the object fields of an
ErrorResponse (schema, table, column, constraint), ParameterStatus reports after SET,
RESET and the end of a transaction, and settings given at connect (startup parameters
and ``options=-c ...``).

Every expectation holds on PostgreSQL 15 too (``STEADYDB_TEST_EXTERNAL``).
"""

from __future__ import annotations

import psycopg
import pytest


def test_unique_violation_names_its_constraint_and_table(db, conn):
    t = db.table("errfields")
    conn.execute(f"create table {t} (k int primary key, v text not null)")
    conn.execute(f"insert into {t} values (1, 'a')")
    with pytest.raises(psycopg.errors.UniqueViolation) as ei:
        conn.execute(f"insert into {t} values (1, 'b')")
    diag = ei.value.diag
    assert (diag.schema_name, diag.table_name, diag.constraint_name) == ("public", t, f"{t}_pkey")
    assert diag.column_name is None
    with pytest.raises(psycopg.errors.NotNullViolation) as ei:
        conn.execute(f"insert into {t} values (2, null)")
    diag = ei.value.diag
    assert (diag.schema_name, diag.table_name, diag.column_name) == ("public", t, "v")
    assert diag.constraint_name is None
    # Errors about no object carry none.
    with pytest.raises(psycopg.errors.DivisionByZero) as ei:
        conn.execute("select 1 / 0")
    assert ei.value.diag.table_name is None


def test_add_primary_key_conflicts_name_the_table(db, conn):
    t = db.table("errpk")
    conn.execute(f"create table {t} (k int, v text)")
    conn.execute(f"insert into {t} values (1, 'a'), (1, 'b')")
    with pytest.raises(psycopg.errors.UniqueViolation) as ei:
        conn.execute(f"alter table {t} add primary key (k)")
    diag = ei.value.diag
    assert (diag.schema_name, diag.table_name, diag.constraint_name) == ("public", t, f"{t}_pkey")
    conn.execute(f"delete from {t} where v = 'b'")
    conn.execute(f"insert into {t} values (null, 'c')")
    with pytest.raises(psycopg.errors.NotNullViolation) as ei:
        conn.execute(f"alter table {t} add primary key (k)")
    diag = ei.value.diag
    assert (diag.schema_name, diag.table_name, diag.column_name) == ("public", t, "k")


def test_set_and_reset_report_the_new_value(conn):
    assert conn.info.parameter_status("application_name") == ""
    conn.execute("set application_name = 'reporting app'")
    assert conn.info.parameter_status("application_name") == "reporting app"
    conn.execute("reset application_name")
    assert conn.info.parameter_status("application_name") == ""
    conn.execute("set default_transaction_read_only = on")
    assert conn.info.parameter_status("default_transaction_read_only") == "on"
    conn.execute("reset all")
    assert conn.info.parameter_status("default_transaction_read_only") == "off"


def test_set_local_reports_and_reverts_at_the_end_of_the_transaction(conn):
    conn.execute("begin")
    conn.execute("set local application_name = 'inside'")
    assert conn.info.parameter_status("application_name") == "inside"
    conn.execute("commit")
    assert conn.info.parameter_status("application_name") == ""
    conn.execute("begin")
    conn.execute("set application_name = 'rolled back'")
    assert conn.info.parameter_status("application_name") == "rolled back"
    conn.execute("rollback")
    assert conn.info.parameter_status("application_name") == ""


def test_settings_given_at_connect(db):
    params = {"options": "-c statement_timeout=1234 --lock-timeout=5s -c application_name=opt\\ app"
                         " -cextra_float_digits=3"}
    with psycopg.connect(db.server.conninfo(), autocommit=True, **params) as c:
        assert c.execute("show statement_timeout").fetchone() == ("1234ms",)
        assert c.execute("show lock_timeout").fetchone() == ("5s",)
        assert c.execute("show extra_float_digits").fetchone() == ("3",)
        assert c.execute("show application_name").fetchone() == ("opt app",)
        assert c.info.parameter_status("application_name") == "opt app"


@pytest.mark.parametrize("options, message", [
    ("junk", "invalid command-line argument for server process: junk"),
    ("-c foo", "-c foo requires a value"),
    ("-c nosuch_param=1", "unrecognized configuration parameter \"nosuch_param\""),
])
def test_bad_options_refuse_the_connection(db, options, message):
    with pytest.raises(psycopg.OperationalError) as ei:
        psycopg.connect(db.server.conninfo(), options=options, connect_timeout=10)
    assert message in str(ei.value)


def test_set_is_transactional(conn):
    """A SET in a transaction that rolls back (or since a savepoint rolled back to) is
    undone; SET LOCAL ends with the transaction, unless a later SET overrode it."""
    show = lambda: conn.execute("show statement_timeout").fetchone()[0]  # noqa: E731
    conn.execute("begin")
    conn.execute("set statement_timeout = '1s'")
    conn.execute("savepoint a")
    conn.execute("set statement_timeout = '2s'")
    assert show() == "2s"
    conn.execute("rollback to savepoint a")
    assert show() == "1s"
    conn.execute("commit")
    assert show() == "1s"
    conn.execute("begin")
    conn.execute("set local statement_timeout = '3s'")
    conn.execute("set statement_timeout = '4s'")
    conn.execute("commit")
    assert show() == "4s"
    conn.execute("begin")
    conn.execute("reset statement_timeout")
    assert show() == "0"
    conn.execute("rollback")
    assert show() == "4s"
    conn.execute("reset all")
    assert show() == "0"



def test_functions_drivers_call(db, conn):
    """current_schema (SQLAlchemy's first query), set_config (pg_dump's), string_agg."""
    assert conn.execute("select current_schema(), current_schema").fetchone() == ("public", "public")
    row = conn.execute("select set_config('application_name', 'set by function', false),"
                       " current_setting('application_name')").fetchone()
    assert row == ("set by function", "set by function")
    assert conn.execute("show application_name").fetchone() == ("set by function",)
    assert conn.info.parameter_status("application_name") == "set by function"
    conn.execute("begin")
    conn.execute("select set_config('statement_timeout', '5s', true)")
    assert conn.execute("show statement_timeout").fetchone() == ("5s",)
    conn.execute("commit")
    assert conn.execute("show statement_timeout").fetchone() == ("0",)
    with pytest.raises(psycopg.errors.UndefinedObject):
        conn.execute("select set_config('no_such_setting', 'x', false)")
    t = db.table("aggs")
    conn.execute(f"create table {t} (id int primary key, name text)")
    conn.execute(f"insert into {t} values (1, 'one'), (2, 'two'), (3, 'three'), (4, null)")
    assert conn.execute(f"select string_agg(name, ', ') from {t}").fetchone() == ("one, two, three",)
    rows = conn.execute(f"select id % 2, string_agg(name, '|') from {t} group by 1 order by 1").fetchall()
    assert rows == [(0, "two"), (1, "one|three")]
    assert conn.execute(f"select string_agg(name, null) from {t}").fetchone() == ("onetwothree",)
    assert conn.execute(f"select string_agg(name, ',') from {t} where id > 9").fetchone() == (None,)
    with pytest.raises(psycopg.errors.UndefinedFunction):
        conn.execute(f"select string_agg(id, ',') from {t}")


@pytest.mark.steadydb_only
@pytest.mark.parametrize("sql", [
    "select row_number() filter (where id > 1) over () from {t}",
])
def test_aggregate_clauses_not_supported_yet(db, conn, sql):
    t = db.table("aggclauses")
    conn.execute(f"create table {t} (id int primary key, name text)")
    with pytest.raises(psycopg.errors.FeatureNotSupported):
        conn.execute(sql.format(t=t))


def test_sql_prepare_and_execute(db, conn):
    """PREPARE / EXECUTE / DEALLOCATE, sharing the protocol's statement names."""
    t = db.table("prep")
    conn.execute(f"create table {t} (id int primary key, v text)")
    assert conn.execute(f"prepare ins_{t} (int, text) as insert into {t} values ($1, $2)"
                        ).statusmessage == "PREPARE"
    assert conn.execute(f"execute ins_{t} (1, 'one')").statusmessage == "INSERT 0 1"
    conn.execute(f"execute ins_{t}(2, 'two')")
    conn.execute(f"prepare get_{t} as select v from {t} where id = $1")
    cur = conn.execute(f"execute get_{t}(2)")
    assert cur.fetchall() == [("two",)]
    assert cur.statusmessage == "SELECT 1"
    assert conn.execute(f"execute get_{t}('1')").fetchall() == [("one",)]
    with pytest.raises(psycopg.errors.SyntaxError) as ei:
        conn.execute(f"execute get_{t}(1, 2)")
    assert ei.value.diag.message_primary == f'wrong number of parameters for prepared statement "get_{t}"'
    assert ei.value.diag.message_detail == "Expected 1 parameters but got 2."
    with pytest.raises(psycopg.errors.DuplicatePreparedStatement):
        conn.execute(f"prepare get_{t} as select 1")
    assert conn.execute(f"deallocate get_{t}").statusmessage == "DEALLOCATE"
    with pytest.raises(psycopg.errors.InvalidSqlStatementName):
        conn.execute(f"execute get_{t}(1)")


def test_identity_column_generated_by_default(db, conn):
    """Django's primary key: bigint GENERATED BY DEFAULT AS IDENTITY."""
    t = db.table("ident")
    conn.execute(f'create table {t} ("id" bigint NOT NULL PRIMARY KEY GENERATED BY DEFAULT AS'
                 ' IDENTITY, name varchar(20))')
    conn.execute(f"insert into {t} (name) values ('a'), ('b')")
    conn.execute(f"insert into {t} values (10, 'explicit')")
    assert conn.execute(f"insert into {t} (name) values ('c') returning id").fetchone() == (3,)
    assert conn.execute(f"select id, name from {t} order by id").fetchall() == \
        [(1, "a"), (2, "b"), (3, "c"), (10, "explicit")]
    with pytest.raises(psycopg.Error) as ei:
        conn.execute(f"create table {t}_text (id text generated by default as identity)")
    assert ei.value.sqlstate == "22023"
    assert ei.value.diag.message_primary == "identity column type must be smallint, integer, or bigint"
