// Authentication checks (AUTH_CHECKS=1): a server whose pg_hba.conf admits only hostssl
// lines with scram-sha-256. The password is PGPASSWORD; AUTH_SSLROOTCERT is the CA that
// signed the server's certificate (for 127.0.0.1).
package steadydb;

import java.sql.*;
import java.util.Properties;

public class AuthChecks {
    interface Check { void run() throws Exception; }

    static String url(String ssl) {
        return "jdbc:postgresql://127.0.0.1:" + System.getenv("PGPORT") + "/" + System.getenv("PGDATABASE")
                + "?" + ssl;
    }

    static Connection connect(String ssl, String password) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", System.getenv("PGUSER"));
        p.setProperty("password", password);
        return DriverManager.getConnection(url(ssl), p);
    }

    static void encrypted(Connection c) throws SQLException {
        try (c; ResultSet rs = c.createStatement().executeQuery(
                "select current_user::text, ssl from pg_stat_ssl where pid = pg_backend_pid()")) {
            rs.next();
            Checks.eq(rs.getString(1), System.getenv("PGUSER"), "current_user");
            Checks.eq(rs.getBoolean(2), true, "pg_stat_ssl.ssl");
        }
    }

    static void refused(String ssl, String password, String state) {
        try (Connection c = connect(ssl, password)) {
            throw new AssertionError("connected; expected SQLSTATE " + state);
        } catch (SQLException e) {
            Checks.eq(e.getSQLState(), state, "SQLSTATE of " + e.getMessage());
        }
    }

    static void report(String name, Check check) {
        try {
            check.run();
            System.out.println("{\"check\": \"" + name + "\", \"ok\": true}");
        } catch (Throwable e) {
            System.out.println("{\"check\": \"" + name + "\", \"ok\": false, \"detail\": " + Checks.json(e.toString()) + "}");
        }
    }

    public static void run() {
        String password = System.getenv("PGPASSWORD");
        report("auth_scram_tls", () -> encrypted(connect("sslmode=require", password)));
        report("auth_verify_full", () -> encrypted(connect(
                "sslmode=verify-full&sslrootcert=" + System.getenv("AUTH_SSLROOTCERT"), password)));
        report("auth_wrong_password", () -> refused("sslmode=require", "wrong" + password, "28P01"));
        report("auth_plain_refused", () -> refused("sslmode=disable", password, "28000"));
    }
}
