// Package teststore is the one way a test opens a store: a fresh one at
// [Location] (a SQLite file in the test's temporary directory, or, in the
// PostgreSQL tier (-tags postgres), a new database on the shared
// PostgreSQL cluster), or an existing location; either way it is
// closed when the test ends.
//
// Linking it sets pgtest's store template (pgtest.UseStoreTemplate): the
// PostgreSQL databases pgtest.StoreLocation and pgtest.EachDialect hand out
// are copies of one database migrated to this build's schema, keyed by its
// version (a hash of the DDL), so a schema change never reuses a stale one.
// The SQLite files [Location] hands out are likewise copies of one file
// migrated once per test binary, so a test pays for the schema's DDL once,
// not once per store.
package teststore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

func init() {
	pgtest.UseStoreTemplate(pgtest.Template{Key: "store " + store.PostgresSchemaVersion(), Prepare: migrate})
}

// migrate creates the current schema in the empty database at dsn.
func migrate(ctx context.Context, dsn string) error {
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return fmt.Errorf("migrate the store template: %w", err)
	}
	return st.Close()
}

// sqliteImage is the bytes of a SQLite store file migrated to this build's
// schema (and of its write-ahead log, if closing left one), made once per
// test binary in a temporary directory that is removed at once.
type sqliteImage struct{ db, wal []byte }

var sqliteTemplate = sync.OnceValues(func() (sqliteImage, error) {
	dir, err := os.MkdirTemp("", "teststore-template-")
	if err != nil {
		return sqliteImage{}, fmt.Errorf("make the store template's directory: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "interop.db")
	if err := migrate(context.Background(), path); err != nil {
		return sqliteImage{}, err
	}
	var img sqliteImage
	if img.db, err = os.ReadFile(path); err != nil {
		return sqliteImage{}, fmt.Errorf("read the store template: %w", err)
	}
	if img.wal, err = os.ReadFile(path + "-wal"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return sqliteImage{}, fmt.Errorf("read the store template's log: %w", err)
	}
	return img, nil
})

// Location is a fresh store location for tb (see [pgtest.StoreLocation]):
// in the SQLite tier, a new file holding a copy of the migrated template,
// as the PostgreSQL tier's databases are copies of theirs.
func Location(tb testing.TB) string {
	tb.Helper()
	location := pgtest.StoreLocation(tb)
	if store.IsPostgres(location) {
		return location
	}
	img, err := sqliteTemplate()
	if err != nil {
		tb.Fatalf("make the store template: %v", err)
	}
	if err := os.WriteFile(location, img.db, 0o600); err != nil {
		tb.Fatalf("copy the store template to %s: %v", location, err)
	}
	if img.wal != nil {
		if err := os.WriteFile(location+"-wal", img.wal, 0o600); err != nil {
			tb.Fatalf("copy the store template's log to %s: %v", location, err)
		}
	}
	return location
}

// Open opens a fresh, migrated store for tb on the dialect the run asks for
// (see [Location]) and closes it when tb ends.
func Open(tb testing.TB, opts ...store.Option) *store.Store {
	tb.Helper()
	return OpenAt(tb, Location(tb), opts...)
}

// OpenAt opens (migrating when needed) the store at location, a file path
// or a PostgreSQL URL, and closes it when tb ends. A test that opens the
// same location twice gets two stores, as two runtime processes would.
func OpenAt(tb testing.TB, location string, opts ...store.Option) *store.Store {
	tb.Helper()
	st, err := store.Open(context.Background(), location, opts...)
	if err != nil {
		tb.Fatalf("open the test store at %s: %v", location, err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	return st
}
