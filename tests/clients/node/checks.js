// node-postgres checks: each prints one JSON line {"check", "ok", "detail"}.
// Connection from PGHOST, PGPORT, PGUSER, PGDATABASE; tables are prefixed by CLIENT_PREFIX.
"use strict";
const { Client } = require("pg");
const { from: copyFrom, to: copyTo } = require("pg-copy-streams");
const { pipeline } = require("stream/promises");
const { Readable, Writable } = require("stream");

const t = (process.env.CLIENT_PREFIX || "cm_node") + "_items";
const assertEq = (got, want, what) => {
  const g = JSON.stringify(got), w = JSON.stringify(want);
  if (g !== w) throw new Error(`${what}: got ${g}, want ${w}`);
};

const checks = {
  async connect(c) {
    const r = await c.query("select 1 as one");
    assertEq(r.rows, [{ one: 1 }], "select 1");
  },
  async types(c) {
    const r = await c.query(
      "select $1::int4 as i, $2::int8 as b, $3::numeric as n, $4::text as s, $5::bool as t," +
        " $6::timestamptz as ts, $7::bytea as by, $8::float8 as f, $9::date as d, $10::text as z",
      [42, "9007199254740993", "12.50", "héllo", true, "2024-01-02T03:04:05.123Z", Buffer.from([0, 1, 255]), 1.5, "2024-02-29", null]
    );
    const row = r.rows[0];
    assertEq([row.i, row.b, row.n, row.s, row.t, row.ts.toISOString(), [...row.by], row.f, row.z],
      [42, "9007199254740993", "12.50", "héllo", true, "2024-01-02T03:04:05.123Z", [0, 1, 255], 1.5, null], "values");
    assertEq(r.fields.map((f) => f.dataTypeID), [23, 20, 1700, 25, 16, 1184, 17, 701, 1082, 25], "type oids");
  },
  async prepared(c) {
    for (const [id, name] of [[1, "a"], [2, "b"], [3, "c"]]) {
      await c.query({ name: "ins", text: `insert into ${t} (id, name) values ($1, $2)`, values: [id, name] });
    }
    const r = await c.query({ name: "get", text: `select name from ${t} where id = $1`, values: [2] });
    assertEq(r.rows, [{ name: "b" }], "prepared select");
  },
  async batch(c) {
    await c.query("begin");
    for (let i = 10; i < 110; i++) await c.query(`insert into ${t} (id, name) values ($1, $2)`, [i, `n${i}`]);
    await c.query("commit");
    const r = await c.query(`select count(*)::int as n from ${t} where id >= 10`);
    assertEq(r.rows, [{ n: 100 }], "count");
  },
  async transaction_savepoint(c) {
    await c.query("begin");
    await c.query(`insert into ${t} (id, name) values (200, 'kept')`);
    await c.query("savepoint s1");
    await c.query(`insert into ${t} (id, name) values (201, 'undone')`);
    await c.query("rollback to savepoint s1");
    await c.query("commit");
    const r = await c.query(`select id from ${t} where id >= 200 order by id`);
    assertEq(r.rows, [{ id: 200 }], "rows after commit");
  },
  async error_fields(c) {
    try {
      await c.query(`insert into ${t} (id, name) values (1, 'dup')`);
      throw new Error("no error");
    } catch (e) {
      assertEq([e.code, e.constraint, e.table, e.schema], ["23505", `${t}_pkey`, t, "public"], "fields");
    }
  },
  async metadata(c) {
    const r = await c.query(
      "select column_name, data_type, is_nullable from information_schema.columns where table_name = $1 order by ordinal_position",
      [t]
    );
    assertEq(r.rows.map((x) => [x.column_name, x.data_type, x.is_nullable]),
      [["id", "integer", "NO"], ["name", "text", "YES"], ["tags", "ARRAY", "YES"]], "columns");
  },
  async arrays(c) {
    await c.query(`update ${t} set tags = $1 where id = 1`, [["x", "y z", null]]);
    const r = await c.query(`select tags, array[1,2]::int[] as nums from ${t} where id = 1`);
    assertEq(r.rows, [{ tags: ["x", "y z", null], nums: [1, 2] }], "arrays");
  },
  async copy_in(c) {
    const stream = c.query(copyFrom(`copy ${t} (id, name) from stdin`));
    await pipeline(Readable.from(["1000\tcopied\n", "1001\t\\N\n"]), stream);
    const r = await c.query(`select id, name from ${t} where id >= 1000 order by id`);
    assertEq(r.rows, [{ id: 1000, name: "copied" }, { id: 1001, name: null }], "copied rows");
  },
  async copy_out(c) {
    const chunks = [];
    const stream = c.query(copyTo(`copy (select id, name from ${t} where id in (1, 2) order by id) to stdout with (format csv)`));
    await pipeline(stream, new Writable({ write(chunk, _e, cb) { chunks.push(chunk); cb(); } }));
    assertEq(Buffer.concat(chunks).toString(), "1,a\n2,b\n", "csv");
  },
};

(async () => {
  const c = new Client();
  await c.connect();
  await c.query(`drop table if exists ${t}`);
  await c.query(`create table ${t} (id int primary key, name text, tags text[])`);
  for (const [name, f] of Object.entries(checks)) {
    try {
      await f(c);
      console.log(JSON.stringify({ check: name, ok: true }));
    } catch (e) {
      console.log(JSON.stringify({ check: name, ok: false, detail: String(e.message || e) }));
      try { await c.query("rollback"); } catch (_) {}
    }
  }
  await c.query(`drop table if exists ${t}`);
  await c.end();
})().catch((e) => {
  console.log(JSON.stringify({ check: "connect", ok: false, detail: String(e.message || e) }));
  process.exit(0);
});
