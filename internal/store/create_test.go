package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// openLazy opens path as serve does and checks that nothing but the empty
// file was written.
func openLazy(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, WithLazyConnect(), WithClock(fixedClock(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if !s.StartedEmpty() || s.Migrated() {
		t.Fatalf("StartedEmpty = %v, Migrated = %v; want true, false", s.StartedEmpty(), s.Migrated())
	}
	if info, err := os.Stat(path); err != nil || info.Size() != 0 {
		t.Fatalf("the new store file after Open: %v, %v; want an empty file", info, err)
	}
	return s
}

// schemaOf reads the schema version a query through s finds.
func schemaOf(s *Store) (string, error) {
	meta, err := readMeta(context.Background(), s.DB())
	return meta[metaSchemaVersion], err
}

// foreignDB writes another application's SQLite database at path.
func foreignDB(t *testing.T, path string) []byte {
	t.Helper()
	tmp := path + ".tmp"
	db, err := sql.Open("sqlite", tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"PRAGMA application_id = 1234", "CREATE TABLE t (x)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLazyOpenCreatesANewStoreOnItsFirstQuery(t *testing.T) {
	for _, tt := range []struct {
		name   string
		before func(path string) error
	}{
		{"missing file and directory", func(string) error { return nil }},
		{"empty file", func(path string) error {
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return err
			}
			return os.WriteFile(path, nil, 0o600)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state", "interop.db")
			if err := tt.before(path); err != nil {
				t.Fatal(err)
			}
			s := openLazy(t, path)
			if v, err := schemaOf(s); err != nil || v != SchemaVersion() {
				t.Fatalf("schema after the first query = %q, %v; want %q", v, err, SchemaVersion())
			}
			if !s.Migrated() {
				t.Error("Migrated is false after the first query created the schema")
			}
			h, err := inspectHeader(path)
			if err != nil || h.kind != fileOurs || h.userVersion != versionStamp(SchemaVersion()) {
				t.Fatalf("header after creation: kind %v, stamp %d, %v", h.kind, h.userVersion, err)
			}
		})
	}
}

func TestLazyOpenUsesTheSchemaAnotherProcessCreated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "interop.db")
	s := openLazy(t, path)
	other, err := Open(context.Background(), path, WithClock(fixedClock(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := writeMeta(context.Background(), other.DB(), "probe", "from the other process"); err != nil {
		t.Fatal(err)
	}
	other.Close()
	meta, err := readMeta(context.Background(), s.DB())
	if err != nil || meta["probe"] != "from the other process" {
		t.Fatalf("meta through the lazily opened store = %v, %v", meta, err)
	}
	if s.Migrated() {
		t.Error("Migrated is true, but another process created the schema")
	}
}

func TestLazyOpenRefusesWhatReplacedTheNewFile(t *testing.T) {
	t.Run("another application's database", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "interop.db")
		s := openLazy(t, path)
		before := foreignDB(t, path)
		if _, err := schemaOf(s); !errors.Is(err, ErrForeignStore) {
			t.Fatalf("first query on a foreign database: %v; want ErrForeignStore", err)
		}
		if after, _ := os.ReadFile(path); string(after) != string(before) {
			t.Fatal("the foreign database was modified")
		}
	})
	t.Run("not a database, then removed", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "interop.db")
		s := openLazy(t, path)
		if err := os.WriteFile(path, []byte("not a database at all"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := schemaOf(s)
		if err == nil || !strings.Contains(err.Error(), "no longer a SQLite database") {
			t.Fatalf("first query on a file that is not a database: %v", err)
		}
		if b, _ := os.ReadFile(path); string(b) != "not a database at all" {
			t.Fatalf("the file was changed: %q", b)
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if v, err := schemaOf(s); err != nil || v != SchemaVersion() {
			t.Fatalf("the next query after the file was removed = %q, %v; want the schema created", v, err)
		}
		if info, err := os.Stat(path); err != nil || info.Mode().Perm() != fileMode {
			t.Fatalf("the file created again: %v, %v; want mode %v", info, err, os.FileMode(fileMode))
		}
	})
}

// loggingConnector records the statements each of its connections runs.
type loggingConnector struct {
	driver.Connector
	mu          sync.Mutex
	conns       [][]string
	cancelQuery string
	cancel      context.CancelFunc
}

func (c *loggingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.conns = append(c.conns, nil)
	return &loggingConn{Conn: cn, c: c, n: len(c.conns) - 1}, nil
}

func (c *loggingConnector) log() [][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.conns)
}

// loggingConn passes what database/sql uses to the store's connection and
// logs each statement.
type loggingConn struct {
	driver.Conn
	c *loggingConnector
	n int
}

// cancelAt, when set, ends the caller's context at the first statement
// equal to query, which then fails, as a caller that gives up does.
func (c *loggingConnector) cancelAt(query string, cancel context.CancelFunc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancelQuery, c.cancel = query, cancel
}

func (c *loggingConnector) canceled(query string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel == nil || query != c.cancelQuery {
		return false
	}
	c.cancel()
	c.cancel = nil
	return true
}

func (l *loggingConn) record(query string) {
	l.c.mu.Lock()
	defer l.c.mu.Unlock()
	l.c.conns[l.n] = append(l.c.conns[l.n], query)
}

func (l *loggingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	l.record(query)
	if l.c.canceled(query) {
		return nil, context.Canceled
	}
	return l.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

func (l *loggingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	l.record(query)
	return l.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
}

func (l *loggingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return l.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

// TestLazyCreationRunsOnASmallPageCache: the connection that creates the
// schema sets its page cache small before anything else, and is its own:
// the pool's connection that answers the query keeps SQLite's default.
func TestLazyCreationRunsOnASmallPageCache(t *testing.T) {
	s := openLazy(t, filepath.Join(t.TempDir(), "interop.db"))
	logged := &loggingConnector{Connector: s.connector}
	s.connector = logged
	if v, err := schemaOf(s); err != nil || v != SchemaVersion() {
		t.Fatalf("schema after the first query = %q, %v", v, err)
	}
	conns := logged.log()
	if len(conns) != 2 {
		t.Fatalf("connections opened = %d; want 2, the creation's and the pool's", len(conns))
	}
	if first := conns[0]; len(first) < 2 || first[0] != creationCachePragma || !slices.Contains(first, createMetaSQL) {
		t.Fatalf("the creating connection ran %d statements, first %.60q; want %q first, then the schema",
			len(first), append(first, "")[0], creationCachePragma)
	}
	if slices.Contains(conns[1], creationCachePragma) {
		t.Fatalf("the pool's connection ran %q too", creationCachePragma)
	}
}

// TestLazyCreationGivenUpIsCreatedByTheNextQuery: a first query whose
// caller gives up in the middle of the creation fails with its context's
// error and leaves no half-made schema; the next query creates it.
func TestLazyCreationGivenUpIsCreatedByTheNextQuery(t *testing.T) {
	path := filepath.Join(t.TempDir(), "interop.db")
	s := openLazy(t, path)
	logged := &loggingConnector{Connector: s.connector}
	s.connector = logged
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logged.cancelAt(createMetaSQL, cancel)
	var one int
	if err := s.DB().QueryRowContext(ctx, "SELECT 1").Scan(&one); !errors.Is(err, context.Canceled) {
		t.Fatalf("a first query given up during the creation: %v; want context.Canceled", err)
	}
	ro, err := sql.Open("sqlite", sqliteReadOnlyDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	var objects int
	err = ro.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&objects)
	ro.Close()
	if err != nil || objects != 0 {
		t.Fatalf("schema objects after a creation given up = %d, %v; want none", objects, err)
	}
	if v, err := schemaOf(s); err != nil || v != SchemaVersion() {
		t.Fatalf("the next query = %q, %v; want the schema created", v, err)
	}
}
