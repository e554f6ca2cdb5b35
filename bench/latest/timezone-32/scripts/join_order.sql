\set tid random(1, 10 * :scale)
SELECT t.tbalance, a.abalance, b.bbalance FROM pgbench_accounts a JOIN pgbench_tellers t ON a.aid = t.tid * 1000 JOIN pgbench_branches b ON b.bid = t.bid WHERE t.tid = :tid;
