-- READ COMMITTED after a lock wait re-checks only the rows its snapshot found, at their
-- newest versions (PostgreSQL's EvalPlanQual): rows inserted meanwhile are not picked
-- up, and a key deleted and inserted again is another row.
-- session 1
create table t (id int primary key, v int not null);
insert into t values (1, 10), (2, 20);
begin;
insert into t values (3, 20);
update t set v = 21 where id = 2;
-- session 2
update t set v = v + 100 where v >= 20;
-- session 1
commit;
-- session 2
select * from t order by id;
-- PMP-write: the waiting DELETE finds its row changed to fail its WHERE.
-- session 1
begin;
update t set v = 30 where id = 1;
-- session 2
delete from t where v = 10;
-- session 1
commit;
-- Reborn key: deleted and inserted again by one transaction.
-- session 1
begin;
delete from t where id = 1;
insert into t values (1, 99);
-- session 2
update t set v = -1 where id = 1;
-- session 1
commit;
-- session 2
select * from t order by id;
