package pgtest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestTemplate: databases made from a template see what its preparation
// made, and each is a copy of its own; the preparation runs once per key,
// also when processes sharing the cluster ask at once (Cluster values
// attached to one server, as each test binary has); a
// changed key (a changed DDL) gets a template of its own; an unfinished
// template (its preparer died) is made again.
func TestTemplate(t *testing.T) {
	c := Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Unique per run: a lent cluster outlives the test binary.
	run := fmt.Sprintf("%d-%d", time.Now().UnixNano(), nextDB.Add(1))
	var prepared atomic.Int32
	tmpl := func(ddl string) Template {
		return Template{Key: "test " + run + " " + ddl, Prepare: func(ctx context.Context, dsn string) error {
			prepared.Add(1)
			return execSQL(ctx, dsn, ddl)
		}}
	}
	v1 := tmpl("CREATE TABLE t (a int); INSERT INTO t VALUES (1)")

	var wg sync.WaitGroup
	dsns := make([]string, 4)
	errs := make([]error, 4)
	for i := range dsns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A Cluster value per goroutine, as each test binary has
			// its own: they meet only on the server.
			other, err := Attach(c.Lend())
			if err == nil {
				dsns[i], err = other.NewDatabaseFrom(ctx, v1)
				_ = other.Stop()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	again, err := c.NewDatabaseFrom(ctx, v1) // finds it on the server
	if err != nil {
		t.Fatal(err)
	}
	dsns = append(dsns, again)
	if n := prepared.Load(); n != 1 {
		t.Fatalf("prepared %d times for one key, want once", n)
	}
	// Each copy sees the schema and the rows, and is its own database.
	if err := execSQL(ctx, dsns[0], "INSERT INTO t VALUES (2)"); err != nil {
		t.Fatal(err)
	}
	for i, dsn := range dsns {
		want := 1
		if i == 0 {
			want = 2
		}
		if n := count(ctx, t, dsn, "SELECT count(*) FROM t"); n != want {
			t.Errorf("copy %d has %d rows, want %d", i, n, want)
		}
	}

	// A changed preparation, a changed key: a new template.
	v2 := tmpl("CREATE TABLE t (a int, b text)")
	dsn2, err := c.NewDatabaseFrom(ctx, v2)
	if err != nil {
		t.Fatal(err)
	}
	if n := prepared.Load(); n != 2 {
		t.Fatalf("prepared %d times for two keys, want twice", n)
	}
	if n := count(ctx, t, dsn2, "SELECT count(*) FROM information_schema.columns WHERE table_name = 't'"); n != 2 {
		t.Fatalf("the new key's copy has %d columns in t, want 2", n)
	}

	// A template its preparer left unfinished (not marked a template) is
	// dropped and made again.
	v3 := tmpl("CREATE TABLE u (a int)")
	if err := c.Admin(ctx, "postgres", "CREATE DATABASE "+TemplateName(v3.Key)+" OWNER "+AppRole); err != nil {
		t.Fatal(err)
	}
	dsn3, err := c.NewDatabaseFrom(ctx, v3)
	if err != nil {
		t.Fatal(err)
	}
	if n := count(ctx, t, dsn3, "SELECT count(*) FROM u"); n != 0 || prepared.Load() != 3 {
		t.Fatalf("rows %d, prepared %d times; want the unfinished template made again", n, prepared.Load())
	}
}

func execSQL(ctx context.Context, dsn, sql string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

func count(ctx context.Context, t *testing.T, dsn, query string) int {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
