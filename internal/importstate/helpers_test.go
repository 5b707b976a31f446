package importstate

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/providers/registry/registrytest"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
	"github.com/agent-interop/runtime/internal/workflow"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// importNow is the fixtures' import time: claim_full_active and the normal
// claim are still active then.
var importNow = time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)

// fixedClock is a fake clock standing at importNow.
func fixedClock(t quartz.TestingT) *quartz.Mock {
	return testclock.At(t, importNow)
}

// fixture names the two files of a fixture directory.
func fixture(dir string) (state, convs string) {
	return filepath.Join("testdata", dir, "state.json"), filepath.Join("testdata", dir, "conversations.json")
}

// run imports a fixture directory into the store at db.
func run(t *testing.T, dir, db string, dryRun bool) (*Report, error) {
	t.Helper()
	state, convs := fixture(dir)
	return Run(context.Background(), Config{StateFile: state, ConversationsFile: convs, Store: db, DryRun: dryRun, Clock: fixedClock(t),
		Lookup: func(string) (string, bool) { return "", false }})
}

// mustRun is run that fails the test on an error.
func mustRun(t *testing.T, dir, db string) *Report {
	t.Helper()
	rep, err := run(t, dir, db, false)
	if err != nil {
		t.Fatalf("import %s: %v", dir, err)
	}
	return rep
}

// newDB is a store path in a fresh directory (the file does not exist).
func newDB(t *testing.T) string { return filepath.Join(t.TempDir(), "interop.db") }

// dump is every row of every table an import writes, as JSON, so two
// states of a store compare exactly.
func dump(t *testing.T, db string) string {
	t.Helper()
	if _, err := os.Stat(db); err != nil {
		return "no store: " + err.Error()
	}
	st := teststore.OpenAt(t, db)
	ctx := context.Background()
	out := map[string]any{}
	err := st.Read(ctx, func(tx *ent.Tx) error {
		var err error
		if out["works"], err = tx.WorkItem.Query().WithDependsOn().Order(ent.Asc("id")).All(ctx); err != nil {
			return err
		}
		if out["evidence"], err = tx.Evidence.Query().Order(ent.Asc("id")).All(ctx); err != nil {
			return err
		}
		if out["handoffs"], err = tx.Handoff.Query().Order(ent.Asc("id")).All(ctx); err != nil {
			return err
		}
		if out["reviews"], err = tx.Review.Query().Order(ent.Asc("id")).All(ctx); err != nil {
			return err
		}
		if out["claims"], err = tx.Claim.Query().Order(ent.Asc("id")).All(ctx); err != nil {
			return err
		}
		if out["conversations"], err = tx.Conversation.Query().Order(ent.Asc("id")).All(ctx); err != nil {
			return err
		}
		if out["participants"], err = tx.Participant.Query().Order(ent.Asc("id")).All(ctx); err != nil {
			return err
		}
		if out["messages"], err = tx.Message.Query().Order(ent.Asc("id")).All(ctx); err != nil {
			return err
		}
		out["operations"], err = tx.Operation.Query().Order(ent.Asc("id")).All(ctx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// services reads the store back the way the MCP tools do.
type services struct {
	st     *store.Store
	work   *workflow.Service
	conv   *conversations.Service
	ledger *delivery.Service
	fake   *registrytest.Adapter
}

func newServices(t *testing.T, db string) *services {
	t.Helper()
	st := teststore.OpenAt(t, db)
	fake := &registrytest.Adapter{Provider: providers.Codex, EndpointName: "stdio:fake"}
	reg, err := registry.New(st, []providers.Adapter{fake}, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ledger := delivery.New(st, reg, delivery.Options{Clock: fixedClock(t)})
	t.Cleanup(func() { ledger.Close() })
	return &services{
		st: st, fake: fake, ledger: ledger,
		work: workflow.New(st, workflow.Options{Clock: fixedClock(t), LookupEnv: func(string) (string, bool) { return "", false }}),
		conv: conversations.New(st, ledger, conversations.WithClock(fixedClock(t))),
	}
}

// golden compares got with testdata/<name>, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}
