-- REPEATABLE READ: a write to a row changed since the snapshot fails with 40001, after
-- waiting for the writer. SERIALIZABLE: write skew fails one transaction; Fekete's
-- read-only anomaly fails the pivot at its write; one rw edge alone commits.
-- session 1
create table c (id int primary key, v int not null);
insert into c values (1, 10), (2, 20);
begin isolation level repeatable read;
select v from c where id = 1;
-- session 2
begin;
update c set v = 11 where id = 1;
-- session 1
update c set v = v + 1 where id = 1;
-- session 2
commit;
-- session 1
rollback;
-- Write skew.
-- session 1
begin isolation level serializable;
select sum(v) from c;
-- session 2
begin isolation level serializable;
select sum(v) from c;
update c set v = 0 where id = 2;
-- session 1
update c set v = 0 where id = 1;
commit;
-- session 2
commit;
-- Fekete et al.'s read-only anomaly.
-- session 1
begin isolation level serializable;
select * from c order by id;
-- session 2
begin isolation level serializable;
update c set v = v + 5 where id = 2;
commit;
-- session 3
begin isolation level serializable read only;
select * from c order by id;
commit;
-- session 1
update c set v = -1 where id = 1;
rollback;
-- One rw edge: both commit.
-- session 1
begin isolation level serializable;
select v from c where id = 2;
-- session 2
begin isolation level serializable;
update c set v = 7 where id = 2;
commit;
-- session 1
update c set v = 8 where id = 1;
commit;
select * from c order by id;
