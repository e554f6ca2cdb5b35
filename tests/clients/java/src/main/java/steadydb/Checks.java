// pgjdbc checks against SteadyDB: each prints one JSON line {"check", "ok", "detail"}.
// Connection from PGHOST, PGPORT, PGUSER, PGDATABASE; tables are prefixed by CLIENT_PREFIX.
package steadydb;

import java.io.ByteArrayOutputStream;
import java.io.StringReader;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.sql.*;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.*;
import org.postgresql.PGConnection;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

public class Checks {
    interface Check { void run(Connection c) throws Exception; }

    static String t;

    static void eq(Object got, Object want, String what) {
        if (!Objects.deepEquals(got, want)) {
            throw new AssertionError(what + ": got " + got + ", want " + want);
        }
    }

    static List<List<Object>> rows(ResultSet rs, String... columns) throws SQLException {
        List<List<Object>> out = new ArrayList<>();
        while (rs.next()) {
            List<Object> row = new ArrayList<>();
            for (String col : columns) row.add(rs.getObject(col));
            out.add(row);
        }
        return out;
    }

    static String json(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
    }

    public static void main(String[] args) throws Exception {
        if ("1".equals(System.getenv("AUTH_CHECKS"))) {
            AuthChecks.run();
            return;
        }
        String prefix = System.getenv().getOrDefault("CLIENT_PREFIX", "cm_java");
        t = prefix + "_items";
        String url = "jdbc:postgresql://" + System.getenv("PGHOST") + ":" + System.getenv("PGPORT") + "/"
                + System.getenv("PGDATABASE") + "?prepareThreshold=1";
        Connection c;
        try {
            c = DriverManager.getConnection(url, System.getenv("PGUSER"), "");
        } catch (Exception e) {
            System.out.println("{\"check\": \"connect\", \"ok\": false, \"detail\": " + json(e.toString()) + "}");
            return;
        }
        try (Statement s = c.createStatement()) {
            s.execute("drop table if exists " + t);
            s.execute("create table " + t + " (id int primary key, name varchar(20), price numeric(8,2), tags text[])");
        }
        LinkedHashMap<String, Check> checks = new LinkedHashMap<>();
        checks.put("connect", conn -> {
            try (ResultSet rs = conn.createStatement().executeQuery("select 1 as one")) {
                rs.next();
                eq(rs.getInt("one"), 1, "select 1");
            }
        });
        checks.put("types", conn -> {
            OffsetDateTime ts = OffsetDateTime.of(2024, 1, 2, 3, 4, 5, 123_000_000, ZoneOffset.UTC);
            try (PreparedStatement ps = conn.prepareStatement(
                    "select ?::int4, ?::int8, ?::numeric, ?::text, ?::bool, ?::timestamptz, ?::bytea, ?::float8, ?::date, ?::text")) {
                for (int round = 0; round < 2; round++) { // text, then binary transfer once prepared
                    ps.setInt(1, 42);
                    ps.setLong(2, 9007199254740993L);
                    ps.setBigDecimal(3, new BigDecimal("12.50"));
                    ps.setString(4, "héllo");
                    ps.setBoolean(5, true);
                    ps.setObject(6, ts);
                    ps.setBytes(7, new byte[] {0, 1, (byte) 255});
                    ps.setDouble(8, 1.5);
                    ps.setDate(9, java.sql.Date.valueOf("2024-02-29"));
                    ps.setNull(10, Types.VARCHAR);
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        eq(List.of(rs.getInt(1), rs.getLong(2), rs.getBigDecimal(3), rs.getString(4), rs.getBoolean(5),
                                rs.getObject(6, OffsetDateTime.class).withOffsetSameInstant(ZoneOffset.UTC),
                                Arrays.toString(rs.getBytes(7)), rs.getDouble(8), rs.getDate(9).toString()),
                            List.of(42, 9007199254740993L, new BigDecimal("12.50"), "héllo", true, ts, "[0, 1, -1]", 1.5, "2024-02-29"),
                            "values");
                        eq(rs.getString(10), null, "null");
                    }
                }
            }
        });
        checks.put("prepared", conn -> {
            try (PreparedStatement ins = conn.prepareStatement("insert into " + t + " (id, name, price) values (?, ?, ?)")) {
                String[] names = {"a", "b", "c"};
                for (int i = 0; i < 3; i++) {
                    ins.setInt(1, i + 1);
                    ins.setString(2, names[i]);
                    ins.setBigDecimal(3, new BigDecimal(i + 1 + ".25"));
                    ins.executeUpdate();
                }
            }
            try (PreparedStatement get = conn.prepareStatement("select name, price from " + t + " where id = ?")) {
                get.setInt(1, 2);
                eq(rows(get.executeQuery(), "name", "price"), List.of(List.of("b", new BigDecimal("2.25"))), "prepared select");
            }
        });
        checks.put("batch", conn -> {
            try (PreparedStatement ins = conn.prepareStatement("insert into " + t + " (id, name) values (?, ?)")) {
                for (int i = 10; i < 110; i++) {
                    ins.setInt(1, i);
                    ins.setString(2, "n" + i);
                    ins.addBatch();
                }
                int[] counts = ins.executeBatch();
                eq(counts.length, 100, "batch counts");
            }
            try (ResultSet rs = conn.createStatement().executeQuery("select count(*) from " + t + " where id >= 10")) {
                rs.next();
                eq(rs.getLong(1), 100L, "count");
            }
        });
        checks.put("transaction_savepoint", conn -> {
            conn.setAutoCommit(false);
            try (Statement s = conn.createStatement()) {
                s.executeUpdate("insert into " + t + " (id, name) values (200, 'kept')");
                Savepoint sp = conn.setSavepoint("s1");
                s.executeUpdate("insert into " + t + " (id, name) values (201, 'undone')");
                conn.rollback(sp);
                conn.commit();
                eq(rows(s.executeQuery("select id from " + t + " where id >= 200 order by id"), "id"), List.of(List.of(200)), "rows");
                conn.commit();
            } finally {
                conn.setAutoCommit(true);
            }
        });
        checks.put("error_fields", conn -> {
            try (Statement s = conn.createStatement()) {
                s.executeUpdate("insert into " + t + " (id, name) values (1, 'dup')");
                throw new AssertionError("no error");
            } catch (PSQLException e) {
                ServerErrorMessage m = e.getServerErrorMessage();
                eq(List.of(e.getSQLState(), m.getConstraint(), m.getTable(), m.getSchema()),
                    List.of("23505", t + "_pkey", t, "public"), "fields");
            }
        });
        checks.put("metadata_tables", conn -> {
            DatabaseMetaData md = conn.getMetaData();
            eq(rows(md.getTables(null, "public", t, new String[] {"TABLE"}), "TABLE_NAME", "TABLE_TYPE"),
                List.of(List.of(t, "TABLE")), "getTables");
        });
        checks.put("metadata_columns", conn -> {
            List<List<Object>> cols = rows(conn.getMetaData().getColumns(null, "public", t, "%"),
                "COLUMN_NAME", "TYPE_NAME", "COLUMN_SIZE", "IS_NULLABLE");
            eq(cols, List.of(List.of("id", "int4", 10, "NO"), List.of("name", "varchar", 20, "YES"),
                List.of("price", "numeric", 8, "YES"), List.of("tags", "_text", 2147483647, "YES")), "getColumns");
        });
        checks.put("metadata_primary_keys", conn -> {
            List<List<Object>> pk = rows(conn.getMetaData().getPrimaryKeys(null, "public", t), "COLUMN_NAME", "KEY_SEQ", "PK_NAME");
            eq(pk.toString(), List.of(List.of("id", 1, t + "_pkey")).toString(), "getPrimaryKeys");
        });
        checks.put("metadata_result_set", conn -> {
            try (ResultSet rs = conn.createStatement().executeQuery("select id, name from " + t + " where id = 1")) {
                ResultSetMetaData rmd = rs.getMetaData();
                eq(List.of(rmd.getTableName(1), rmd.getColumnTypeName(2), rmd.isNullable(1)),
                    List.of(t, "varchar", ResultSetMetaData.columnNoNulls), "ResultSetMetaData");
            }
        });
        checks.put("arrays", conn -> {
            try (PreparedStatement ps = conn.prepareStatement("update " + t + " set tags = ? where id = 1")) {
                ps.setArray(1, conn.createArrayOf("text", new String[] {"x", "y z", null}));
                ps.executeUpdate();
            }
            try (ResultSet rs = conn.createStatement().executeQuery("select tags from " + t + " where id = 1")) {
                rs.next();
                eq(Arrays.asList((Object[]) rs.getArray(1).getArray()), Arrays.asList("x", "y z", null), "tags");
            }
        });
        checks.put("copy_in", conn -> {
            long n = ((PGConnection) conn).getCopyAPI().copyIn(
                "copy " + t + " (id, name) from stdin with (format csv)", new StringReader("1000,copied\n1001,\n"));
            eq(n, 2L, "copied rows");
        });
        checks.put("copy_out", conn -> {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ((PGConnection) conn).getCopyAPI().copyOut(
                "copy (select id, name from " + t + " where id in (1, 2) order by id) to stdout with (format csv)", out);
            eq(out.toString(StandardCharsets.UTF_8), "1,a\n2,b\n", "csv");
        });
        // pgjdbc sends the JVM's zone as the startup TimeZone: the server's text, casts
        // and pgjdbc's reading of timestamp and timestamptz must all follow it.
        checks.put("time_zone", conn -> {
            TimeZone saved = TimeZone.getDefault();
            TimeZone.setDefault(TimeZone.getTimeZone("America/New_York"));
            try (Connection ny = DriverManager.getConnection(url, System.getenv("PGUSER"), "");
                 Statement s = ny.createStatement()) {
                try (ResultSet rs = s.executeQuery("show timezone")) {
                    rs.next();
                    eq(rs.getString(1), "America/New_York", "startup TimeZone");
                }
                try (ResultSet rs = s.executeQuery(
                        "select '2024-07-01 12:00+00'::timestamptz::text, '2024-07-01 12:00+00'::timestamptz,"
                        + " '2024-01-15 09:30'::timestamp, '2024-01-15 09:30'::timestamp::timestamptz")) {
                    rs.next();
                    eq(rs.getString(1), "2024-07-01 08:00:00-04", "timestamptz text");
                    eq(rs.getObject(2, OffsetDateTime.class).toInstant(),
                        OffsetDateTime.of(2024, 7, 1, 12, 0, 0, 0, ZoneOffset.UTC).toInstant(), "timestamptz instant");
                    eq(rs.getTimestamp(3), Timestamp.valueOf("2024-01-15 09:30:00"), "timestamp");
                    eq(rs.getTimestamp(4).toInstant().toString(), "2024-01-15T14:30:00Z", "timestamp as local time");
                }
                try (PreparedStatement ps = ny.prepareStatement("select ?::timestamptz::text")) {
                    ps.setTimestamp(1, Timestamp.valueOf("2024-07-04 18:00:00"));
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        eq(rs.getString(1), "2024-07-04 18:00:00-04", "java.sql.Timestamp parameter");
                    }
                }
            } finally {
                TimeZone.setDefault(saved);
            }
        });
        for (Map.Entry<String, Check> e : checks.entrySet()) {
            try {
                e.getValue().run(c);
                System.out.println("{\"check\": " + json(e.getKey()) + ", \"ok\": true}");
            } catch (Throwable ex) {
                System.out.println("{\"check\": " + json(e.getKey()) + ", \"ok\": false, \"detail\": " + json(ex.toString()) + "}");
                try { if (!c.getAutoCommit()) { c.rollback(); c.setAutoCommit(true); } } catch (SQLException ignored) {}
            }
        }
        try (Statement s = c.createStatement()) {
            s.execute("drop table if exists " + t);
        }
        c.close();
    }
}
