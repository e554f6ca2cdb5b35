-- DDL is transactional: a table created by a transaction that has not committed is
-- invisible to others, and its rollback drops it; a table it drops is gone for itself.
-- session 1
begin;
create table x (id int primary key);
insert into x values (1);
-- session 2
insert into x values (2);
-- session 1
rollback;
-- session 2
create table x (id int primary key);
insert into x values (2);
begin;
drop table x;
select * from x;
rollback;
select * from x;
