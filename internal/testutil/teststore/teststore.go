// Package teststore is the one way a test opens a store: a fresh one at
// [pgtest.StoreLocation] (a SQLite file in the test's temporary directory,
// or, in the PostgreSQL tier (-tags postgres), a new database on the shared
// PostgreSQL cluster), or an existing location; either way it is
// closed when the test ends.
//
// Linking it sets pgtest's store template (pgtest.UseStoreTemplate): the
// PostgreSQL databases pgtest.StoreLocation and pgtest.EachDialect hand out
// are copies of one database migrated to this build's schema, keyed by its
// version (a hash of the DDL), so a schema change never reuses a stale one.
package teststore

import (
	"context"
	"fmt"
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

// Open opens a fresh, migrated store for tb on the dialect the run asks for
// (see [pgtest.StoreLocation]) and closes it when tb ends.
func Open(tb testing.TB, opts ...store.Option) *store.Store {
	tb.Helper()
	return OpenAt(tb, pgtest.StoreLocation(tb), opts...)
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
