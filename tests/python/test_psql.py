"""The real psql client against the server: output, errors, exit codes."""

import re


def test_round_trip_script_output(db):
    t = db.table("psql")
    script = f"""
create table {t} (id int primary key, name text, score numeric(6,2));
insert into {t} values (1, 'alice', 10.5), (2, 'bob', null), (3, 'carol', -2);
select * from {t} order by id;
update {t} set score = score + 1 where id <> 2;
delete from {t} where id = 3;
select id, name, score from {t} order by id desc;
"""
    res = db.psql(script)
    expected = """CREATE TABLE
INSERT 0 3
 id | name  | score 
----+-------+-------
  1 | alice | 10.50
  2 | bob   |      
  3 | carol | -2.00
(3 rows)

UPDATE 2
DELETE 1
 id | name  | score 
----+-------+-------
  2 | bob   |      
  1 | alice | 11.50
(2 rows)

"""
    assert res.stdout == expected
    assert res.stderr == ""
    assert res.returncode == 0


def test_unaligned_tuples_only_output(db):
    t = db.table("psqlat")
    db.psql(f"create table {t} (id int, label text, flag boolean, d date)")
    db.psql(f"insert into {t} values (1, 'x|y', true, '2024-02-29'), (2, null, false, null)")
    res = db.psql(f"select id, label, flag, d from {t} order by id", "-A", "-t", "-F", ",")
    assert res.stdout == "1,x|y,t,2024-02-29\n2,,f,\n"


def test_expanded_and_null_display(db):
    res = db.psql(
        "\\pset null '<null>'\nselect 42 as answer, null::text as nothing, 'héllo' as greeting;\n",
        "-x",
    )
    assert res.stdout == (
        'Null display is "<null>".\n-[ RECORD 1 ]----\nanswer   | 42\nnothing  | <null>\ngreeting | héllo\n\n'
    )


def test_error_shows_sqlstate_verbose(db):
    t = db.table("psqlerr")
    db.psql(f"create table {t} (id int primary key, v text)")
    db.psql(f"insert into {t} values (1, 'a')")
    res = db.psql(f"\\set VERBOSITY verbose\ninsert into {t} values (1, 'again');\n", check=False)
    assert res.returncode == 3  # script error with ON_ERROR_STOP
    first = res.stderr.splitlines()[0]
    assert re.match(r"^(psql:<stdin>:\d+: )?ERROR:  23505: ", first), res.stderr
    # the failed insert changed nothing
    res = db.psql(f"select count(*), max(v) from {t}", "-At")
    assert res.stdout == "1|a\n"


def test_error_sqlstates_via_psql(db):
    cases = {
        "select * from no_such_table_xyz": "42P01",
        "select 1/0": "22012",
        "frobnicate the table": "42601",
        "select 'abc'::int": "22P02",
    }
    for sql, code in cases.items():
        res = db.psql(f"\\set VERBOSITY verbose\n{sql};\n", check=False)
        assert res.returncode == 3, (sql, res.stderr)
        assert re.search(rf"ERROR:  {code}: ", res.stderr), (sql, res.stderr)


def test_on_error_stop_stops_script(db):
    t = db.table("psqlstop")
    script = f"""
create table {t} (id int);
insert into {t} values (1);
select * from definitely_missing_table;
insert into {t} values (2);
"""
    res = db.psql(script, check=False)
    assert res.returncode == 3
    assert "INSERT 0 1" in res.stdout
    res = db.psql(f"select id from {t} order by id", "-At")
    assert res.stdout == "1\n"


def test_multi_statement_command_string(db):
    t = db.table("psqlmulti")
    db.psql(f"create table {t} (id int primary key, v int)")
    res = db.psql(
        command=f"insert into {t} values (1, 10); insert into {t} values (2, 20); "
        f"update {t} set v = v + 1; select sum(v) from {t}",
        check=True,
    )
    assert res.stdout == "INSERT 0 1\nINSERT 0 1\nUPDATE 2\n sum \n-----\n  32\n(1 row)\n\n"


def test_multi_statement_command_is_one_implicit_transaction(db):
    t = db.table("psqlimpl")
    db.psql(f"create table {t} (id int primary key)")
    res = db.psql(
        None,
        "-v",
        "VERBOSITY=verbose",
        command=f"insert into {t} values (1); insert into {t} values (2); insert into {t} values (1)",
        check=False,
    )
    assert res.returncode == 1
    assert res.stderr.startswith("ERROR:  23505: "), res.stderr
    # the whole Query message is one implicit transaction: nothing was kept
    res = db.psql(f"select count(*) from {t}", "-At")
    assert res.stdout == "0\n"


def test_multi_statement_with_explicit_transactions(db):
    t = db.table("psqlexpl")
    db.psql(f"create table {t} (id int primary key)")
    res = db.psql(
        command=f"begin; insert into {t} values (1); commit; "
        f"begin; insert into {t} values (2); rollback; select count(*) from {t}",
        check=True,
    )
    assert res.stdout.splitlines()[:5] == ["BEGIN", "INSERT 0 1", "COMMIT", "BEGIN", "INSERT 0 1"]
    res = db.psql(f"select id from {t}", "-At")
    assert res.stdout == "1\n"


def test_dash_c_failure_exits_nonzero(db):
    res = db.psql(None, "-v", "VERBOSITY=verbose", command="select * from no_such_table_psql", check=False)
    assert res.returncode == 1
    assert re.match(r"^ERROR:  42P01: .*no_such_table_psql", res.stderr), res.stderr
    assert res.stdout == ""


def test_dash_c_syntax_error_exits_nonzero(db):
    res = db.psql(None, "-v", "VERBOSITY=verbose", command="selec 1", check=False)
    assert res.returncode == 1
    assert res.stderr.startswith("ERROR:  42601: "), res.stderr


def test_dash_c_success_exit_zero(db):
    res = db.psql(command="select 1 + 1 as two", check=False)
    assert res.returncode == 0
    assert res.stdout == " two \n-----\n   2\n(1 row)\n\n"


def test_unknown_database_fails(db):
    res = db.psql(None, "-d", "nosuchdb", command="select 1", check=False)
    assert res.returncode == 2
    assert "FATAL:" in res.stderr and "nosuchdb" in res.stderr, res.stderr


def test_transaction_block_in_script(db):
    t = db.table("psqltx")
    script = f"""
create table {t} (id int primary key, v text);
begin;
insert into {t} values (1, 'one');
insert into {t} values (2, 'two');
rollback;
begin;
insert into {t} values (3, 'three');
commit;
select id, v from {t} order by id;
"""
    res = db.psql(script, "-At")
    assert res.stdout.splitlines() == [
        "CREATE TABLE",
        "BEGIN",
        "INSERT 0 1",
        "INSERT 0 1",
        "ROLLBACK",
        "BEGIN",
        "INSERT 0 1",
        "COMMIT",
        "3|three",
    ]
