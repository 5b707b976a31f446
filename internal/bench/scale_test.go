package bench

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net/url"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agent-interop/runtime/internal/testutil/e2etest"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

// TestScaleSmokeOnBothStores runs `interop-bench scale` at a tiny size on
// SQLite and on a throw-away PostgreSQL cluster, so the seeding, the
// served runtime on a team store and the comparison table cannot rot.
// The figures are not checked (the machine is shared); what is checked is
// that every call was measured and answered from the seeded store.
func TestScaleSmokeOnBothStores(t *testing.T) {
	// Builds and runs the runtime (the end-to-end tier) and starts a
	// PostgreSQL cluster (the PostgreSQL tier): it runs with both tags.
	e2etest.Require(t)
	pgtest.RequireTier(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root, err := ModuleRoot(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunScale(ctx, ScaleConfig{ModuleDir: root, Sizes: []int{100}, Calls: 2, Warmup: 1,
		Timeout: time.Minute, Stores: []string{StoreSQLite, StorePostgres}})
	if errors.Is(err, pgtest.ErrNotInstalled) && os.Getenv("CI") != "true" {
		t.Skipf("PostgreSQL not installed: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rep.Postgres, "PostgreSQL ") {
		t.Errorf("report names no PostgreSQL server: %q", rep.Postgres)
	}
	if len(rep.Sizes) != 2 || rep.Sizes[0].Store != StoreSQLite || rep.Sizes[1].Store != StorePostgres {
		t.Fatalf("sizes = %+v, want 100 on sqlite then on postgres", rep.Sizes)
	}
	calls := scaleCalls()
	for _, sz := range rep.Sizes {
		if sz.Seed.Works != 100 || sz.Seed.Claims != 100 || sz.Seed.Messages != 100 || sz.Seed.Events != 100 {
			t.Errorf("%s: seed = %+v", sz.name(), sz.Seed)
		}
		if sz.StoreMiB <= 0 || sz.PeakRSSMiB <= 0 {
			t.Errorf("%s: store %v MiB, peak RSS %v MiB", sz.name(), sz.StoreMiB, sz.PeakRSSMiB)
		}
		if runtime.GOOS == "linux" && (sz.AnonMiB <= 0 || sz.AnonMiB > sz.PeakRSSMiB) {
			t.Errorf("%s: RssAnon %v MiB, peak RSS %v MiB; want 0 < RssAnon <= peak", sz.name(), sz.AnonMiB, sz.PeakRSSMiB)
		}
		if len(sz.Rows) != len(calls) {
			t.Fatalf("%s: %d rows, want %d", sz.name(), len(sz.Rows), len(calls))
		}
		for i, row := range sz.Rows {
			if row.Label != calls[i].label || math.IsNaN(float64(row.P50Us)) || row.P50Us <= 0 || row.Tokens <= 0 {
				t.Errorf("%s: row %d = %+v", sz.name(), i, row)
			}
			if row.Error != "" && !row.Provider {
				t.Errorf("%s: %s answered a tool error: %s", sz.name(), row.Label, row.Error)
			}
			// Both stores page alike; a runtime that opened an empty store
			// instead of the seeded one would offer no second page.
			if row.Label == "list_work_items" && !row.NextCursor {
				t.Errorf("%s: list_work_items offered no next page: not the seeded store", sz.name())
			}
			if other := rep.Sizes[0].Rows[i]; row.NextCursor != other.NextCursor {
				t.Errorf("%s: nextCursor %v on %s, %v on sqlite", row.Label, row.NextCursor, sz.Store, other.NextCursor)
			}
		}
	}
	var out bytes.Buffer
	if err := rep.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sqlite:\n", "postgres:\n", "PostgreSQL beside SQLite", "median × of the store-bound calls",
		"the PostgreSQL server's own are not counted", "on postgres:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), pgtest.AppRole+":") {
		t.Errorf("table shows the database URL with its password:\n%s", out.String())
	}
}

func TestScaleChecksPerStore(t *testing.T) {
	size := func(store string, n int, p50 Figure, errText string) ScaleSize {
		return ScaleSize{Store: store, N: n, PeakRSSMiB: 50, Rows: []ScaleRow{
			{Label: "list_work_items", P50Us: p50, Tokens: 2000, Bytes: 7000, Budget: 8000, Error: errText},
			{Label: "list_providers", P50Us: 9000, Provider: true, Error: "codex not installed"},
		}}
	}
	tests := []struct {
		name  string
		sizes []ScaleSize
		want  map[string]string // check target prefix → status
	}{
		{"flat on both", []ScaleSize{size(StoreSQLite, 1000, 1000, ""), size(StoreSQLite, 100000, 1100, ""),
			size(StorePostgres, 1000, 1500, ""), size(StorePostgres, 100000, 1600, "")},
			map[string]string{
				"every store-bound call p50 at 100000 ≤ 2× its p50 at 1000 on sqlite":   "pass",
				"every store-bound call p50 at 100000 ≤ 2× its p50 at 1000 on postgres": "pass",
				"every store-bound call answered without a tool error on postgres":      "pass",
			}},
		{"postgres grows", []ScaleSize{size(StoreSQLite, 1000, 1000, ""), size(StoreSQLite, 100000, 1100, ""),
			size(StorePostgres, 1000, 1500, ""), size(StorePostgres, 100000, 23000, "")},
			map[string]string{
				"every store-bound call p50 at 100000 ≤ 2× its p50 at 1000 on sqlite":   "pass",
				"every store-bound call p50 at 100000 ≤ 2× its p50 at 1000 on postgres": "FAIL",
				"every store-bound call p50 ≤ 5 ms at 100000 on postgres":               "FAIL",
			}},
		{"a refused store", []ScaleSize{size(StorePostgres, 1000, 300, "store schema version differs"), size(StorePostgres, 100000, 300, "store schema version differs")},
			map[string]string{
				// One dialect: the targets carry no "on postgres".
				"every store-bound call answered without a tool error": "FAIL",
				"every store-bound call p50 ≤ 5 ms at 100000":          "pass",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &ScaleReport{Sizes: tt.sizes}
			r.check()
			got := map[string]string{}
			for _, c := range r.Checks {
				got[c.Target] = c.Status
			}
			for target, status := range tt.want {
				if got[target] != status {
					t.Errorf("check %q = %q, want %q (all: %v)", target, got[target], status, got)
				}
			}
		})
	}
}

// TestScaleOnAGivenServer is `interop-bench scale -store postgres -db URL`:
// the URL carries no password (PGPASSWORD does, as the command demands),
// each size gets a schema of its own, and the schemas are gone afterwards.
func TestScaleOnAGivenServer(t *testing.T) {
	e2etest.Require(t) // builds and runs the runtime; pgtest.Database needs the postgres tag
	dsn := pgtest.Database(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	password, _ := u.User.Password()
	u.User = url.User(u.User.Username())
	t.Setenv("PGPASSWORD", password)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root, err := ModuleRoot(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunScale(ctx, ScaleConfig{ModuleDir: root, Sizes: []int{100}, Calls: 1, Timeout: time.Minute,
		Stores: []string{StorePostgres}, PostgresURL: u.String()})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Postgres, u.Host) || strings.Contains(rep.Postgres, password) {
		t.Errorf("report names the server as %q", rep.Postgres)
	}
	if len(rep.Sizes) != 1 {
		t.Fatalf("sizes = %+v", rep.Sizes)
	}
	for _, row := range rep.Sizes[0].Rows {
		if row.Error != "" && !row.Provider {
			t.Errorf("%s answered a tool error: %s", row.Label, row.Error)
		}
		if row.Label == "list_work_items" && !row.NextCursor {
			t.Error("list_work_items offered no next page: not the seeded store")
		}
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var left int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM information_schema.schemata WHERE schema_name LIKE 'interop\\_bench\\_%'").Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d interop_bench_ schemas left behind", left)
	}
}
