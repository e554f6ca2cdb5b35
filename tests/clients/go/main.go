// pgx checks against SteadyDB: each prints one JSON line {"check", "ok", "detail"}.
// Connection from PGHOST, PGPORT, PGUSER, PGDATABASE; tables are prefixed by CLIENT_PREFIX.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

var ctx = context.Background()

func eq(got, want any, what string) error {
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("%s: got %#v, want %#v", what, got, want)
	}
	return nil
}

func main() {
	prefix := os.Getenv("CLIENT_PREFIX")
	if prefix == "" {
		prefix = "cm_go"
	}
	t := prefix + "_items"
	report := func(name string, err error) {
		out := map[string]any{"check": name, "ok": err == nil}
		if err != nil {
			out["detail"] = err.Error()
		}
		b, _ := json.Marshal(out)
		fmt.Println(string(b))
	}
	if os.Getenv("AUTH_CHECKS") == "1" {
		authChecks(report)
		return
	}
	conn, err := pgx.Connect(ctx, "")
	if err != nil {
		report("connect", err)
		return
	}
	defer conn.Close(ctx)
	must := func(sql string, args ...any) {
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			panic(err)
		}
	}
	must("drop table if exists " + t)
	must("create table " + t + " (id int primary key, name text, tags text[], at timestamptz)")
	defer conn.Exec(ctx, "drop table if exists "+t)

	checks := []struct {
		name string
		f    func() error
	}{
		{"connect", func() error {
			var one int
			if err := conn.QueryRow(ctx, "select 1").Scan(&one); err != nil {
				return err
			}
			return eq(one, 1, "select 1")
		}},
		{"types", func() error {
			ts := time.Date(2024, 1, 2, 3, 4, 5, 123000000, time.UTC)
			var (
				i   int32
				b   int64
				n   pgtype.Numeric
				s   string
				ok  bool
				at  time.Time
				by  []byte
				f   float64
				d   time.Time
				nul *string
			)
			err := conn.QueryRow(ctx, "select $1::int4, $2::int8, $3::numeric, $4::text, $5::bool, $6::timestamptz, $7::bytea, $8::float8, $9::date, $10::text",
				int32(42), int64(9007199254740993), "12.50", "héllo", true, ts, []byte{0, 1, 255}, 1.5, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), nil).
				Scan(&i, &b, &n, &s, &ok, &at, &by, &f, &d, &nul)
			if err != nil {
				return err
			}
			nv, _ := n.Value()
			return eq([]any{i, b, nv, s, ok, at.UTC(), by, f, d.Format("2006-01-02"), nul},
				[]any{int32(42), int64(9007199254740993), "12.50", "héllo", true, ts, []byte{0, 1, 255}, 1.5, "2024-02-29", (*string)(nil)}, "values")
		}},
		{"prepared", func() error {
			if _, err := conn.Prepare(ctx, "ins", "insert into "+t+" (id, name) values ($1, $2)"); err != nil {
				return err
			}
			for i, name := range []string{"a", "b", "c"} {
				if _, err := conn.Exec(ctx, "ins", i+1, name); err != nil {
					return err
				}
			}
			var name string
			if err := conn.QueryRow(ctx, "select name from "+t+" where id = $1", 2).Scan(&name); err != nil {
				return err
			}
			return eq(name, "b", "prepared select")
		}},
		{"batch", func() error {
			batch := &pgx.Batch{}
			for i := 10; i < 110; i++ {
				batch.Queue("insert into "+t+" (id, name) values ($1, $2)", i, fmt.Sprintf("n%d", i))
			}
			if err := conn.SendBatch(ctx, batch).Close(); err != nil {
				return err
			}
			var n int64
			if err := conn.QueryRow(ctx, "select count(*) from "+t+" where id >= 10").Scan(&n); err != nil {
				return err
			}
			return eq(n, int64(100), "count")
		}},
		{"transaction_savepoint", func() error {
			tx, err := conn.Begin(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, "insert into "+t+" (id, name) values (200, 'kept')"); err != nil {
				return err
			}
			inner, err := tx.Begin(ctx)
			if err != nil {
				return err
			}
			if _, err := inner.Exec(ctx, "insert into "+t+" (id, name) values (201, 'undone')"); err != nil {
				return err
			}
			if err := inner.Rollback(ctx); err != nil {
				return err
			}
			if err := tx.Commit(ctx); err != nil {
				return err
			}
			rows, _ := conn.Query(ctx, "select id from "+t+" where id >= 200 order by id")
			ids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
			if err != nil {
				return err
			}
			return eq(ids, []int32{200}, "rows after commit")
		}},
		{"error_fields", func() error {
			_, err := conn.Exec(ctx, "insert into "+t+" (id, name) values (1, 'dup')")
			var pe *pgconn.PgError
			if !errors.As(err, &pe) {
				return fmt.Errorf("no server error: %v", err)
			}
			return eq([]string{pe.Code, pe.ConstraintName, pe.TableName, pe.SchemaName}, []string{"23505", t + "_pkey", t, "public"}, "fields")
		}},
		{"metadata", func() error {
			dt, err := conn.LoadType(ctx, "_text")
			if err != nil {
				return err
			}
			var oid uint32
			if err := conn.QueryRow(ctx, "select $1::text::regtype::oid", "int8").Scan(&oid); err != nil {
				return err
			}
			rows, _ := conn.Query(ctx, "select column_name from information_schema.columns where table_name = $1 order by ordinal_position", t)
			cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			return eq([]any{dt.OID, oid, strings.Join(cols, ",")}, []any{uint32(1009), uint32(20), "id,name,tags,at"}, "metadata")
		}},
		{"arrays", func() error {
			if _, err := conn.Exec(ctx, "update "+t+" set tags = $1 where id = 1", []string{"x", "y z"}); err != nil {
				return err
			}
			var tags []string
			var nums []int32
			if err := conn.QueryRow(ctx, "select tags, array[1,2]::int[] from "+t+" where id = 1").Scan(&tags, &nums); err != nil {
				return err
			}
			return eq([]any{tags, nums}, []any{[]string{"x", "y z"}, []int32{1, 2}}, "arrays")
		}},
		{"copy_in", func() error {
			at := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
			n, err := conn.CopyFrom(ctx, pgx.Identifier{t}, []string{"id", "name", "tags", "at"}, pgx.CopyFromRows([][]any{
				{int32(1000), "copied", []string{"a"}, at},
				{int32(1001), nil, nil, nil},
			}))
			if err != nil {
				return err
			}
			var name string
			var got time.Time
			if err := conn.QueryRow(ctx, "select name, at from "+t+" where id = 1000").Scan(&name, &got); err != nil {
				return err
			}
			return eq([]any{n, name, got.UTC()}, []any{int64(2), "copied", at}, "copied")
		}},
		{"copy_out", func() error {
			var sb strings.Builder
			_, err := conn.PgConn().CopyTo(ctx, &sb, "copy (select id, name from "+t+" where id in (1, 2) order by id) to stdout with (format csv)")
			if err != nil {
				return err
			}
			return eq(sb.String(), "1,a\n2,b\n", "csv")
		}},
	}
	for _, c := range checks {
		func() {
			defer func() {
				if r := recover(); r != nil {
					report(c.name, fmt.Errorf("panic: %v", r))
				}
			}()
			report(c.name, c.f())
		}()
	}
}
