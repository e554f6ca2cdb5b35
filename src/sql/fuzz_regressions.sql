-- Inputs that once made the SQL front end panic or overflow, one statement a line; each
-- must now give a result or a clean error.
select * from f where id between 200 and 100
select * from f where id > 10 and id < 10
