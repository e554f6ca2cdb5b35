-- Transaction blocks, failed state, DDL undo, TRUNCATE, isolation basics.
create table acct (id int primary key, bal int);
insert into acct values (1, 100), (2, 100);
begin;
update acct set bal = bal - 10 where id = 1;
select * from nosuch;
select 1;
commit;
select * from acct order by id;
begin;
truncate acct;
select count(*) from acct;
rollback;
select count(*) from acct;
begin;
create table tmp (x int);
insert into tmp values (1);
rollback;
select * from tmp;
-- session 1
begin isolation level repeatable read;
select bal from acct where id = 1;
-- session 2
update acct set bal = 50 where id = 1;
-- session 1
select bal from acct where id = 1;
update acct set bal = bal + 1 where id = 1;
rollback;
-- session 1
begin;
select bal from acct where id = 1;
-- session 2
update acct set bal = 60 where id = 1;
-- session 1
select bal from acct where id = 1;
update acct set bal = bal + 1 where id = 1;
commit;
select * from acct order by id;
show transaction_isolation;
set synchronous_commit = off;
show synchronous_commit;
reset synchronous_commit;
show synchronous_commit;
set shared_buffers = '1GB';
set nosuch = 1;
show server_version;
alter table acct add primary key (id);
create table nokey (a int, b text);
insert into nokey values (1, 'x'), (1, 'y');
alter table nokey add primary key (a);
delete from nokey where b = 'y';
alter table nokey add primary key (a);
insert into nokey values (1, 'z');
select * from nokey;
