package main

// Authentication checks (AUTH_CHECKS=1): a server whose pg_hba.conf admits only
// hostssl lines with scram-sha-256. The password is PGPASSWORD; AUTH_SSLROOTCERT is the
// CA that signed the server's certificate (for 127.0.0.1).

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
}
