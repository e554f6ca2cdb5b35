"""The session's TimeZone: SET TIME ZONE in its forms, the startup option drivers send,
ParameterStatus, and the zone in timestamptz text, literals, casts, comparisons,
extract, date_trunc, to_char, AT TIME ZONE, interval arithmetic, generate_series and
COPY. Results are read as text so that the client's own zone handling plays no part.
The expectations were taken from PostgreSQL 15 and hold there too."""

from __future__ import annotations

import datetime
from decimal import Decimal

import psycopg
import pytest

UTC = datetime.timezone.utc

# (TimeZone, statement, rows), each run in a connection set to that zone.
QUERIES = [
    ("America/New_York",
     "select '2024-07-01 12:00+00'::timestamptz::text, '2024-01-01 12:00+00'::timestamptz::text,"
     " '2024-07-01 12:00'::timestamptz::text",
     [("2024-07-01 08:00:00-04", "2024-01-01 07:00:00-05", "2024-07-01 12:00:00-04")]),
    # A skipped local time reads with the offset before the change, a repeated one with
    # the offset after it.
    ("America/New_York",
     "select '2018-03-11 02:30'::timestamptz::text, '2018-11-04 01:30'::timestamptz::text",
     [("2018-03-11 03:30:00-04", "2018-11-04 01:30:00-05")]),
    # Hours are elapsed time; days and months are calendar steps.
    ("America/New_York",
     "select ('2018-11-04 00:30'::timestamptz + interval '1 hour')::text,"
     " ('2018-11-04 00:30'::timestamptz + interval '1 day')::text,"
     " ('2018-11-04 01:30-04'::timestamptz + '1 day')::text,"
     " ('2024-01-31 12:00'::timestamptz + '1 month')::text,"
     " ('2018-11-05 00:00'::timestamptz - '2018-11-04 00:00'::timestamptz)::text",
     [("2018-11-04 01:30:00-04", "2018-11-05 00:30:00-05", "2018-11-05 01:30:00-05",
       "2024-02-29 12:00:00-05", "1 day 01:00:00")]),
    ("America/New_York",
     "select '2024-07-01 12:00'::timestamp::timestamptz::text,"
     " '2024-07-01 12:00+00'::timestamptz::timestamp::text,"
     " '2024-07-01 03:00+00'::timestamptz::date::text, '2024-07-01'::date::timestamptz::text",
     [("2024-07-01 12:00:00-04", "2024-07-01 08:00:00", "2024-06-30", "2024-07-01 00:00:00-04")]),
    ("America/New_York",
     "select date_trunc('day', '2024-07-01 03:00+00'::timestamptz)::text,"
     " date_trunc('hour', '2018-11-04 01:30-05'::timestamptz)::text,"
     " date_trunc('day', '2024-07-01 03:00+00'::timestamptz, 'Asia/Tokyo')::text,"
     " extract(hour from '2024-07-01 03:00+00'::timestamptz),"
     " extract(timezone from '2024-07-01 03:00+00'::timestamptz),"
     " extract(epoch from '2024-07-01 12:00+00'::timestamptz)",
     [("2024-06-30 00:00:00-04", "2018-11-04 01:00:00-05", "2024-06-30 11:00:00-04",
       Decimal("23"), Decimal("-14400"),
       Decimal("1719835200.000000"))]),
    ("America/New_York",
     "select to_char('2024-07-01 03:00+00'::timestamptz, 'YYYY-MM-DD HH24:MI TZ tz OF TZH:TZM')",
     [("2024-06-30 23:00 EDT edt -04 -04:00",)]),
    # Local mean time, to the second, before the zone's first rule.
    ("America/New_York", "select '1800-01-01 00:00+00'::timestamptz::text",
     [("1799-12-31 19:03:58-04:56:02",)]),
    ("Asia/Kolkata",
     "select '2024-07-01 03:00+00'::timestamptz::text,"
     " '2024-07-01 03:00 America/New_York'::timestamptz::text,"
     " '2024-07-01 03:00 EST'::timestamptz::text,"
     " ('2024-07-01 12:00'::timestamp at time zone 'America/New_York')::text,"
     " ('2024-07-01 12:00+00'::timestamptz at time zone 'Europe/Paris')::text",
     [("2024-07-01 08:30:00+05:30", "2024-07-01 12:30:00+05:30", "2024-07-01 13:30:00+05:30",
       "2024-07-01 21:30:00+05:30", "2024-07-01 14:00:00")]),
    ("Europe/Berlin",
     "select g::text from generate_series('2024-03-30'::timestamptz, '2024-04-01', '1 day') g",
     [("2024-03-30 00:00:00+01",), ("2024-03-31 00:00:00+01",), ("2024-04-01 00:00:00+02",)]),
    ("Europe/Berlin",
     "select g::text from generate_series('2024-03-30'::date, '2024-04-01', interval '1 day') g",
     [("2024-03-30 00:00:00+01",), ("2024-03-31 00:00:00+01",), ("2024-04-01 00:00:00+02",)]),
    ("Europe/Berlin",
     "select generate_series('2024-03-30 12:00'::timestamp, '2024-03-31', '6 hours')::text",
     [("2024-03-30 12:00:00",), ("2024-03-30 18:00:00",), ("2024-03-31 00:00:00",)]),
    ("Europe/Berlin",
     "select age('2024-04-01'::timestamptz, '2024-03-30'::timestamptz)::text,"
     " to_timestamp('2024-07-01 12:00', 'YYYY-MM-DD HH24:MI')::text, to_timestamp(0)::text",
     [("2 days", "2024-07-01 12:00:00+02", "1970-01-01 01:00:00+01")]),
    # Across types a timestamp or date is a local time of the session's zone.
    ("Europe/Berlin",
     "select '2024-07-01 12:00'::timestamp = '2024-07-01 12:00'::timestamptz,"
     " '2024-07-01'::date = '2024-06-30 22:00+00'::timestamptz,"
     " '2024-07-01'::date < '2024-06-30 23:00+00'::timestamptz,"
     " now()::date = current_date, localtimestamp = now()::timestamp,"
     " pg_typeof(localtimestamp)::text",
     [(True, True, True, True, True, "timestamp without time zone")]),
    ("Australia/Adelaide",
     "select '2024-01-01 00:00+00'::timestamptz::text,"
     " extract(timezone_hour from '2024-01-01 00:00+00'::timestamptz),"
     " extract(timezone_minute from '2024-01-01 00:00+00'::timestamptz),"
     " to_char('2024-01-01 00:00+00'::timestamptz, 'TZH TZM OF TZ')",
     [("2024-01-01 10:30:00+10:30", Decimal("10"),
       Decimal("30"), "+10 30 +10:30 ACDT")]),
    ("Asia/Tokyo",
     "select row('2024-07-01 03:00+00'::timestamptz)::text,"
     " array['2024-07-01 03:00+00'::timestamptz]::text,"
     " to_json('2024-07-01 03:00+00'::timestamptz)::text",
     [('("2024-07-01 12:00:00+09")', '{"2024-07-01 12:00:00+09"}', '"2024-07-01T12:00:00+09:00"')]),
]

# (SET statement, SHOW TimeZone, a timestamptz's text) in PostgreSQL's forms.
SETS = [
    ("set timezone = 'america/new_york'", "America/New_York", "2024-06-30 23:00:00-04"),
    ("set time zone -7", "<-07>+07", "2024-06-30 20:00:00-07"),
    ("set time zone 5.5", "<+05:30>-05:30", "2024-07-01 08:30:00+05:30"),
    ("set time zone interval '+05:30' hour to minute", "<+05:30>-05:30", "2024-07-01 08:30:00+05:30"),
    ("set timezone = 'UTC+5'", "UTC+5", "2024-06-30 22:00:00-05"),
    ("set timezone = '<+03>-3'", "<+03>-3", "2024-07-01 06:00:00+03"),
    ("set timezone = '+05:30'", "+05:30", "2024-06-30 21:30:00-05:30"),
    ("set timezone = 'EST'", "EST", "2024-06-30 22:00:00-05"),
    ("set timezone = 'EST5EDT'", "EST5EDT", "2024-06-30 23:00:00-04"),
    ("set timezone = 'UTC'", "UTC", "2024-07-01 03:00:00+00"),
]

ERRORS = [
    ("set timezone = 'PST'", "22023", 'invalid value for parameter "TimeZone": "PST"'),
    ("set timezone = 'Europe/Nowhere'", "22023",
     'invalid value for parameter "TimeZone": "Europe/Nowhere"'),
    ("set time zone interval '1 day'", "22023",
     'invalid value for parameter "TimeZone": "INTERVAL \'1 day\'"'),
    ("select '2024-07-01 12:00+00'::timestamptz at time zone 'Nowhere/Land'", "22023",
     'time zone "Nowhere/Land" not recognized'),
    ("select generate_series('2024-03-30'::timestamptz, '2024-03-31', '0 day')", "22023",
     "step size cannot equal zero"),
]


@pytest.mark.parametrize("zone, sql, rows", QUERIES)
def test_zone_dependent_results(conn, zone, sql, rows):
    conn.execute(f"set timezone = '{zone}'")
    assert conn.execute(sql).fetchall() == rows


@pytest.mark.parametrize("statement, shown, text", SETS)
def test_set_time_zone_forms(conn, statement, shown, text):
    conn.execute(statement)
    assert conn.execute("show timezone").fetchone() == (shown,)
    assert conn.execute("select current_setting('TimeZone')").fetchone() == (shown,)
    assert conn.info.parameter_status("TimeZone") == shown
    assert conn.execute("select '2024-07-01 03:00+00'::timestamptz::text").fetchone() == (text,)


@pytest.mark.parametrize("sql, sqlstate, message", ERRORS)
def test_time_zone_errors(conn, sql, sqlstate, message):
    with pytest.raises(psycopg.Error) as ei:
        conn.execute(sql)
    assert (ei.value.sqlstate, ei.value.diag.message_primary) == (sqlstate, message)
    # The setting is unchanged and the session goes on.
    assert conn.execute("select 1").fetchone() == (1,)


def test_local_and_default_reset_the_zone(conn):
    default = conn.execute("show timezone").fetchone()
    for reset in ["set time zone local", "set time zone default", "reset timezone"]:
        conn.execute("set timezone = 'Asia/Tokyo'")
        conn.execute(reset)
        assert conn.execute("show timezone").fetchone() == default


def test_startup_option_sets_the_zone(db):
    """A driver's startup TimeZone (pgjdbc sends the JVM's, libpq PGTZ or options)."""
    c = db.connect(options="-c TimeZone=Asia/Kolkata")
    assert c.info.parameter_status("TimeZone") == "Asia/Kolkata"
    assert c.execute("show timezone").fetchone() == ("Asia/Kolkata",)
    got = c.execute("select '2024-07-01 00:00+00'::timestamptz").fetchone()[0]
    assert got.utcoffset() == datetime.timedelta(hours=5, minutes=30)
    assert got == datetime.datetime(2024, 7, 1, tzinfo=UTC)


def test_set_local_and_rollback_restore_the_zone(conn):
    conn.execute("set timezone = 'Europe/Paris'")
    with conn.transaction():
        conn.execute("set local timezone = 'Asia/Tokyo'")
        assert conn.info.parameter_status("TimeZone") == "Asia/Tokyo"
        assert conn.execute("select '2024-01-01 00:00+00'::timestamptz::text").fetchone() == (
            "2024-01-01 09:00:00+09",)
    assert conn.info.parameter_status("TimeZone") == "Europe/Paris"
    assert conn.execute("select '2024-01-01 00:00+00'::timestamptz::text").fetchone() == (
        "2024-01-01 01:00:00+01",)
    conn.execute("begin")
    conn.execute("set timezone = 'America/Chicago'")
    conn.execute("rollback")
    assert conn.execute("show timezone").fetchone() == ("Europe/Paris",)
    assert conn.execute("select '2024-01-01 00:00+00'::timestamptz::text").fetchone() == (
        "2024-01-01 01:00:00+01",)
    conn.execute("select set_config('timezone', 'America/Los_Angeles', false)")
    assert conn.execute("select '2024-01-01 00:00+00'::timestamptz::text").fetchone() == (
        "2023-12-31 16:00:00-08",)


def test_stored_instants_do_not_depend_on_the_zone(db):
    """A timestamptz written in one zone is the same instant read in another; a
    timestamp is the same wall-clock time; keys, COPY and comparisons agree."""
    t = db.table("tz")
    writer = db.connect()
    writer.execute(f"create table {t} (id int primary key, at timestamptz, wall timestamp)")
    writer.execute(f"create index {t}_at on {t} (at)")
    writer.execute("set timezone = 'America/New_York'")
    writer.execute(f"insert into {t} values (1, '2024-07-01 08:00', '2024-07-01 08:00')")
    writer.execute(f"insert into {t} values (2, %s, %s)",
                   (datetime.datetime(2024, 1, 1, 12, tzinfo=UTC), datetime.datetime(2024, 1, 1, 12)))
    with writer.cursor().copy(f"copy {t} from stdin") as cp:
        cp.write("3\t2024-12-24 18:00\t2024-12-24 18:00\n")
    reader = db.connect()
    reader.execute("set timezone = 'Asia/Tokyo'")
    assert reader.execute(f"select id, at::text, wall::text from {t} order by id").fetchall() == [
        (1, "2024-07-01 21:00:00+09", "2024-07-01 08:00:00"),
        (2, "2024-01-01 21:00:00+09", "2024-01-01 12:00:00"),
        (3, "2024-12-25 08:00:00+09", "2024-12-24 18:00:00"),
    ]
    # A literal without an offset is a Tokyo time here, so the index finds row 1 by it.
    assert reader.execute(f"select id from {t} where at = '2024-07-01 21:00'").fetchall() == [(1,)]
    assert reader.execute(f"select id from {t} where at = '2024-07-01 08:00 America/New_York'"
                          ).fetchall() == [(1,)]
    with reader.cursor().copy(f"copy (select id, at from {t} order by id) to stdout") as cp:
        out = b"".join(bytes(chunk) for chunk in cp).decode()
    assert out == ("1\t2024-07-01 21:00:00+09\n2\t2024-01-01 21:00:00+09\n"
                   "3\t2024-12-25 08:00:00+09\n")
    # Binary results are instants whatever the zone.
    got = reader.execute(f"select at from {t} where id = 1", binary=True).fetchone()[0]
    assert got == datetime.datetime(2024, 7, 1, 12, tzinfo=UTC)


def test_pg_timezone_names(conn):
    """The zone database as tools list it (DBeaver, Metabase read pg_timezone_names)."""
    rows = conn.execute(
        "select name, utc_offset::text, is_dst from pg_timezone_names"
        " where name in ('Asia/Kolkata', 'UTC', 'Asia/Tokyo') order by name").fetchall()
    assert rows == [("Asia/Kolkata", "05:30:00", False), ("Asia/Tokyo", "09:00:00", False),
                    ("UTC", "00:00:00", False)]
    assert conn.execute("select count(*) > 300, count(*) = count(distinct name)"
                        " from pg_timezone_names").fetchone() == (True, True)
    # Every name listed is one SET TimeZone takes.
    for (name,) in conn.execute("select name from pg_timezone_names"
                                " where name like 'America/%' order by name limit 20").fetchall():
        conn.execute(f"set timezone = '{name}'")
        assert conn.execute("show timezone").fetchone() == (name,)


CROSS_TYPE = [
    ("ts >= '2024-07-01 12:00+00'::timestamptz", 27),
    ("ts < '2024-07-01 12:00+00'::timestamptz", 21),
    ("tz >= '2024-07-01 12:00'::timestamp", 45),
    ("tz = '2024-07-01 21:00'::timestamp", 1),
    ("ts = '2024-07-01 12:00+00'::timestamptz", 1),
    ("d >= '2024-07-10 12:00+00'::timestamptz", 38),
    ("tz >= '2024-07-02'::date", 33),
    ("tz between '2024-07-01'::date and '2024-07-02'::date", 16),
    ("ts in ('2024-07-01 12:00+00'::timestamptz, '2024-07-01 13:00+00'::timestamptz)", 2),
]


def test_cross_type_comparisons_use_the_zone_with_and_without_indexes(db):
    """timestamp and date against timestamptz compare as local times of the session's
    zone, whether an index range or a filter answers."""
    t = db.table("tsx")
    conn = db.connect()
    conn.execute(f"create table {t} (id int primary key, ts timestamp, tz timestamptz, d date)")
    conn.execute(
        f"insert into {t} select g, '2024-07-01 00:00'::timestamp + g * interval '1 hour',"
        " '2024-07-01 00:00+00'::timestamptz + g * interval '1 hour', '2024-07-01'::date + g"
        " from generate_series(0, 47) g")
    conn.execute("set timezone = 'Asia/Tokyo'")
    unindexed = [conn.execute(f"select count(*) from {t} where {w}").fetchone()[0]
                 for w, _ in CROSS_TYPE]
    for column in ("ts", "tz", "d"):
        conn.execute(f"create index {t}_{column} on {t} ({column})")
    conn.execute(f"analyze {t}")
    indexed = [conn.execute(f"select count(*) from {t} where {w}").fetchone()[0]
               for w, _ in CROSS_TYPE]
    want = [n for _, n in CROSS_TYPE]
    assert (unindexed, indexed) == (want, want)
