"""asyncpg checks against SteadyDB: each prints one JSON line {"check", "ok", "detail"}.
Connection from PGHOST, PGPORT, PGUSER, PGDATABASE; tables are prefixed by CLIENT_PREFIX."""

import asyncio
import datetime
import json
import os
from decimal import Decimal

import asyncpg

T = os.environ.get("CLIENT_PREFIX", "cm_asyncpg") + "_items"


def eq(got, want, what):
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")


async def connect(c):
    eq(await c.fetchval("select 1"), 1, "select 1")


async def types(c):
    ts = datetime.datetime(2024, 1, 2, 3, 4, 5, 123000, tzinfo=datetime.timezone.utc)
    row = await c.fetchrow(
        "select $1::int4, $2::int8, $3::numeric, $4::text, $5::bool, $6::timestamptz, $7::bytea,"
        " $8::float8, $9::date, $10::text",
        42, 9007199254740993, Decimal("12.50"), "héllo", True, ts, b"\x00\x01\xff", 1.5,
        datetime.date(2024, 2, 29), None,
    )
    eq(tuple(row), (42, 9007199254740993, Decimal("12.50"), "héllo", True, ts, b"\x00\x01\xff", 1.5,
                    datetime.date(2024, 2, 29), None), "values")


async def prepared(c):
    ins = await c.prepare(f"insert into {T} (id, name) values ($1, $2)")
    for i, name in enumerate("abc", start=1):
        await ins.fetch(i, name)
    get = await c.prepare(f"select name from {T} where id = $1")
    eq(await get.fetchval(2), "b", "prepared select")


async def batch(c):
    await c.executemany(f"insert into {T} (id, name) values ($1, $2)", [(i, f"n{i}") for i in range(10, 110)])
    eq(await c.fetchval(f"select count(*) from {T} where id >= 10"), 100, "count")


async def transaction_savepoint(c):
    async with c.transaction():
        await c.execute(f"insert into {T} (id, name) values (200, 'kept')")
        try:
            async with c.transaction():
                await c.execute(f"insert into {T} (id, name) values (201, 'undone')")
                raise RuntimeError("roll back the savepoint")
        except RuntimeError:
            pass
    eq([r["id"] for r in await c.fetch(f"select id from {T} where id >= 200 order by id")], [200], "rows")


async def error_fields(c):
    try:
        await c.execute(f"insert into {T} (id, name) values (1, 'dup')")
    except asyncpg.UniqueViolationError as e:
        eq((e.sqlstate, e.constraint_name, e.table_name, e.schema_name), ("23505", f"{T}_pkey", T, "public"), "fields")
    else:
        raise AssertionError("no error")


async def metadata(c):
    rows = await c.fetch(
        "select column_name, data_type from information_schema.columns where table_name = $1 order by ordinal_position", T)
    eq([tuple(r) for r in rows], [("id", "integer"), ("name", "text"), ("tags", "ARRAY")], "columns")


async def arrays(c):
    await c.execute(f"update {T} set tags = $1 where id = 1", ["x", "y z", None])
    eq(await c.fetchval(f"select tags from {T} where id = 1"), ["x", "y z", None], "tags")


async def copy_in(c):
    n = await c.copy_records_to_table(T, records=[(1000, "copied", ["a"]), (1001, None, None)], columns=["id", "name", "tags"])
    eq(n, "COPY 2", "copy status")
    eq(await c.fetchval(f"select name from {T} where id = 1000"), "copied", "copied row")


async def copy_out(c):
    out = []

    async def sink(chunk):
        out.append(bytes(chunk))

    await c.copy_from_query(f"select id, name from {T} where id in (1, 2) order by id", output=sink, format="csv")
    eq(b"".join(out), b"1,a\n2,b\n", "csv")


CHECKS = [connect, types, prepared, batch, transaction_savepoint, error_fields, metadata, arrays, copy_in, copy_out]


async def main():
    try:
        c = await asyncpg.connect()
    except Exception as e:  # noqa: BLE001 (reported, not raised)
        print(json.dumps({"check": "connect", "ok": False, "detail": repr(e)}))
        return
    await c.execute(f"drop table if exists {T}")
    await c.execute(f"create table {T} (id int primary key, name text, tags text[])")
    for check in CHECKS:
        try:
            await check(c)
            print(json.dumps({"check": check.__name__, "ok": True}))
        except Exception as e:  # noqa: BLE001 (reported, not raised)
            print(json.dumps({"check": check.__name__, "ok": False, "detail": repr(e)}))
    await c.execute(f"drop table if exists {T}")
    await c.close()


asyncio.run(main())
