"""Joins against a reference model: random tables with NULLs, random chains of inner,
left, right, full and cross joins with random conditions and WHERE clauses, each query's
rows compared with what a nested-loop join in Python gives under SQL's three-valued logic.
A failing seed is printed and replays."""

from __future__ import annotations

import random

import pytest

pytestmark = pytest.mark.steadydb_only

SEEDS = range(12)
QUERIES_PER_SEED = 40


def eq(x, y):
    return None if x is None or y is None else x == y


def lt(x, y):
    return None if x is None or y is None else x < y


def and3(*vs):
    if any(v is False for v in vs):
        return False
    return None if any(v is None for v in vs) else True


def or3(*vs):
    if any(v is True for v in vs):
        return True
    return None if any(v is None for v in vs) else False


# Conditions between the first two tables: SQL text and the model's version over rows
# (each a dict of column values, all None for a null-extended side).
CONDS_12 = [
    ("f1.a = f2.a", lambda r: eq(r["f1"]["a"], r["f2"]["a"])),
    ("f1.id = f2.a", lambda r: eq(r["f1"]["id"], r["f2"]["a"])),
    ("f2.id = f1.a", lambda r: eq(r["f2"]["id"], r["f1"]["a"])),
    ("f1.a = f2.c", lambda r: eq(r["f1"]["a"], r["f2"]["c"])),
    ("f1.a < f2.a", lambda r: lt(r["f1"]["a"], r["f2"]["a"])),
    ("f1.a = f2.a and f2.c > 1", lambda r: and3(eq(r["f1"]["a"], r["f2"]["a"]), lt(1, r["f2"]["c"]))),
    ("f1.a = f2.a or f1.id = f2.id",
     lambda r: or3(eq(r["f1"]["a"], r["f2"]["a"]), eq(r["f1"]["id"], r["f2"]["id"]))),
    ("true", lambda r: True),
]
CONDS_3 = [
    ("f3.x = f2.a", lambda r: eq(r["f3"]["x"], r["f2"]["a"])),
    ("f3.y = f1.a", lambda r: eq(r["f3"]["y"], r["f1"]["a"])),
    ("f3.x = f1.id", lambda r: eq(r["f3"]["x"], r["f1"]["id"])),
    ("f3.x = f2.id and f3.y = f1.a", lambda r: and3(eq(r["f3"]["x"], r["f2"]["id"]), eq(r["f3"]["y"], r["f1"]["a"]))),
    ("f3.x is null", lambda r: r["f3"]["x"] is None),
]
WHERES = [
    ("", lambda r: True),
    ("where f1.a = 1", lambda r: eq(r["f1"]["a"], 1)),
    ("where f2.c is null", lambda r: r["f2"]["c"] is None),
    ("where f1.id > 3 and f2.a = f1.a", lambda r: and3(lt(3, r["f1"]["id"]), eq(r["f2"]["a"], r["f1"]["a"]))),
    ("where f3.y = 2", lambda r: eq(r["f3"]["y"], 2)),
    ("where f1.b is not null or f2.c = 2", lambda r: or3(r["f1"]["b"] is not None, eq(r["f2"]["c"], 2))),
]
KINDS = ["join", "left join", "right join", "full join", "cross join"]
COLUMNS = {"f1": ("id", "a", "b"), "f2": ("id", "a", "c"), "f3": ("x", "y")}


def join(left_rows, table, right_rows, kind, cond):
    """The model: a nested-loop join of the rows so far with `table`'s rows."""
    nulls = {c: None for c in COLUMNS[table]}
    out, matched = [], set()
    for lr in left_rows:
        any_match = False
        for i, rr in enumerate(right_rows):
            row = {**lr, table: rr}
            if kind == "cross join" or cond(row) is True:
                out.append(row)
                any_match = True
                matched.add(i)
        if not any_match and kind in ("left join", "full join"):
            out.append({**lr, table: nulls})
    if kind in ("right join", "full join"):
        left_nulls = {t: {c: None for c in COLUMNS[t]} for t in (left_rows[0] if left_rows else
                                                                    {"f1": None, "f2": None, "f3": None})
                      if t != table and t in COLUMNS}
        for i, rr in enumerate(right_rows):
            if i not in matched:
                out.append({**left_nulls, table: rr})
    return out


@pytest.mark.timeout(300)
@pytest.mark.parametrize("seed", SEEDS)
def test_joins_match_the_model(db, conn, seed):
    rnd = random.Random(seed)
    f1, f2, f3 = db.table("f1"), db.table("f2"), db.table("f3")
    names = {"f1": f1, "f2": f2, "f3": f3}
    conn.execute(f"create table {f1} (id int primary key, a int, b text)")
    conn.execute(f"create table {f2} (id int primary key, a int, c bigint)")
    conn.execute(f"create table {f3} (x int, y int)")
    data = {
        "f1": [dict(id=i, a=rnd.choice([None, 1, 2, 3]), b=rnd.choice([None, "p", "q"])) for i in range(1, 9)],
        "f2": [dict(id=i, a=rnd.choice([None, 1, 2, 3, 4]), c=rnd.choice([None, 1, 2, 5])) for i in range(1, 9)],
        "f3": [dict(x=rnd.choice([None, 1, 2, 3]), y=rnd.choice([None, 1, 2, 3])) for _ in range(8)],
    }
    for t, rows in data.items():
        cols = COLUMNS[t]
        conn.cursor().executemany(
            f"insert into {names[t]} values ({', '.join(['%s'] * len(cols))})",
            [tuple(r[c] for c in cols) for r in rows])
    for n in range(QUERIES_PER_SEED):
        k2, (c2, m2) = rnd.choice(KINDS), rnd.choice(CONDS_12)
        three = rnd.random() < 0.6
        sql = f"select f1.id, f2.id{', f3.x, f3.y' if three else ''} from f1"
        sql += f" {k2} f2" + ("" if k2 == "cross join" else f" on {c2}")
        rows = join([{"f1": r} for r in data["f1"]], "f2", data["f2"], k2, m2)
        if three:
            k3, (c3, m3) = rnd.choice(KINDS), rnd.choice(CONDS_3 + CONDS_12)
            sql += f" {k3} f3" + ("" if k3 == "cross join" else f" on {c3}")
            rows = join(rows, "f3", data["f3"], k3, m3)
        w, mw = rnd.choice([x for x in WHERES if three or "f3" not in x[0]])
        sql += f" {w}"
        rows = [r for r in rows if mw(r) is True]
        want = sorted(
            (tuple([r["f1"]["id"], r["f2"]["id"]] + ([r["f3"]["x"], r["f3"]["y"]] if three else []))
             for r in rows), key=repr)
        for short, full in names.items():
            sql = sql.replace(f"{short}.", f"{full}.").replace(f" {short} ", f" {full} ")
            if sql.endswith(f" {short}"):
                sql = sql[: -len(short)] + full
        got = sorted(conn.execute(sql).fetchall(), key=repr)
        assert got == want, f"seed {seed}, query {n}: {sql}"
