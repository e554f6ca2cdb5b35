\set aid random(1, 100000 * :scale)
SELECT a.abalance, b.bbalance, t.tbalance FROM pgbench_accounts a JOIN pgbench_branches b ON b.bid = a.bid JOIN pgbench_tellers t ON t.bid = b.bid AND t.tid = (a.aid % (10 * :scale)) + 1 WHERE a.aid = :aid;
