-- A waiter that resumes after a commit sees the whole of it: the next statement's
-- snapshot holds the commit's other rows too.
-- session 1
create table pair (k int primary key, v int not null);
insert into pair values (1, 0), (2, 0);
begin;
update pair set v = v + 1 where k = 2;
update pair set v = v + 1 where k = 1;
-- session 2
begin;
update pair set v = v where k = 1 returning v;
-- session 1
commit;
-- session 2
select v from pair where k = 2;
commit;
-- The same with a key claimed by an INSERT: 23505 after the wait, then the whole commit.
-- session 1
begin;
insert into pair values (3, 3);
update pair set v = 7 where k = 2;
-- session 2
insert into pair values (3, 0);
-- session 1
commit;
-- session 2
select * from pair order by k;
