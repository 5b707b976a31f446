package pgtest

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/testutil/leakcheck"
)

var shared struct {
	once    sync.Once
	cluster *Cluster
	err     error
}

// TestSettings are the shared test cluster's settings. The tests check
// what the runtime does when its process or connection dies, never a crash
// or power loss of the database server, and nothing reads its WAL: the
// server does not flush to disk (fsync, full_page_writes), a commit does
// not wait for its WAL record (synchronous_commit), the WAL holds only
// what crash recovery needs (wal_level minimal, which allows no WAL
// senders).
// Autovacuum is off: its workers vacuum and analyze the tables the tests
// fill, in databases no one reads after their test.
var TestSettings = map[string]string{
	"fsync": "off", "full_page_writes": "off", "synchronous_commit": "off",
	"wal_level": "minimal", "max_wal_senders": "0", "autovacuum": "off",
}

// TierSkip is why a PostgreSQL test is skipped without the build tag.
const TierSkip = "PostgreSQL tier: run with -tags postgres (scripts/test.sh does)"

// Tier reports whether this test binary is the PostgreSQL tier (built with
// -tags postgres).
func Tier() bool { return tierEnabled }

// RequireTier skips the test unless the binary is the PostgreSQL tier.
func RequireTier(t testing.TB) {
	t.Helper()
	if !tierEnabled {
		t.Skip(TierSkip)
	}
}

// Shared returns the test binary's cluster, starting it on first use, or
// the cluster EnvShared lends (scripts/test.sh starts one for all the
// test binaries of its PostgreSQL tiers).
// Without the build tag postgres the test is skipped (TierSkip). When
// PostgreSQL is not installed the test is skipped with how to install it,
// except under CI=true, where it fails: CI runs every test.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	RequireTier(t)
	shared.once.Do(func() {
		// initdb alone took over a minute on a loaded 2-core machine: the
		// bound is generous, it only catches a server that never comes up.
		if lent := os.Getenv(EnvShared); lent != "" {
			shared.cluster, shared.err = Attach(lent)
			return
		}
		shared.cluster, shared.err = Start(context.Background(), Options{Settings: TestSettings, StartTimeout: 5 * time.Minute})
	})
	if shared.err != nil {
		if os.Getenv("CI") == "true" || !strings.Contains(shared.err.Error(), ErrNotInstalled.Error()) {
			t.Fatalf("PostgreSQL cluster: %v", shared.err)
		}
		t.Skipf("PostgreSQL tests skipped: %v", shared.err)
	}
	return shared.cluster
}

// StopShared stops the shared cluster if one was started. Call it from
// TestMain after m.Run; the server also dies with the test binary.
func StopShared() {
	if shared.cluster != nil {
		_ = shared.cluster.Stop()
	}
}

// Main runs the tests, stops the shared cluster and then fails the binary
// when a goroutine leaked (leakcheck.Main): func TestMain(m *testing.M) {
// os.Exit(pgtest.Main(m)) }.
func Main(m *testing.M) int {
	return leakcheck.Main(m, StopShared)
}

// Database returns the URL of a new, empty database on the shared cluster.
func Database(t testing.TB) string {
	t.Helper()
	c := Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dsn, err := c.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// storeTemplate is the template UseStoreTemplate set, if any.
var storeTemplate atomic.Pointer[Template]

// UseStoreTemplate makes the PostgreSQL databases StoreLocation and
// EachDialect hand out copies of tmpl (a store at the current schema)
// instead of empty databases: a copy costs the server less than the
// schema migration the store would run on an empty one. Package teststore
// sets it when linked; a test that needs an empty database (a store's
// creation, upgrade or refusal) asks Database.
func UseStoreTemplate(tmpl Template) { storeTemplate.Store(&tmpl) }

// storeDatabase returns the URL of a new database for a store: a copy of
// the store template when one was set, else an empty one.
func storeDatabase(t testing.TB) string {
	t.Helper()
	tmpl := storeTemplate.Load()
	if tmpl == nil {
		return Database(t)
	}
	c := Shared(t)
	// The first call of a run may migrate the template: the bound is
	// Database's plus a migration on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dsn, err := c.NewDatabaseFrom(ctx, *tmpl)
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// DatabaseName returns the database name of a URL made by this package.
func DatabaseName(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(u.Path, "/")
}

// Dialects are the subtest names of EachDialect.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// EachDialect runs f once per store dialect, as subtests "sqlite" (with a
// new file in t.TempDir) and "postgres" (with a new database on the shared
// cluster, a copy of the store template when one is set); location is what store.Open and INTEROP_DB take. Each half runs
// in one tier only, so a CI pass runs each case once: the SQLite half in the
// unit tier (no tag), the PostgreSQL half with -tags postgres; the other
// half is a skipped subtest naming the tier that runs it.
func EachDialect(t *testing.T, f func(t *testing.T, location string)) {
	t.Helper()
	t.Run(SQLite, func(t *testing.T) {
		if tierEnabled {
			t.Skip("SQLite half: the unit tier (go test without -tags postgres) runs it")
		}
		f(t, filepath.Join(t.TempDir(), "interop.db"))
	})
	t.Run(Postgres, func(t *testing.T) { f(t, storeDatabase(t)) })
}

// StoreLocation is where a test's store lives: a new SQLite file in
// t.TempDir in the unit tier, or a new database on the shared cluster in
// the PostgreSQL tier (-tags postgres; a copy of the store template when
// one is set), so the store-backed suites run whole on a team store there.
func StoreLocation(t testing.TB) string {
	t.Helper()
	if tierEnabled {
		return storeDatabase(t)
	}
	return filepath.Join(t.TempDir(), "interop.db")
}
