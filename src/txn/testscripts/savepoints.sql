-- ROLLBACK TO SAVEPOINT takes back the writes and the row locks taken since: a waiter
-- goes on; the writes before the savepoint stay, with their locks.
-- session 1
create table acct (id int primary key, balance int not null);
insert into acct values (1, 100), (2, 100);
begin;
update acct set balance = balance - 10 where id = 1;
savepoint s;
update acct set balance = balance + 10 where id = 2;
-- session 2
update acct set balance = 0 where id = 2;
-- session 1
rollback to savepoint s;
select * from acct order by id;
-- session 2
update acct set balance = 0 where id = 1;
-- session 1
release savepoint s;
commit;
-- session 2
select * from acct order by id;
-- An error inside a savepoint: the block is failed until ROLLBACK TO.
-- session 1
begin;
savepoint a;
insert into acct values (1, 0);
select 1;
rollback to a;
insert into acct values (3, 3);
commit;
select * from acct order by id;
