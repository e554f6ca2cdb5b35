// Authentication checks (AUTH_CHECKS=1): a server whose pg_hba.conf admits only hostssl
// lines: scram-sha-256 for PGUSER, md5 for md5user, password for pwuser, cert for
// certuser, scram-sha-256 with clientcert=verify-full for members of a group (grpuser),
// reject for rejected. Every password is PGPASSWORD; AUTH_SSLROOTCERT is the CA that
// signed the server's certificate (for 127.0.0.1) and the clients' certificates, which
// are in AUTH_CERTDIR (<user>.crt, and <user>.pk8: the key as PKCS-8 DER, as pgjdbc
// reads it).
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
        report("auth_md5", () -> loggedIn("md5user", as("md5user", password, null)));
        report("auth_password", () -> loggedIn("pwuser", as("pwuser", password, null)));
        report("auth_cert", () -> loggedIn("certuser", as("certuser", null, "certuser")));
        report("auth_cert_missing", () -> refusedAs("28000", () -> as("certuser", null, null)));
        report("auth_group_verify_full", () -> loggedIn("grpuser", as("grpuser", password, "grpuser")));
        report("auth_verify_full_mismatch", () -> refusedAs("28P01", () -> as("grpuser", password, "certuser")));
        report("auth_reject", () -> refusedAs("28000", () -> as("rejected", password, null)));
    }

    interface Connect { Connection open() throws SQLException; }

    /** A TLS connection as `user`, with a password and the client certificate of `cert`
     * (either may be null). */
    static Connection as(String user, String password, String cert) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", user);
        if (password != null) p.setProperty("password", password);
        p.setProperty("sslmode", "require");
        if (cert != null) {
            String dir = System.getenv("AUTH_CERTDIR");
            p.setProperty("sslcert", dir + "/" + cert + ".crt");
            p.setProperty("sslkey", dir + "/" + cert + ".pk8");
        } else {
            // No default ~/.postgresql/postgresql.crt either.
            p.setProperty("sslcert", "");
        }
        return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + System.getenv("PGPORT") + "/"
                + System.getenv("PGDATABASE"), p);
    }

    static void loggedIn(String user, Connection c) throws SQLException {
        try (c; ResultSet rs = c.createStatement().executeQuery("select current_user::text")) {
            rs.next();
            Checks.eq(rs.getString(1), user, "current_user");
        }
    }

    static void refusedAs(String state, Connect connect) {
        try (Connection c = connect.open()) {
            throw new AssertionError("connected; expected SQLSTATE " + state);
        } catch (SQLException e) {
            Checks.eq(e.getSQLState(), state, "SQLSTATE of " + e.getMessage());
        }
    }
}
