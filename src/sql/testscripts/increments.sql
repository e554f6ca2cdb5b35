-- Increments deferred to commit: UPDATE ... SET c = c + e WHERE <key> = ... in an explicit
-- READ COMMITTED transaction shares its row with other increments instead of waiting.
-- A statement defers only once a transaction that ran it has committed without touching
-- its table again, so each session first runs its statements once ("warm-up").
create table counters (id int primary key, n int not null, note text);
insert into counters values (1, 0, 'a'), (2, 100, 'b');

-- session 1
begin;
update counters set n = n + 0 where id = 1;
update counters set n = n - 0 where id = 1;
commit;
-- session 2
begin;
update counters set n = n + 0 where id = 1;
commit;
-- session 3
begin;
update counters set n = 0 + n where id = 1;
update counters set n = n - 0 where id = 1;
commit;

-- session 1
begin;
update counters set n = n + 1 where id = 1;
-- session 2
begin;
-- Shares row 1 with session 1 without waiting (a script would hang on a wait).
update counters set n = n + 10 where id = 1;
-- session 3
begin;
update counters set n = 100 + n where id = 1;
-- session 4
select n from counters where id = 1;
-- session 1
commit;
-- session 3
commit;
-- session 4
select n from counters where id = 1;
-- session 2
-- Reading its row (once no other transaction holds it) first applies its increment to
-- the latest version: it sees what it will commit.
select n from counters where id = 1;
update counters set n = n + 1 where id = 1;
select id, n, note from counters order by id;
commit;
-- session 4
select id, n, note from counters order by id;

-- A transaction that rolls back takes only its own increments with it.
-- session 3
begin;
update counters set n = n - 1000 where id = 2;
-- session 1
begin;
update counters set n = n - 1 where id = 2;
update counters set n = n - 1 where id = 2;
-- session 3
rollback;
-- session 1
commit;
-- session 4
select id, n from counters order by id;

-- Errors show at the statement, against the latest version.
-- session 4
begin;
update counters set n = n + 2147483647 where id = 2;
rollback;
begin;
update counters set n = n + null where id = 2;
rollback;

-- An increment joins without waiting only if the row stays in range whichever of the
-- other pending increments commit (one that could overflow waits for them, as an UPDATE
-- waits for a row lock: tests/python/test_isolation.py), so a COMMIT never fails on one.
-- session 1
begin;
update counters set n = n - 2147483648 where id = 99;
commit;
-- session 3
begin;
update counters set n = n - 10 where id = 1;
-- session 1
begin;
update counters set n = n - 2147483000 where id = 1;
commit;
-- session 3
commit;
-- session 4
select id, n from counters order by id;

-- Rows a statement does not see are not held; other shapes run the ordinary way.
-- session 4
begin;
update counters set n = n + 1 where id = 3;
update counters set n = n + 1 where id = 2 returning n;
update counters set n = n + 1 where id = 2 and n > 0;
update counters set n = n * 2 where id = 2;
commit;
select id, n from counters order by id;

-- A statement that does not defer, on a row with a deferred increment, first applies it.
-- session 5
begin;
update counters set n = n + 0 where id = 2;
commit;
begin;
update counters set n = n + 10 where id = 2;
update counters set n = n - 3 where id = 2;
update counters set n = n * 1 where id = 2;
select id, n from counters where id = 2;
commit;
select id, n from counters where id = 2;
