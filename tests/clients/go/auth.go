package main

// Authentication checks (AUTH_CHECKS=1): a server whose pg_hba.conf admits only hostssl
// lines: scram-sha-256 for PGUSER, md5 for md5user, password for pwuser, cert for
// certuser, scram-sha-256 with clientcert=verify-full for members of a group (grpuser),
// reject for rejected. Every password is PGPASSWORD; AUTH_SSLROOTCERT is the CA that
// signed the server's certificate (for 127.0.0.1) and the clients' certificates, which
// are in AUTH_CERTDIR (<user>.crt, <user>.key).

import (
	"errors"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func sqlstate(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

func authChecks(report func(string, error)) {
	base := fmt.Sprintf("host=127.0.0.1 port=%s user=%s dbname=%s", os.Getenv("PGPORT"),
		os.Getenv("PGUSER"), os.Getenv("PGDATABASE"))
	password := os.Getenv("PGPASSWORD")
	connect := func(extra string) (*pgx.Conn, error) {
		return pgx.Connect(ctx, base+" "+extra)
	}
	encrypted := func(conn *pgx.Conn) error {
		defer conn.Close(ctx)
		var user string
		var ssl bool
		err := conn.QueryRow(ctx, "select current_user::text, ssl from pg_stat_ssl where pid = pg_backend_pid()").Scan(&user, &ssl)
		if err != nil {
			return err
		}
		if err := eq(user, os.Getenv("PGUSER"), "current_user"); err != nil {
			return err
		}
		return eq(ssl, true, "pg_stat_ssl.ssl")
	}
	expectState := func(extra, state string) error {
		conn, err := connect(extra)
		if err == nil {
			conn.Close(ctx)
			return fmt.Errorf("connected; expected SQLSTATE %s", state)
		}
		return eq(sqlstate(err), state, "SQLSTATE of "+err.Error())
	}
	report("auth_scram_tls", func() error {
		conn, err := connect("sslmode=require password=" + password)
		if err != nil {
			return err
		}
		return encrypted(conn)
	}())
	report("auth_verify_full", func() error {
		conn, err := connect("sslmode=verify-full sslrootcert=" + os.Getenv("AUTH_SSLROOTCERT") + " password=" + password)
		if err != nil {
			return err
		}
		return encrypted(conn)
	}())
	report("auth_wrong_password", expectState("sslmode=require password=wrong"+password, "28P01"))
	report("auth_plain_refused", expectState("sslmode=disable password="+password, "28000"))
	// The other methods and line kinds, each as its user.
	as := func(user, extra string) (*pgx.Conn, error) {
		return pgx.Connect(ctx, fmt.Sprintf("host=127.0.0.1 port=%s dbname=%s user=%s sslmode=require %s",
			os.Getenv("PGPORT"), os.Getenv("PGDATABASE"), user, extra))
	}
	certOf := func(user string) string {
		dir := os.Getenv("AUTH_CERTDIR")
		return fmt.Sprintf("sslcert=%s/%s.crt sslkey=%s/%s.key", dir, user, dir, user)
	}
	loggedIn := func(user string) func(*pgx.Conn, error) error {
		return func(conn *pgx.Conn, err error) error {
			if err != nil {
				return err
			}
			defer conn.Close(ctx)
			var current string
			if err := conn.QueryRow(ctx, "select current_user::text").Scan(&current); err != nil {
				return err
			}
			return eq(current, user, "current_user")
		}
	}
	refusedAs := func(state string) func(*pgx.Conn, error) error {
		return func(conn *pgx.Conn, err error) error {
			if err == nil {
				conn.Close(ctx)
				return fmt.Errorf("connected; expected SQLSTATE %s", state)
			}
			return eq(sqlstate(err), state, "SQLSTATE of "+err.Error())
		}
	}
	report("auth_md5", loggedIn("md5user")(as("md5user", "password="+password)))
	report("auth_password", loggedIn("pwuser")(as("pwuser", "password="+password)))
	report("auth_cert", loggedIn("certuser")(as("certuser", certOf("certuser"))))
	report("auth_cert_missing", refusedAs("28000")(as("certuser", "")))
	report("auth_group_verify_full", loggedIn("grpuser")(as("grpuser", certOf("grpuser")+" password="+password)))
	report("auth_verify_full_mismatch", refusedAs("28P01")(as("grpuser", certOf("certuser")+" password="+password)))
	report("auth_reject", refusedAs("28000")(as("rejected", "password="+password)))
}
