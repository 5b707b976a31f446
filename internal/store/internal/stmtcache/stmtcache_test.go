package stmtcache

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"path/filepath"
	"strings"
	"testing"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// open returns a pool of one connection on a fresh file, its statements
// cached size at a time, and the connector (for its Stats).
func open(t *testing.T, size int) (*sql.DB, *Connector) {
	t.Helper()
	base, err := sqlite.NewConnector("file:" + filepath.Join(t.TempDir(), "t.db") + "?_journal_mode=WAL&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	c := New(base, size)
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	mustExec(t, db, "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
	for _, n := range []string{"a", "b", "c"} {
		mustExec(t, db, "INSERT INTO t (name) VALUES (?)", n)
	}
	return db, c
}

type execer interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}

func mustExec(t *testing.T, db execer, query string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

type queryer interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}

func names(t *testing.T, db queryer, query string, args ...any) []string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// delta is the change of the counters across f.
func delta(c *Connector, f func()) Stats {
	b := c.Stats()
	f()
	a := c.Stats()
	return Stats{
		Prepared:  a.Prepared - b.Prepared,
		Hits:      a.Hits - b.Hits,
		Busy:      a.Busy - b.Busy,
		Uncached:  a.Uncached - b.Uncached,
		Finalized: a.Finalized - b.Finalized,
	}
}

// stmtMemory is the memory SQLite holds for the prepared statements of the
// pool's only connection (SQLITE_DBSTATUS_STMT_USED), read through Unwrap.
func stmtMemory(t *testing.T, db *sql.DB) int {
	t.Helper()
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var used int
	err = c.Raw(func(dc any) error {
		var err error
		used, _, err = dc.(interface{ Unwrap() driver.Conn }).Unwrap().(sqlite.DBStatus).Status(sqlite.DBStatusStmtUsed, false)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return used
}

func TestCache(t *testing.T) {
	ctx := context.Background()
	const all = "SELECT name FROM t ORDER BY id"
	tests := []struct {
		name string
		size int
		run  func(t *testing.T, db *sql.DB)
		want Stats
	}{
		{
			name: "a query run again reuses its statement",
			size: 8,
			run: func(t *testing.T, db *sql.DB) {
				for range 5 {
					if got := names(t, db, all); strings.Join(got, ",") != "a,b,c" {
						t.Fatalf("names %v", got)
					}
				}
			},
			want: Stats{Prepared: 1, Hits: 4},
		},
		{
			name: "an exec run again reuses its statement and rebinds",
			size: 8,
			run: func(t *testing.T, db *sql.DB) {
				for _, n := range []string{"d", "e", "f"} {
					mustExec(t, db, "INSERT INTO t (name) VALUES (?)", n)
				}
				if got := names(t, db, "SELECT name FROM t WHERE id > ? ORDER BY id", 3); strings.Join(got, ",") != "d,e,f" {
					t.Fatalf("names %v", got)
				}
			},
			want: Stats{Prepared: 1, Hits: 3}, // the INSERT was prepared by open
		},
		{
			name: "a nested query on the same connection does not reset the open rows",
			size: 8,
			run: func(t *testing.T, db *sql.DB) {
				c, err := db.Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				names(t, c, all) // cached and idle
				rows, err := c.QueryContext(ctx, all)
				if err != nil {
					t.Fatal(err)
				}
				var outer []string
				for rows.Next() {
					var n string
					if err := rows.Scan(&n); err != nil {
						t.Fatal(err)
					}
					outer = append(outer, n)
					// the same text while its statement is reading: a fresh statement
					if got := names(t, c, all); strings.Join(got, ",") != "a,b,c" {
						t.Fatalf("inner names %v", got)
					}
					// another cached text is fine
					if got := names(t, c, "SELECT name FROM t WHERE name = ?", n); len(got) != 1 || got[0] != n {
						t.Fatalf("inner lookup %v", got)
					}
				}
				if err := rows.Close(); err != nil {
					t.Fatal(err)
				}
				if strings.Join(outer, ",") != "a,b,c" {
					t.Fatalf("outer names %v", outer)
				}
				names(t, c, all) // idle again: served from the cache
			},
			want: Stats{Prepared: 2, Hits: 1 + 2 + 1, Busy: 3},
		},
		{
			name: "eviction finalizes the least recently used statement",
			size: 2,
			run: func(t *testing.T, db *sql.DB) {
				for i := range 6 {
					names(t, db, "SELECT name FROM t WHERE id > ?"+strings.Repeat(" ", i), 0)
				}
			},
			want: Stats{Prepared: 6, Finalized: 6 - 1}, // open's INSERT, then 4 of these
		},
		{
			name: "PRAGMA and DDL are not cached",
			size: 8,
			run: func(t *testing.T, db *sql.DB) {
				for range 2 {
					mustExec(t, db, "PRAGMA user_version = 7")
					mustExec(t, db, "CREATE TABLE IF NOT EXISTS u (x)")
				}
			},
			want: Stats{Uncached: 4},
		},
		{
			name: "a failed exec leaves its cached statement usable",
			size: 8,
			run: func(t *testing.T, db *sql.DB) {
				_, err := db.ExecContext(ctx, "INSERT INTO t (name) VALUES (?)", "a")
				if err == nil || !strings.Contains(err.Error(), "UNIQUE") {
					t.Fatalf("duplicate insert: %v", err)
				}
				mustExec(t, db, "INSERT INTO t (name) VALUES (?)", "z")
				if got := names(t, db, "SELECT name FROM t WHERE name = ?", "z"); len(got) != 1 {
					t.Fatalf("names %v", got)
				}
			},
			want: Stats{Prepared: 1, Hits: 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, c := open(t, tt.size)
			if got := delta(c, func() { tt.run(t, db) }); got != tt.want {
				t.Fatalf("stats %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestEvictionKeepsStatementMemoryFlat(t *testing.T) {
	db, _ := open(t, 4)
	var peak int
	for i := range 40 {
		names(t, db, "SELECT name FROM t WHERE id > ? AND name <> 'x"+strings.Repeat("y", i)+"'", 0)
		if i == 9 {
			peak = stmtMemory(t, db)
		}
	}
	if peak == 0 {
		t.Fatal("no statement memory with four statements cached")
	}
	if got := stmtMemory(t, db); got > peak*3/2 {
		t.Fatalf("statement memory %d after 40 distinct queries, %d after 10: evicted statements are not finalized", got, peak)
	}
}

func TestCloseFinalizesEveryStatement(t *testing.T) {
	db, c := open(t, 8)
	names(t, db, "SELECT name FROM t")
	names(t, db, "SELECT id FROM t")
	cached := c.Stats().Prepared // these two and open's INSERT
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := c.Stats().Finalized; got != cached {
		t.Fatalf("finalized %d of %d cached statements when the pool closed", got, cached)
	}
}

func TestTransactions(t *testing.T) {
	ctx := context.Background()
	for _, commit := range []bool{true, false} {
		db, c := open(t, 8)
		mustExec(t, db, "CREATE TABLE u (name TEXT NOT NULL)")
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, tx, "INSERT INTO t (name) VALUES (?)", "in-tx")
		rows, err := tx.QueryContext(ctx, "SELECT name FROM t ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			n++
			mustExec(t, tx, "INSERT INTO u (name) VALUES (?)", "nested")
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		if n != 4 {
			t.Fatalf("%d rows inside the transaction, want 4", n)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
		want := 3
		if commit {
			want = 4 + 4
		}
		if got := names(t, db, "SELECT name FROM t UNION ALL SELECT name FROM u"); len(got) != want {
			t.Fatalf("commit %v: %d rows after the transaction, want %d", commit, len(got), want)
		}
		if s := c.Stats(); s.Hits < 5 {
			t.Fatalf("commit %v: %+v: the transaction's statements did not use the cache", commit, s)
		}
	}
}

// TestSchemaChange checks that a cached statement survives a schema change
// on its own connection and on another one (SQLITE_SCHEMA: SQLite compiles
// it again on its next step).
func TestSchemaChange(t *testing.T) {
	ctx := context.Background()
	db, _ := open(t, 8)
	db.SetMaxOpenConns(2)
	const star = "SELECT * FROM t ORDER BY id"
	columns := func(c queryer) []string {
		rows, err := c.QueryContext(ctx, star)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		return cols
	}
	c1, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	c2, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	columns(c1)
	columns(c2)
	mustExec(t, c1, "ALTER TABLE t ADD COLUMN extra TEXT")
	for i, c := range []*sql.Conn{c1, c2} {
		if got := strings.Join(columns(c), ","); got != "id,name,extra" {
			t.Fatalf("connection %d: columns %s after ALTER TABLE", i+1, got)
		}
	}
	mustExec(t, c2, "ALTER TABLE t DROP COLUMN extra")
	if got := strings.Join(columns(c1), ","); got != "id,name" {
		t.Fatalf("columns %s after DROP COLUMN on another connection", got)
	}
}

// TestLimitSeesThroughTheWrapper checks Unwrap with a helper that needs the
// driver's own connection.
func TestLimitSeesThroughTheWrapper(t *testing.T) {
	ctx := context.Background()
	db, _ := open(t, 8)
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := sqlite.Limit(c, sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(ctx, "SELECT ?, ?, ?", 1, 2, 3); err == nil || !strings.Contains(err.Error(), "too many SQL variables") {
		t.Fatalf("three variables on a connection limited to two: %v", err)
	}
}

func TestCacheable(t *testing.T) {
	tests := []struct {
		query string
		want  bool
	}{
		{"SELECT 1", true},
		{"  select 1", true},
		{"\n(SELECT 1) UNION SELECT 2", true},
		{"INSERT INTO t VALUES (1)", true},
		{"update t set x = 1", true},
		{"DELETE FROM t", true},
		{"REPLACE INTO t VALUES (1)", true},
		{"WITH x AS (SELECT 1) SELECT * FROM x", true},
		{"PRAGMA user_version", false},
		{"CREATE TABLE t (x)", false},
		{"ALTER TABLE t ADD COLUMN y", false},
		{"BEGIN IMMEDIATE", false},
		{"SELECTED", false},
		{"", false},
		{"SELECT '" + strings.Repeat("x", MaxQueryLen) + "'", false},
	}
	for _, tt := range tests {
		if got := Cacheable(tt.query); got != tt.want {
			t.Errorf("Cacheable(%.40q) = %v, want %v", tt.query, got, tt.want)
		}
	}
}
