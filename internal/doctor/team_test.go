package doctor

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

// TestMain stops the PostgreSQL cluster the team-store test started.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestCheckStoreOfTeamStore: doctor connects to a team store, reports it
// opens with its dialect and schema, and never prints the password.
func TestCheckStoreOfTeamStore(t *testing.T) {
	dsn := pgtest.Database(t)
	lookup := func(k string) (string, bool) {
		if k == store.EnvDB {
			return dsn, true
		}
		return "", false
	}
	rep := CheckStore(lookup, nil)(context.Background())
	if !rep.Exists || !rep.Opens || rep.Dialect != "postgres" || rep.Error != "" || rep.SchemaVersion == "" ||
		strings.Contains(rep.Path, pgtest.Shared(t).AppPassword()) || !strings.Contains(rep.Path, "xxxxx") {
		t.Fatalf("team store report = %+v", rep)
	}
	var out strings.Builder
	if err := Render(&out, Report{Store: rep}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "postgres (team store)") || strings.Contains(out.String(), pgtest.Shared(t).AppPassword()) {
		t.Fatalf("rendered:\n%s", out.String())
	}
}
