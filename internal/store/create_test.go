package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
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

// countingConnector counts the connections a pool opens.
type countingConnector struct {
	driver.Connector
	n atomic.Int32
}

func (c *countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	c.n.Add(1)
	return c.Connector.Connect(ctx)
}

func TestLazyCreationHandsItsConnectionToThePool(t *testing.T) {
	path := filepath.Join(t.TempDir(), "interop.db")
	s := openLazy(t, path)
	counted := &countingConnector{Connector: s.connector}
	s.connector = counted
	if v, err := schemaOf(s); err != nil || v != SchemaVersion() {
		t.Fatalf("schema after the first query = %q, %v", v, err)
	}
	var cacheSize int64
	if err := s.DB().QueryRow("PRAGMA cache_size").Scan(&cacheSize); err != nil {
		t.Fatal(err)
	}
	if n := counted.n.Load(); n != 1 {
		t.Fatalf("connections opened by the creation and two queries = %d; want 1, the creation's own", n)
	}
	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var want int64
	if err := other.QueryRow("PRAGMA cache_size").Scan(&want); err != nil {
		t.Fatal(err)
	}
	if cacheSize != want {
		t.Fatalf("page cache of the creating connection after creation = %d; want SQLite's default %d", cacheSize, want)
	}
}

func TestOpenWithoutLazyConnectCreatesAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "interop.db")
	s, err := Open(context.Background(), path, WithClock(fixedClock(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.StartedEmpty() || !s.Migrated() {
		t.Fatalf("StartedEmpty = %v, Migrated = %v; want false, true", s.StartedEmpty(), s.Migrated())
	}
}

// cancelingConn ends its context at the creation's first statement, as a
// caller that gives up mid-creation does, and records when the
// transaction's rollback has finished on it.
type cancelingConn struct {
	poolConn
	cancel     context.CancelFunc
	rolledBack atomic.Bool
}

func (c *cancelingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if query == createMetaSQL {
		c.cancel()
		return nil, context.Canceled
	}
	return c.poolConn.ExecContext(ctx, query, args)
}

func (c *cancelingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	tx, err := c.poolConn.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &recordedTx{Tx: tx, c: c}, nil
}

type recordedTx struct {
	driver.Tx
	c *cancelingConn
}

func (t *recordedTx) Rollback() error {
	err := t.Tx.Rollback()
	t.c.rolledBack.Store(true)
	return err
}

// TestLazyCreationKeepsItsConnectionUntilThePoolLetsGo: a creation whose
// caller gives up returns only once database/sql has finished with the
// connection (it rolls a transaction whose context ended back on a
// goroutine of its own), so closing the connection then, as createSchema
// does, cannot race with that rollback.
func TestLazyCreationKeepsItsConnectionUntilThePoolLetsGo(t *testing.T) {
	s := openLazy(t, filepath.Join(t.TempDir(), "interop.db"))
	// database/sql's own rollback and the creation's race; -race (the unit
	// tier) reports the loser, so the test gives the race many chances.
	for range 60 {
		raw, err := s.connector.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cn := &cancelingConn{poolConn: raw.(poolConn), cancel: cancel}
		err = s.createOn(ctx, cn, fileEmpty, s.create.opts)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("creation whose context ended: %v; want context.Canceled", err)
		}
		if !cn.rolledBack.Load() {
			t.Fatal("the creation returned while its transaction was still being rolled back on its connection")
		}
		if err := raw.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
