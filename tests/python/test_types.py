"""Every supported type round-trips through psycopg, in text and binary format.

Three ways of sending values are exercised:

* ``text``    -- extended protocol, parameters and results in text format (``%t``)
* ``binary``  -- extended protocol, parameters and results in binary format (``%b``, binary=True)
* ``literal`` -- simple query protocol, values rendered as SQL literals (psycopg.ClientCursor)
"""

from __future__ import annotations

import datetime as dt
import math
import random
import struct
from dataclasses import dataclass
from decimal import Decimal
from uuid import UUID
from typing import Any, Callable

import psycopg
import pytest

from conftest import run_steps
from psycopg.types.numeric import Float4, Float8, Int2, Int4, Int8

MODES = ["text", "binary", "literal"]

UTC = dt.timezone.utc
IST = dt.timezone(dt.timedelta(hours=5, minutes=30))
PST = dt.timezone(dt.timedelta(hours=-8))


def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def same_float(a, b) -> bool:
    if a is None or b is None:
        return a is b
    if math.isnan(b):
        return isinstance(a, float) and math.isnan(a)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def same_float4(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return same_float(f32(a), f32(b))


def same_numeric(a, b) -> bool:
    # b is the expected canonical text (value at the column's scale)
    if a is None or b is None:
        return a is b
    return isinstance(a, Decimal) and str(a) == b


def same_exact(a, b) -> bool:
    return type(a) is type(b) and a == b if b is not None else a is None


def same_tz(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return isinstance(a, dt.datetime) and a.tzinfo is not None and a == b


@dataclass
class TypeCase:
    sqltype: str
    oid: int
    # (value sent, expected value back)
    values: list[tuple[Any, Any]]
    wrap: Callable[[Any], Any] = lambda v: v
    same: Callable[[Any, Any], bool] = same_exact
    literal_skip: tuple = ()  # values whose literal form loses information


def _ident(vals):
    return [(v, v) for v in vals]


NEG_ZERO = -0.0
BIG_BYTES = bytes(random.Random(42).randrange(256) for _ in range(100_000))

CASES = [
    TypeCase("smallint", 21, _ident([0, 1, -1, -32768, 32767]), Int2),
    TypeCase("int", 23, _ident([0, 42, -2147483648, 2147483647]), Int4),
    TypeCase("bigint", 20, _ident([0, -9223372036854775808, 9223372036854775807, 2**40 + 7]), Int8),
    TypeCase(
        "real",
        700,
        _ident(
            [
                0.0,
                NEG_ZERO,
                1.5,
                -2.25,
                3.4028234663852886e38,
                1.401298464324817e-45,
                f32(0.1),
                math.inf,
                -math.inf,
                math.nan,
            ]
        ),
        Float4,
        same_float4,
        literal_skip=(NEG_ZERO,),
    ),
    TypeCase(
        "double precision",
        701,
        _ident(
            [
                0.0,
                NEG_ZERO,
                0.1,
                -123.456,
                1e-300,
                5e-324,
                1.7976931348623157e308,
                2.2250738585072014e-308,
                math.inf,
                -math.inf,
                math.nan,
            ]
        ),
        Float8,
        same_float,
        literal_skip=(NEG_ZERO,),
    ),
    TypeCase(
        "numeric(20,6)",
        1700,
        [
            (Decimal("0"), "0.000000"),
            (Decimal("1.5"), "1.500000"),
            (Decimal("-12345678901234.123456"), "-12345678901234.123456"),
            (Decimal("99999999999999.999999"), "99999999999999.999999"),
            (Decimal("0.000001"), "0.000001"),
            (Decimal("-0.0000005"), "-0.000001"),
            (Decimal("2.0000004"), "2.000000"),
            (Decimal("1E+3"), "1000.000000"),
        ],
        same=same_numeric,
    ),
    TypeCase(
        "numeric(5,2)",
        1700,
        [(Decimal("123.45"), "123.45"), (Decimal("-999.99"), "-999.99"), (Decimal("0.005"), "0.01")],
        same=same_numeric,
    ),
    TypeCase("boolean", 16, _ident([True, False])),
    TypeCase(
        "text",
        25,
        _ident(
            [
                "",
                "hello",
                "ünïcødé ✓ 日本語 🎉",
                'it\'s "quoted" \\ back',
                "tab\there\nnewline\r",
                "x" * 20000,
                " leading and trailing  ",
            ]
        ),
    ),
    TypeCase("varchar(10)", 1043, _ident(["", "abcdefghij", "日本語テキスト", "a b"])),
    TypeCase("char(5)", 1042, [("ab", "ab   "), ("abcde", "abcde"), ("", "     "), ("é", "é    ")]),
    TypeCase(
        "timestamp",
        1114,
        _ident(
            [
                dt.datetime(2024, 2, 29, 23, 59, 59, 999999),
                dt.datetime(2000, 1, 1),
                dt.datetime(1999, 12, 31, 23, 59, 59, 1),
                dt.datetime(1970, 1, 1, 0, 0, 0, 123456),
                dt.datetime(1, 1, 1),
                dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
            ]
        ),
    ),
    TypeCase(
        "timestamptz",
        1184,
        _ident(
            [
                dt.datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=UTC),
                dt.datetime(2000, 1, 1, tzinfo=UTC),
                dt.datetime(1999, 12, 31, 23, 59, 59, 1, tzinfo=UTC),
                dt.datetime(2024, 6, 1, 12, 30, 0, 500, tzinfo=IST),
                dt.datetime(1969, 7, 20, 20, 17, 40, tzinfo=PST),
            ]
        ),
        same=same_tz,
    ),
    TypeCase(
        "date",
        1082,
        _ident(
            [
                dt.date(2024, 2, 29),
                dt.date(2000, 1, 1),
                dt.date(1999, 12, 31),
                dt.date(1, 1, 1),
                dt.date(9999, 12, 31),
                dt.date(1970, 1, 1),
            ]
        ),
    ),
    TypeCase(
        "bytea",
        17,
        _ident([b"", b"\x00", b"\x00\x01\x02\xff\x00", bytes(range(256)), b"\\x41", BIG_BYTES]),
    ),
    TypeCase(
        "interval",
        1186,
        _ident([dt.timedelta(0), dt.timedelta(days=1, seconds=3600), dt.timedelta(days=-3, microseconds=5),
                dt.timedelta(seconds=-1), dt.timedelta(days=36500, seconds=86399, microseconds=999999)]),
    ),
    TypeCase(
        "uuid",
        2950,
        _ident([UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), UUID(int=0), UUID(int=2**128 - 1),
                UUID("00000000-0000-4000-8000-000000000001")]),
    ),
]

CASE_IDS = [c.sqltype.replace(" ", "_").replace("(", "").replace(")", "").replace(",", "_") for c in CASES]


def _cursor(conn, mode):
    if mode == "literal":
        return psycopg.ClientCursor(conn)
    return conn.cursor()


def _placeholder(mode):
    return {"text": "%t", "binary": "%b", "literal": "%s"}[mode]


def _check_rows(case: TypeCase, got, expected, what):
    assert len(got) == len(expected), what
    for (sent, exp), g in zip(expected, got, strict=True):
        assert case.same(g, exp), f"{what}: sent {sent!r}, expected {exp!r}, got {g!r}"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_round_trip_through_table(db, case, mode):
    conn = db.connect()
    t = db.table("rt")
    conn.execute(f"create table {t} (id int primary key, v {case.sqltype})")
    values = [(s, e) for s, e in case.values if not (mode == "literal" and _is_skipped(case, s))]
    values.append((None, None))
    ph = _placeholder(mode)
    with _cursor(conn, mode) as cur:
        for i, (sent, _exp) in enumerate(values):
            param = case.wrap(sent) if (sent is not None and mode != "literal") else sent
            cur.execute(f"insert into {t} (id, v) values ({ph}, {ph})", (i, param))
            assert cur.rowcount == 1
        cur.execute(f"select v from {t} order by id", binary=(mode == "binary"))
        assert cur.description[0].type_code == case.oid
        got = [r[0] for r in cur.fetchall()]
    _check_rows(case, got, values, f"{case.sqltype}/{mode}")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_round_trip_select_param(db, case, mode):
    """select $1::type returns the value unchanged (no table involved)."""
    conn = db.connect()
    ph = _placeholder(mode)
    values = [(s, e) for s, e in case.values if not (mode == "literal" and _is_skipped(case, s))]
    values.append((None, None))
    got = []
    with _cursor(conn, mode) as cur:
        for sent, _exp in values:
            param = case.wrap(sent) if (sent is not None and mode != "literal") else sent
            cur.execute(f"select ({ph})::{case.sqltype}", (param,), binary=(mode == "binary"))
            assert cur.description[0].type_code == case.oid
            got.append(cur.fetchone()[0])
    _check_rows(case, got, values, f"{case.sqltype}/{mode}")


def _is_skipped(case, v):
    return any(
        v is s or (isinstance(v, float) and isinstance(s, float) and same_float(v, s))
        for s in case.literal_skip
    )


@pytest.mark.parametrize("mode", MODES)
def test_all_types_in_one_row(db, mode):
    conn = db.connect()
    t = db.table("wide")
    cols = ", ".join(f"c{i} {c.sqltype}" for i, c in enumerate(CASES))
    conn.execute(f"create table {t} (id serial primary key, big bigserial, {cols})")
    ph = _placeholder(mode)
    names = ", ".join(f"c{i}" for i in range(len(CASES)))
    firsts = [c.values[-1] if c.sqltype != "bytea" else c.values[2] for c in CASES]
    with _cursor(conn, mode) as cur:
        params = [(c.wrap(s) if mode != "literal" else s) for c, (s, _e) in zip(CASES, firsts, strict=True)]
        cur.execute(
            f"insert into {t} ({names}) values ({', '.join([ph] * len(CASES))}) returning id, big",
            params,
        )
        assert cur.fetchall() == [(1, 1)]
        cur.execute(f"insert into {t} ({names}) values ({', '.join([ph] * len(CASES))})", [None] * len(CASES))
        cur.execute(f"select * from {t} order by id", binary=(mode == "binary"))
        assert [d.type_code for d in cur.description] == [23, 20] + [c.oid for c in CASES]
        r1, r2 = cur.fetchall()
    assert r1[:2] == (1, 1) and r2[:2] == (2, 2)
    for c, (s, e), g in zip(CASES, firsts, r1[2:], strict=True):
        assert c.same(g, e), f"{c.sqltype}/{mode}: sent {s!r}, got {g!r}"
    assert list(r2[2:]) == [None] * len(CASES)


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_python_default_int_and_str_params(db, binary):
    """psycopg picks int2/int4/int8/numeric by magnitude and sends str untyped (text)
    or as text (binary); the server must coerce them to the column types."""
    conn = db.connect()
    t = db.table("coerce")
    conn.execute(
        f"create table {t} (id bigint primary key, i int, s smallint, v varchar(5), c char(3), "
        f"n numeric(12,2), f double precision, r real)"
    )
    ph = "%b" if binary else "%s"
    with conn.cursor() as cur:
        cur.execute(
            f"insert into {t} values ({', '.join([ph] * 8)})",
            (5, 70000, 7, "abc", "x", Decimal("12.345"), 2, 1.5),
        )
        cur.execute(
            f"insert into {t} values ({', '.join([ph] * 8)})",
            (2**40, 1, -3, "", "yz", 7, 1.25, 3),
        )
        cur.execute(f"select * from {t} where id = {ph}", (5,), binary=binary)
        assert cur.fetchall() == [(5, 70000, 7, "abc", "x  ", Decimal("12.35"), 2.0, 1.5)]
        cur.execute(f"select * from {t} where id = {ph}", (2**40,), binary=binary)
        assert cur.fetchall() == [(2**40, 1, -3, "", "yz ", Decimal("7.00"), 1.25, 3.0)]
        cur.execute(f"select id from {t} where i > {ph} and n < {ph} order by id", (0, Decimal(100)))
        assert cur.fetchall() == [(5,), (2**40,)]


def test_wrong_parameter_type_22p02(db):
    conn = db.connect()
    t = db.table("badparam")
    conn.execute(f"create table {t} (id int primary key, d date, b boolean, n numeric(5,1))")
    with conn.cursor() as cur:
        for sql, params in [
            (f"insert into {t} (id) values (%s)", ("abc",)),
            (f"insert into {t} (id, d) values (1, %s)", ("not a date",)),
            (f"insert into {t} (id, b) values (1, %s)", ("perhaps",)),
            (f"insert into {t} (id, n) values (1, %s)", ("1.2.3",)),
            (f"select * from {t} where id = %s", ("x1",)),
            ("select %s::bigint", ("12abc",)),
        ]:
            with pytest.raises(psycopg.Error) as ei:
                cur.execute(sql, params)
            expected = "22007" if "not a date" in params else "22P02"
            assert ei.value.sqlstate == expected, (sql, params, ei.value.sqlstate, str(ei.value))
        cur.execute(f"select count(*) from {t}")
        assert cur.fetchone() == (0,)


def test_out_of_range_parameter_22003(db):
    conn = db.connect()
    t = db.table("rangeparam")
    conn.execute(f"create table {t} (id int primary key, s smallint)")
    with conn.cursor() as cur:
        with pytest.raises(psycopg.Error) as ei:
            cur.execute(f"insert into {t} values (%b, 1)", (Int8(2**40),))
        assert ei.value.sqlstate == "22003"
        with pytest.raises(psycopg.Error) as ei:
            cur.execute(f"insert into {t} values (1, %s)", (40000,))
        assert ei.value.sqlstate == "22003"
        with pytest.raises(psycopg.Error) as ei:
            cur.execute(f"insert into {t} values (1, %s)", ("40000",))
        assert ei.value.sqlstate == "22003"


def test_varchar_param_too_long_22001(db):
    conn = db.connect()
    t = db.table("vcparam")
    conn.execute(f"create table {t} (v varchar(3), c char(2))")
    for ph in ("%t", "%b"):
        with pytest.raises(psycopg.Error) as ei:
            conn.execute(f"insert into {t} (v) values ({ph})", ("abcd",))
        assert ei.value.sqlstate == "22001"
        with pytest.raises(psycopg.Error) as ei:
            conn.execute(f"insert into {t} (c) values ({ph})", ("abc",))
        assert ei.value.sqlstate == "22001"
    assert conn.execute(f"select count(*) from {t}").fetchone() == (0,)


def test_prepared_statement_reuse(db):
    """The same statement executed many times (psycopg prepares it server side after a few)."""
    conn = db.connect(prepare_threshold=1)
    t = db.table("prep")
    conn.execute(f"create table {t} (id int primary key, v text, f double precision)")
    with conn.cursor() as cur:
        for i in range(50):
            cur.execute(f"insert into {t} values (%s, %s, %s)", (i, f"v{i}", i / 4))
        for i in range(50):
            cur.execute(f"select v, f from {t} where id = %b", (i,), binary=(i % 2 == 0))
            assert cur.fetchall() == [(f"v{i}", i / 4)]
        cur.execute(f"select count(*), sum(f) from {t}")
        assert cur.fetchone() == (50, sum(i / 4 for i in range(50)))


def test_executemany_and_pipeline(db):
    conn = db.connect()
    t = db.table("many")
    conn.execute(f"create table {t} (id int primary key, v text)")
    with conn.cursor() as cur:
        cur.executemany(f"insert into {t} values (%s, %s)", [(i, str(i)) for i in range(200)])
        with conn.pipeline():
            for i in range(200, 300):
                cur.execute(f"insert into {t} values (%b, %b)", (i, str(i)))
        cur.execute(f"select count(*), min(id), max(id), sum(length(v)) from {t}")
        assert cur.fetchone() == (300, 0, 299, 10 + 180 + 600)


UUIDS = [
    ('DROP TABLE IF EXISTS ut',
     'DROP TABLE'),
    ('CREATE TABLE ut (id uuid PRIMARY KEY, ref uuid, tags uuid[], n int)',
     'CREATE TABLE'),
    ("INSERT INTO ut VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{A0EEBC99-9C0B4EF8-BB6D-6BB9BD380A12}', ARRAY['00000000-0000-0000-0000-000000000001'::uuid], 1)",
     'INSERT 0 1'),
    ("INSERT INTO ut VALUES ('a0eebc999c0b4ef8bb6d6bb9bd380a12', NULL, NULL, 2), ('00000000-0000-0000-0000-000000000000', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{}', 3)",
     'INSERT 0 2'),
    ('SELECT * FROM ut ORDER BY id',
     [(UUID('00000000-0000-0000-0000-000000000000'), UUID('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'), [], 3), (UUID('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'), UUID('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12'), [UUID('00000000-0000-0000-0000-000000000001')], 1), (UUID('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12'), None, None, 2)]),
    ('SELECT id::text, ref = id, ref > id FROM ut ORDER BY n',
     [('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', False, True), ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12', None, None), ('00000000-0000-0000-0000-000000000000', False, True)]),
    ("SELECT n FROM ut WHERE id = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
     [(1,)]),
    ("SELECT n FROM ut WHERE id IN ('a0eebc999c0b4ef8bb6d6bb9bd380a12', '00000000-0000-0000-0000-000000000000') ORDER BY n",
     [(2,), (3,)]),
    ("INSERT INTO ut VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', NULL, NULL, 9)",
     ('23505', 'duplicate key value violates unique constraint "ut_pkey"', 'Key (id)=(a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11) already exists.', 'ut_pkey')),
    ("SELECT 'xyz'::uuid",
     ('22P02', 'invalid input syntax for type uuid: "xyz"', None, None)),
    ("SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1'::uuid",
     ('22P02', 'invalid input syntax for type uuid: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1"', None, None)),
    ("SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111'::uuid",
     ('22P02', 'invalid input syntax for type uuid: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111"', None, None)),
    ("SELECT 'a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11'::uuid",
     [(UUID('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'),)]),
    ("SELECT '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid",
     ('22P02', 'invalid input syntax for type uuid: "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"', None, None)),
    ('SELECT length(gen_random_uuid()::text), substr(gen_random_uuid()::text, 15, 1), gen_random_uuid() = gen_random_uuid()',
     [(36, '4', False)]),
    ('SELECT pg_typeof(gen_random_uuid())',
     [('uuid',)]),
    ('SELECT count(DISTINCT id), min(id), max(id) FROM ut',
     ('42883', 'function min(uuid) does not exist', None, None)),
    ('CREATE INDEX ut_ref ON ut (ref)',
     'CREATE INDEX'),
    ("SELECT n FROM ut WHERE ref = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
     [(3,)]),
    ("SELECT data_type, udt_name FROM information_schema.columns WHERE table_name = 'ut' ORDER BY ordinal_position",
     [('uuid', 'uuid'), ('uuid', 'uuid'), ('ARRAY', '_uuid'), ('integer', 'int4')]),
    ("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'ut'::regclass AND attnum > 0 ORDER BY attnum",
     [('uuid',), ('uuid',), ('uuid[]',), ('integer',)]),
    ("SELECT typname, typlen, typcategory FROM pg_type WHERE oid = 'uuid'::regtype",
     [('uuid', 16, 'U')]),
    ('SELECT id = 1 FROM ut',
     ('42883', 'operator does not exist: uuid = integer', None, None)),
    ("SELECT id || 'x' FROM ut ORDER BY n LIMIT 1",
     [('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11x',)]),
    ('DROP TABLE ut',
     'DROP TABLE'),
    ("SELECT substr('hello', 2, 3), substr('hello', 0, 3), substr('hello', -5, 3), substr('hello', 3), substring('hello' from 2 for 2), substring('hello' from 4), substr('héllo', 2, 2)",
     [('ell', 'he', '', 'llo', 'el', 'lo', 'él')]),
    ("SELECT substr('hello', 2, -1)",
     ('22011', 'negative substring length not allowed', None, None)),
    ("SELECT substr('hello', 10), substr(NULL, 1), substr('abc', 1, NULL)",
     [('', None, None)]),
    ("SELECT pg_typeof(1), pg_typeof('a'::varchar(3)), pg_typeof(now()), pg_typeof(ARRAY[1])",
     [('integer', 'character varying', 'timestamp with time zone', 'integer[]')]),
]


def test_uuid_answers_as_postgresql(conn):
    """uuid: a key, an indexed and an array column; its input forms (braces, upper
    case, no hyphens, a hyphen after any four digits) and errors; comparisons, text
    casts, gen_random_uuid (version 4), no min/max; the catalogs' view of it; also
    substring/substr and pg_typeof. Every expectation is PostgreSQL 15's."""
    run_steps(conn, UUIDS)


INTERVALS = [
    ("SELECT interval '1 day', interval '2 days 3 hours', interval '1 year 2 months 3 days 04:05:06.789', interval '-1 day 2 hours', interval '1 day -2 hours'",
     [(dt.timedelta(days=1), dt.timedelta(days=2, seconds=10800), dt.timedelta(days=428, seconds=14706, microseconds=789000), dt.timedelta(days=-1, seconds=7200), dt.timedelta(seconds=79200))]),
    ("SELECT '0'::interval, '90 minutes'::interval, '1.5 months'::interval, '1 week ago'::interval, '@ 3 mins 4 secs'::interval, 'P1Y2M3DT4H5M6S'::interval, '-01:02:03'::interval",
     [(dt.timedelta(0), dt.timedelta(seconds=5400), dt.timedelta(days=45), dt.timedelta(days=-7), dt.timedelta(seconds=184), dt.timedelta(days=428, seconds=14706), dt.timedelta(days=-1, seconds=82677))]),
    ("SELECT '1 day 100000 seconds'::interval, '10 days 3600.000000 seconds'::interval, '1 day 1:00:00'::interval, '0:00:00.000005'::interval",
     [(dt.timedelta(days=2, seconds=13600), dt.timedelta(days=10, seconds=3600), dt.timedelta(days=1, seconds=3600), dt.timedelta(microseconds=5))]),
    ("SELECT 'xyz'::interval",
     ('22007', 'invalid input syntax for type interval: "xyz"', None, None)),
    ("SELECT '1 fortnight'::interval",
     ('22007', 'invalid input syntax for type interval: "1 fortnight"', None, None)),
    ("SELECT interval '1 mon' = interval '30 days', interval '1 day' = interval '24 hours', interval '1 day' < interval '25 hours', interval '1 year' > interval '360 days'",
     [(True, True, True, False)]),
    ("SELECT timestamp '2024-01-31 10:00' + interval '1 month', timestamp '2024-03-31' - interval '1 mon', date '2024-01-01' + interval '36 hours', date '2024-03-01' - interval '1 day'",
     [(dt.datetime(2024, 2, 29, 10, 0), dt.datetime(2024, 2, 29, 0, 0), dt.datetime(2024, 1, 2, 12, 0), dt.datetime(2024, 2, 29, 0, 0))]),
    ("SELECT timestamptz '2024-01-01 00:00+00' + interval '1 day 2 hours', interval '2 hours' + timestamp '2024-01-01'",
     [(dt.datetime(2024, 1, 2, 2, 0, tzinfo=dt.timezone.utc), dt.datetime(2024, 1, 1, 2, 0))]),
    ("SELECT timestamp '2024-01-02 03:04:05' - timestamp '2024-01-01', timestamp '2024-01-01' - timestamp '2024-01-02 03:00', timestamptz '2024-03-01 00:00+00' - timestamptz '2024-01-01 00:00+00'",
     [(dt.timedelta(days=1, seconds=11045), dt.timedelta(days=-2, seconds=75600), dt.timedelta(days=60))]),
    ("SELECT interval '1 day' * 2, 2 * interval '1 hour', interval '1 day' / 3, interval '1 mon' * 1.5, interval '1 day' + interval '3 hours', interval '1 day' - interval '3 hours', - interval '1 day 2 hours'",
     [(dt.timedelta(days=2), dt.timedelta(seconds=7200), dt.timedelta(seconds=28800), dt.timedelta(days=45), dt.timedelta(days=1, seconds=10800), dt.timedelta(seconds=75600), dt.timedelta(days=-2, seconds=79200))]),
    ("SELECT interval '1 day' / 0",
     ('22012', 'division by zero', None, None)),
    ('DROP TABLE IF EXISTS ivt',
     'DROP TABLE'),
    ('CREATE TABLE ivt (id int PRIMARY KEY, d interval, ds interval[])',
     'CREATE TABLE'),
    ("INSERT INTO ivt VALUES (1, '1 day', ARRAY[interval '1 hour', interval '2 days']), (2, '24 hours', NULL), (3, '-1 mon', '{}'), (4, NULL, NULL)",
     'INSERT 0 4'),
    ('SELECT * FROM ivt ORDER BY d, id',
     [(3, dt.timedelta(days=-30), []), (1, dt.timedelta(days=1), [dt.timedelta(seconds=3600), dt.timedelta(days=2)]), (2, dt.timedelta(days=1), None), (4, None, None)]),
    ("SELECT id FROM ivt WHERE d = interval '1 day' ORDER BY id",
     [(1,), (2,)]),
    ('SELECT count(DISTINCT d) FROM ivt',
     [(2,)]),
    ('SELECT d::text FROM ivt ORDER BY id',
     [('1 day',), ('24:00:00',), ('-1 mons',), (None,)]),
    ("SELECT data_type FROM information_schema.columns WHERE table_name = 'ivt' ORDER BY ordinal_position",
     [('integer',), ('interval',), ('ARRAY',)]),
    ("SELECT pg_typeof(now() - now()), pg_typeof(date '2024-01-01' - interval '1 day')",
     [('interval', 'timestamp without time zone')]),
    ('DROP TABLE ivt',
     'DROP TABLE'),
    # SQL's forms, and a qualifier: a bare number counts the last field's units, the
    # parts below it are cleared, SECOND(p) rounds.
    ("SELECT '1-2'::interval::text, '-1-2'::interval::text, '3 4:05:06'::interval::text",
     [('1 year 2 mons', '-1 years -2 mons', '3 days 04:05:06')]),
    ("SELECT (interval '1' day)::text, (interval '90' minute)::text, (interval '1.5' hour)::text,"
     " (interval '-1.5' hour)::text, (interval '1-2' year to month)::text",
     [('1 day', '01:30:00', '01:00:00', '-01:00:00', '1 year 2 mons')]),
    ("SELECT (interval '1 year 5 months 3 days' year)::text, (interval '1 year 5 months 3 days' month)::text,"
     " (interval '2 days 10:30:15.5' day to minute)::text, (interval '3 4:05:06' day to second)::text,"
     " (interval '1.23456' second(2))::text, (interval '10' second)::text",
     [('1 year', '1 year 5 mons', '2 days 10:30:00', '3 days 04:05:06', '00:00:01.23', '00:00:10')]),
    ("SELECT interval '1' hour to day",
     ('42601', 'syntax error at or near "day"')),
]


def test_interval_answers_as_postgresql(conn):
    """interval: PostgreSQL's input forms (units, fractions carried down, times, `ago`,
    `@`, ISO 8601) and output style, comparison by span (a month as 30 days), timestamp
    and date arithmetic on the calendar, scaling, keys and arrays. Every expectation is
    PostgreSQL 15's."""
    run_steps(conn, INTERVALS)


EXTRACTS = [
    ("SELECT extract(second from timestamp '2024-03-05 06:07:08.5'), extract(epoch from timestamp '2024-03-05 06:07:08.5'), extract(millisecond from timestamp '2024-03-05 06:07:08.5'), extract(microseconds from timestamp '2024-03-05 06:07:08.5')",
     [(Decimal('8.500000'), Decimal('1709618828.500000'), Decimal('8500.000'), Decimal('8500000'))]),
    ("SELECT extract(year from date '2024-03-05'), extract(epoch from date '2024-03-05'), extract(week from date '2024-03-05'), extract(dow from date '2024-03-05'), extract(doy from date '2024-03-05'), extract(isodow from date '2024-03-10')",
     [(Decimal('2024'), Decimal('1709596800'), Decimal('10'), Decimal('2'), Decimal('65'), Decimal('7'))]),
    ("SELECT extract(epoch from interval '1 year 2 mons 3 days 04:05:06.5'), extract(hour from interval '27 hours'), extract(month from interval '14 mons'), extract(minute from interval '-90 minutes')",
     [(Decimal('37015506.500000'), Decimal('27'), Decimal('2'), Decimal('-30'))]),
    ("SELECT extract(century from date '2000-01-01'), extract(millennium from date '2001-01-01'), extract(decade from date '2024-01-01'), extract(quarter from date '2024-05-01'), extract(isoyear from date '2024-12-30'), extract(week from date '2021-01-03'), extract(isoyear from date '2021-01-03')",
     [(Decimal('20'), Decimal('3'), Decimal('202'), Decimal('2'), Decimal('2025'), Decimal('53'), Decimal('2020'))]),
    ("SELECT date_part('year', timestamp '2024-03-05'), date_part('epoch', timestamp '2024-03-05 00:00:00.25'), extract(julian from date '2024-03-05'), extract(julian from timestamp '2024-03-05 12:00')",
     [(2024.0, 1709596800.25, Decimal('2460375'), Decimal('2460375.50000000000000000000'))]),
    ("SELECT extract(hour from date '2024-03-05')",
     ('0A000', 'unit "hour" not supported for type date', None, None)),
    ("SELECT extract(foo from date '2024-03-05')",
     ('22023', 'unit "foo" not recognized for type date', None, None)),
    ("SELECT extract(dow from interval '1 day')",
     ('0A000', 'unit "dow" not supported for type interval', None, None)),
    ("SELECT extract(epoch from timestamptz '2024-01-01 00:00+00'), extract(timezone from timestamptz '2024-01-01 00:00+00'), extract(hour from timestamptz '2024-01-01 05:00+00'), extract(second from interval '-1.5 seconds')",
     [(Decimal('1704067200.000000'), Decimal('0'), Decimal('5'), Decimal('-1.500000'))]),
    ("SELECT extract(year from timestamp '0001-06-01 BC'), extract(day from '2024-02-29 10:00+00')",
     ('42725', 'function pg_catalog.extract(unknown, unknown) is not unique', None, None)),
    ('SELECT extract(day from 5)',
     ('42883', 'function pg_catalog.extract(unknown, integer) does not exist', None, None)),
    ('DROP TABLE IF EXISTS exd',
     'DROP TABLE'),
    ('CREATE TABLE exd (id int PRIMARY KEY, d interval)',
     'CREATE TABLE'),
    ("INSERT INTO exd VALUES (1, '1 day'), (2, '2 hours'), (3, NULL), (4, '1 mon')",
     'INSERT 0 4'),
    ('SELECT sum(d), avg(d), count(d) FROM exd',
     [(dt.timedelta(days=31, seconds=7200), dt.timedelta(days=10, seconds=31200), 3)]),
    ('SELECT sum(d) FROM exd WHERE id > 10',
     [(None,)]),
    ('SELECT id, sum(d) OVER (ORDER BY id) FROM exd ORDER BY id',
     [(1, dt.timedelta(days=1)), (2, dt.timedelta(days=1, seconds=7200)), (3, dt.timedelta(days=1, seconds=7200)), (4, dt.timedelta(days=31, seconds=7200))]),
    ('DROP TABLE exd',
     'DROP TABLE'),
    ("SELECT extract(year from timestamp '0001-06-01 BC'), extract(century from date '0100-01-01 BC'), extract(day from timestamptz '2024-02-29 10:00+00')",
     [(Decimal('-1'), Decimal('-1'), Decimal('29'))]),
]


def test_extract_date_part_and_interval_aggregates_answer_as_postgresql(conn):
    """EXTRACT (numeric, with PostgreSQL's scales) and date_part (double precision) of
    timestamps, dates and intervals, their errors, and sum/avg over intervals (as
    aggregates and as window functions). Every expectation is PostgreSQL 15's."""
    run_steps(conn, EXTRACTS)
