"""Window functions: frames (ROWS and GROUPS with offsets; RANGE with offsets over
integers, numerics, floats, dates and timestamps, NULL keys, descending order, bounds
past the type's range) and their errors, lag / lead / first_value / last_value /
nth_value, ntile, percent_rank, cume_dist, aggregates over frames, named windows,
avg's result scale, and windows over a grouped query's groups. Every expectation is
PostgreSQL 15's."""

from __future__ import annotations

from decimal import Decimal

from conftest import run_steps

STEPS = [
    ('drop table if exists wn',
     'DROP TABLE'),
    ('create table wn (id int primary key, g text, v int)',
     'CREATE TABLE'),
    ("insert into wn values (1,'a',10),(2,'a',20),(3,'a',20),(4,'a',40),(5,'b',5),(6,'b',null),(7,'b',7),(8,'c',1)",
     'INSERT 0 8'),
    ('select id, sum(v) over (order by id rows between 1 preceding and 1 following) from wn order by id',
     [(1, 30), (2, 50), (3, 80), (4, 65), (5, 45), (6, 12), (7, 8), (8, 8)]),
    ('select id, sum(v) over (partition by g order by v rows unbounded preceding) from wn order by id',
     [(1, 10), (2, 30), (3, 50), (4, 90), (5, 5), (6, 12), (7, 12), (8, 1)]),
    ('select id, avg(v) over (partition by g order by id rows between current row and unbounded following) from wn order by id',
     [(1, Decimal('22.5000000000000000')), (2, Decimal('26.6666666666666667')), (3, Decimal('30.0000000000000000')), (4, Decimal('40.0000000000000000')), (5, Decimal('6.0000000000000000')), (6, Decimal('7.0000000000000000')), (7, Decimal('7.0000000000000000')), (8, Decimal('1.00000000000000000000'))]),
    ('select id, count(*) over (order by v range between unbounded preceding and current row) from wn order by id',
     [(1, 4), (2, 6), (3, 6), (4, 7), (5, 2), (6, 8), (7, 3), (8, 1)]),
    ('select id, count(v) over (order by v range between current row and unbounded following) from wn order by id',
     [(1, 4), (2, 3), (3, 3), (4, 1), (5, 6), (6, 0), (7, 5), (8, 7)]),
    ('select id, sum(v) over (order by v groups between 1 preceding and 1 following) from wn order by id',
     [(1, 57), (2, 90), (3, 90), (4, 80), (5, 13), (6, 40), (7, 22), (8, 6)]),
    ('select id, sum(v) over (order by v groups between current row and 2 following) from wn order by id',
     [(1, 90), (2, 80), (3, 80), (4, 40), (5, 22), (6, None), (7, 57), (8, 13)]),
    ('select id, sum(v) over (order by id rows between 3 preceding and 1 preceding) from wn order by id',
     [(1, None), (2, 10), (3, 30), (4, 50), (5, 80), (6, 65), (7, 45), (8, 12)]),
    ('select id, sum(v) over (order by id rows between 1 following and 3 following) from wn order by id',
     [(1, 80), (2, 65), (3, 45), (4, 12), (5, 8), (6, 8), (7, 1), (8, None)]),
    ('select id, lag(v) over (order by id), lead(v) over (order by id), lag(v, 2, -1) over (partition by g order by id), lead(v, 2, 0) over (partition by g order by id) from wn order by id',
     [(1, None, 20, -1, 20), (2, 10, 20, -1, 40), (3, 20, 40, 10, 0), (4, 20, 5, 20, 0), (5, 40, None, -1, 7), (6, 5, 7, -1, 0), (7, None, 1, 5, 0), (8, 7, None, -1, 0)]),
    ('select id, first_value(v) over w, last_value(v) over w, nth_value(v, 2) over w from wn window w as (partition by g order by id) order by id',
     [(1, 10, 10, None), (2, 10, 20, 20), (3, 10, 20, 20), (4, 10, 40, 20), (5, 5, 5, None), (6, 5, None, None), (7, 5, 7, None), (8, 1, 1, None)]),
    ('select id, first_value(v) over (partition by g order by id), last_value(v) over (partition by g order by id rows between unbounded preceding and unbounded following), nth_value(v, 2) over (partition by g order by id rows between unbounded preceding and unbounded following) from wn order by id',
     [(1, 10, 40, 20), (2, 10, 40, 20), (3, 10, 40, 20), (4, 10, 40, 20), (5, 5, 7, None), (6, 5, 7, None), (7, 5, 7, None), (8, 1, 1, None)]),
    ('select id, ntile(3) over (order by id), ntile(5) over (partition by g order by id), ntile(20) over (order by id) from wn order by id',
     [(1, 1, 1, 1), (2, 1, 2, 2), (3, 1, 3, 3), (4, 2, 4, 4), (5, 2, 1, 5), (6, 2, 2, 6), (7, 3, 3, 7), (8, 3, 1, 8)]),
    ('select id, percent_rank() over (order by v), cume_dist() over (order by v), rank() over (order by v), dense_rank() over (order by v) from wn order by id',
     [(1, 0.42857142857142855, 0.5, 4, 4), (2, 0.5714285714285714, 0.75, 5, 5), (3, 0.5714285714285714, 0.75, 5, 5), (4, 0.8571428571428571, 0.875, 7, 6), (5, 0.14285714285714285, 0.25, 2, 2), (6, 1.0, 1.0, 8, 7), (7, 0.2857142857142857, 0.375, 3, 3), (8, 0.0, 0.125, 1, 1)]),
    ('select id, array_agg(id) over (partition by g order by id rows between 1 preceding and current row), bool_and(v > 5) over (order by id) from wn order by id',
     [(1, [1], True), (2, [1, 2], True), (3, [2, 3], True), (4, [3, 4], True), (5, [5], False), (6, [5, 6], False), (7, [6, 7], False), (8, [8], False)]),
    ('select id, jsonb_agg(v) over (partition by g)::text from wn order by id',
     [(1, '[10, 20, 20, 40]'), (2, '[10, 20, 20, 40]'), (3, '[10, 20, 20, 40]'), (4, '[10, 20, 20, 40]'), (5, '[5, null, 7]'), (6, '[5, null, 7]'), (7, '[5, null, 7]'), (8, '[1]')]),
    ('select id, lag(id, -1) over (order by id), lead(g) over (order by id) from wn order by id',
     [(1, 2, 'a'), (2, 3, 'a'), (3, 4, 'a'), (4, 5, 'b'), (5, 6, 'b'), (6, 7, 'b'), (7, 8, 'c'), (8, None, None)]),
    ('select sum(v) over (rows between unbounded following and current row) from wn',
     ('42P20', 'frame start cannot be UNBOUNDED FOLLOWING', None, None)),
    ('select sum(v) over (rows between current row and 1 preceding) from wn',
     ('42P20', 'frame starting from current row cannot have preceding rows', None, None)),
    ('select sum(v) over (rows between 1 following and current row) from wn',
     ('42P20', 'frame starting from following row cannot have preceding rows', None, None)),
    ('select sum(v) over (order by id rows between -1 preceding and current row) from wn',
     ('22013', 'frame starting offset must not be negative', None, None)),
    ('select ntile(0) over () from wn',
     ('22014', 'argument of ntile must be greater than zero', None, None)),
    ('select nth_value(v, 0) over () from wn',
     ('22016', 'argument of nth_value must be greater than zero', None, None)),
    ('select id, sum(v) over (order by id rows 2 preceding) from wn order by id',
     [(1, 10), (2, 30), (3, 50), (4, 80), (5, 65), (6, 45), (7, 12), (8, 8)]),
    ('select id, count(*) over (partition by g rows between unbounded preceding and unbounded following) from wn order by id',
     [(1, 4), (2, 4), (3, 4), (4, 4), (5, 3), (6, 3), (7, 3), (8, 1)]),
    ('select avg(x) from (values (1), (1)) t(x)',
     [(Decimal('1.00000000000000000000'),)]),
    ('select avg(x) from (values (1.5), (0.25)) t(x)',
     [(Decimal('0.87500000000000000000'),)]),
    ('select avg(x) from (values (10001), (3)) t(x)',
     [(Decimal('5002.0000000000000000'),)]),
    ('drop table wn',
     'DROP TABLE'),
]


def test_window_functions(server):
    with server.connect() as c:
        c.execute("drop table if exists wn")
        try:
            run_steps(c, STEPS)
        finally:
            c.execute("drop table if exists wn")


RANGE_STEPS = [
    ('drop table if exists wr',
     'DROP TABLE'),
    ('create table wr (id int primary key, g text, v int, n numeric, d date, t timestamp, f float8)',
     'CREATE TABLE'),
    ("insert into wr values (1,'a',1,1.5,'2024-01-01','2024-01-01 10:00',1.0),(2,'a',2,2.5,'2024-01-03','2024-01-01 11:00',2.5),(3,'a',2,null,'2024-01-10','2024-01-02 10:00',null),(4,'a',5,4.0,null,null,4.0),(5,'b',null,1.0,'2024-02-01','2024-01-01 10:30',1.0),(6,'b',10,10.0,'2024-02-02','2024-01-01 10:45',9.5),(7,'b',null,null,'2024-02-05',null,2.0),(8,'b',11,11.5,'2024-02-01','2024-01-01 12:00',10.0)",
     'INSERT 0 8'),
    ('select id, sum(id) over (order by v range between 1 preceding and 1 following) from wr order by id',
     [(1, 6), (2, 6), (3, 6), (4, 4), (5, 12), (6, 14), (7, 12), (8, 14)]),
    ('select id, sum(id) over (partition by g order by v desc range between 1 preceding and current row) from wr order by id',
     [(1, 6), (2, 5), (3, 5), (4, 4), (5, 12), (6, 14), (7, 12), (8, 8)]),
    ('select id, count(*) over (order by v nulls first range between current row and 3 following) from wr order by id',
     [(1, 3), (2, 3), (3, 3), (4, 1), (5, 2), (6, 2), (7, 2), (8, 1)]),
    ('select id, sum(id) over (order by n range between 1.0 preceding and 0.5 following) from wr order by id',
     [(1, 6), (2, 3), (3, 10), (4, 4), (5, 6), (6, 6), (7, 10), (8, 8)]),
    ("select id, count(*) over (order by d range between interval '3 days' preceding and current row) from wr order by id",
     [(1, 1), (2, 2), (3, 1), (4, 1), (5, 2), (6, 3), (7, 2), (8, 2)]),
    ("select id, count(*) over (order by t desc range between interval '1 hour' preceding and interval '30 minutes' following) from wr order by id",
     [(1, 4), (2, 4), (3, 1), (4, 2), (5, 4), (6, 3), (7, 2), (8, 1)]),
    ('select id, sum(id) over (order by f range between 1 preceding and 1 following) from wr order by id',
     [(1, 13), (2, 9), (3, 3), (4, 4), (5, 13), (6, 14), (7, 15), (8, 14)]),
    ('select id, first_value(id) over (order by v range between 2 following and 5 following), last_value(id) over (order by v range between unbounded preceding and 1 preceding) from wr where v is not null order by id',
     [(1, 4, None), (2, 4, 1), (3, 4, 1), (4, 6, 3), (6, None, 4), (8, None, 6)]),
    ('select id, sum(id) over (order by v range between 2147483647 preceding and 2147483647 following) from wr order by id',
     [(1, 24), (2, 24), (3, 24), (4, 24), (5, 12), (6, 24), (7, 12), (8, 24)]),
    ('select sum(id) over (order by v, id range 1 preceding) from wr',
     ('42P20', 'RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column', None, None)),
    ('select sum(id) over (order by g range 1 preceding) from wr',
     ('0A000', 'RANGE with offset PRECEDING/FOLLOWING is not supported for column type text', None, None)),
    ('select sum(id) over (order by v range -1 preceding) from wr',
     ('22013', 'invalid preceding or following size in window function', None, None)),
    ('select sum(id) over (order by v range null preceding) from wr',
     ('22004', 'frame starting offset must not be null', None, None)),
    ('select id, sum(id) over (order by v groups between 1 preceding and 1 following) from wr order by id',
     [(1, 6), (2, 10), (3, 10), (4, 15), (5, 20), (6, 18), (7, 20), (8, 26)]),
    ('drop table wr',
     'DROP TABLE'),
]


def test_range_frames_with_offsets(server):
    with server.connect() as c:
        c.execute("drop table if exists wr")
        try:
            run_steps(c, RANGE_STEPS)
        finally:
            c.execute("drop table if exists wr")


# Windows over a grouped query's groups: their arguments, PARTITION BY and ORDER BY are
# the groups' keys and aggregates, computed after HAVING.
GROUPED_STEPS = [
    ('drop table if exists wg', 'DROP TABLE'),
    ('create table wg (a int, b int, c text)', 'CREATE TABLE'),
    ("insert into wg values (1,1,'x'),(1,2,'y'),(2,3,'x'),(3,5,'z'),(3,1,'z'),(4,10,'x')",
     'INSERT 0 6'),
    ('select a, count(*), rank() over (order by count(*) desc) from wg group by a order by a',
     [(1, 2, 1), (2, 1, 3), (3, 2, 1), (4, 1, 3)]),
    ('select a, sum(b), sum(sum(b)) over () as total, sum(b) * 100 / sum(sum(b)) over () as pct from wg group by a order by a',
     [(1, 3, Decimal('22'), Decimal('13.6363636363636364')), (2, 3, Decimal('22'), Decimal('13.6363636363636364')), (3, 6, Decimal('22'), Decimal('27.2727272727272727')), (4, 10, Decimal('22'), Decimal('45.4545454545454545'))]),
    ('select c, count(*), row_number() over (order by c desc), lag(count(*)) over (order by c) from wg group by c order by c',
     [('x', 3, 3, None), ('y', 1, 2, 3), ('z', 2, 1, 1)]),
    ('select a, max(b), dense_rank() over (partition by max(b) > 2 order by a) from wg group by a having count(*) > 0 order by 3, 1',
     [(1, 2, 1), (2, 3, 1), (3, 5, 2), (4, 10, 3)]),
    ('select rank() over (order by count(*)), count(*) from wg',
     [(1, 6)]),
    ('select count(*), sum(count(*)) over () from wg',
     [(6, Decimal('6'))]),
    ('select a, avg(b)::numeric(10,2), first_value(a) over w, last_value(a) over w from wg group by a window w as (order by avg(b) rows between unbounded preceding and unbounded following) order by a',
     [(1, Decimal('1.50'), 1, 4), (2, Decimal('3.00'), 1, 4), (3, Decimal('3.00'), 1, 4), (4, Decimal('10.00'), 1, 4)]),
    ('select a, count(*), rank() over (order by count(*) desc) r from wg group by a order by r, a limit 2',
     [(1, 2, 1), (3, 2, 1)]),
    ('select a, b, count(*) over (partition by a) from wg group by a, b order by 1, 2',
     [(1, 1, 2), (1, 2, 2), (2, 3, 1), (3, 1, 2), (3, 5, 2), (4, 10, 1)]),
    ("select a, string_agg(c, ',' order by c), ntile(2) over (order by a) from wg where b < 10 group by a order by a",
     [(1, 'x,y', 1), (2, 'x', 1), (3, 'z,z', 2)]),
    ('select a, sum(b) over (), count(*) from wg group by a',
     ('42803', 'column "wg.b" must appear in the GROUP BY clause or be used in an aggregate function', None, None)),
    ('select a, count(*) from wg group by a having rank() over () > 1',
     ('42P20', 'window functions are not allowed in HAVING', None, None)),
    ('select sum(rank() over ()) from wg',
     ('42803', 'aggregate function calls cannot contain window function calls', None, None)),
    ('select a, rank() over (order by b) from wg group by a',
     ('42803', 'column "wg.b" must appear in the GROUP BY clause or be used in an aggregate function', None, None)),
    ('drop table wg', 'DROP TABLE'),
]


def test_windows_over_groups(server):
    with server.connect(autocommit=True) as conn:
        run_steps(conn, GROUPED_STEPS)
