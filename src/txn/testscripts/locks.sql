-- Row locks: FOR UPDATE waits, NOWAIT and SKIP LOCKED do not, FOR SHARE holders share,
-- and a wait that closes a cycle fails with 40P01.
-- session 1
create table jobs (id int primary key, state text not null);
insert into jobs values (1, 'new'), (2, 'new'), (3, 'new');
begin;
select id from jobs where id = 1 for update;
-- session 2
begin;
select id from jobs where id = 1 for update nowait;
rollback;
begin;
select id from jobs order by id for update skip locked;
-- session 3
begin;
select id from jobs where id = 3 for share;
-- session 2
rollback;
-- session 3
select id from jobs where id = 1 for share;
-- session 1
update jobs set state = 'done' where id = 1;
commit;
-- session 3
commit;
-- Deadlock: each waits for the other's row.
-- session 1
begin;
update jobs set state = 'a' where id = 2;
-- session 2
begin;
update jobs set state = 'b' where id = 3;
update jobs set state = 'b' where id = 2;
-- session 1
update jobs set state = 'a' where id = 3;
commit;
-- session 2
rollback;
-- session 1
select * from jobs order by id;
