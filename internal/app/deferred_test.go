package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

func deferredEnv(t *testing.T, path string) Config {
	t.Helper()
	env := map[string]string{"INTEROP_DB": path}
	return Config{Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
}

// closeSwept waits for a settlement pass to sweep the owner marks of the
// store at path, then closes what ran it.
func closeSwept(t *testing.T, path string, c interface{ Close() error }) {
	t.Helper()
	wait.For(t, "a settlement pass to sweep the owner marks", wait.InProcess, func() bool {
		_, err := os.Stat(path + ".owners/.swept")
		return err == nil
	})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

func assembled(d *Deferred) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.app != nil
}

// TestDeferredAssemblesOnFirstUse: OpenDeferred opens the store and builds
// nothing else; the first Handlers assembles the runtime once.
func TestDeferredAssemblesOnFirstUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "interop.db")
	d, err := OpenDeferred(context.Background(), deferredEnv(t, path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the store was not opened (created) at once: %v", err)
	}
	if assembled(d) {
		t.Fatal("OpenDeferred assembled the runtime")
	}
	h1, err := d.Handlers(context.Background())
	if err != nil || h1 == nil {
		t.Fatalf("Handlers = %v, %v", h1, err)
	}
	h2, _ := d.Handlers(context.Background())
	if h1 != h2 {
		t.Error("a second Handlers assembled the runtime again")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Handlers(context.Background()); err == nil {
		t.Error("Handlers after Close answered")
	}
}

// TestDeferredRefusesABadStoreAtOnce: what stops serve before it answers
// still does.
func TestDeferredRefusesABadStoreAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "interop.db")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenDeferred(context.Background(), deferredEnv(t, path)); err == nil || !strings.Contains(err.Error(), "open the state store") {
		t.Fatalf("a directory as the store: %v", err)
	}
}

// waitTwoJudgements starts d's start-up work on a mock clock and returns
// once it has judged the marks at once and again at the next tick, still
// waiting; the channel closes when the start-up work returns.
func waitTwoJudgements(t *testing.T, d *Deferred) <-chan struct{} {
	t.Helper()
	clock := testclock.At(t, time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC))
	d.clock = clock
	judged := clock.Trap().Now("delivery", "marks")
	defer judged.Close()
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	defer cancel()
	returned := make(chan struct{})
	go func() { defer close(returned); d.AfterInitialize(context.Background()) }()
	judged.MustWait(ctx).MustRelease(ctx)
	clock.Advance(delivery.DefaultSettleEvery).MustWait(ctx)
	judged.MustWait(ctx).MustRelease(ctx)
	return returned
}

// TestDeferredSettlementWaitsOnAQuietStore: on a store whose marks were
// swept and show nobody, the start-up work assembles nothing and ends at
// Close; on a store never swept it assembles the runtime to settle.
func TestDeferredSettlementWaitsOnAQuietStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "interop.db")
	if err := teststore.OpenAt(t, path).Close(); err != nil { // made by a runtime that never swept
		t.Fatal(err)
	}
	first, err := OpenDeferred(context.Background(), deferredEnv(t, path))
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	go func() { defer close(started); first.AfterInitialize(context.Background()) }()
	wait.For(t, "the start-up work on a store never swept to assemble the runtime", wait.InProcess, func() bool { return assembled(first) })
	<-started
	closeSwept(t, path, first)

	quiet, err := OpenDeferred(context.Background(), deferredEnv(t, path))
	if err != nil {
		t.Fatal(err)
	}
	returned := waitTwoJudgements(t, quiet)
	if assembled(quiet) {
		t.Fatal("the start-up work on a quiet store assembled the runtime")
	}
	if err := quiet.Close(); err != nil {
		t.Fatal(err)
	}
	wait.Recv(t, "the start-up work to end at Close", wait.InProcess, returned)
	if assembled(quiet) {
		t.Fatal("the runtime was assembled on the way out")
	}
}

// TestDeferredWaitEndsWhenACallAssembles: a tool call that assembles the
// runtime while the start-up work waits on a quiet store ends the wait
// (the App's own settlement runs from then on).
func TestDeferredWaitEndsWhenACallAssembles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "interop.db")
	// The store exists first: a settlement pass creates no store (on a
	// file no process has created it reads nothing, and sweeps nothing).
	if err := teststore.OpenAt(t, path).Close(); err != nil {
		t.Fatal(err)
	}
	sweep, err := Open(context.Background(), deferredEnv(t, path))
	if err != nil {
		t.Fatal(err)
	}
	sweep.AfterInitialize(context.Background())
	closeSwept(t, path, sweep)
	d, err := OpenDeferred(context.Background(), deferredEnv(t, path))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	returned := make(chan struct{})
	go func() { defer close(returned); d.AfterInitialize(context.Background()) }()
	wait.For(t, "the start-up work to wait", wait.InProcess, func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.endWait != nil
	})
	if _, err := d.Handlers(context.Background()); err != nil {
		t.Fatal(err)
	}
	wait.Recv(t, "the start-up work to end once a call assembled the runtime", wait.InProcess, returned)
}

// fileSize is the size of the file at path.
func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}

// TestDeferredLeavesANewStoreEmptyUntilUsed: on a new store the start-up
// work waits (nothing can have been left in it), the file stays empty
// while the server is not called, and the first store call creates the
// schema, also when an earlier server left the empty file.
func TestDeferredLeavesANewStoreEmptyUntilUsed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "interop.db")
	idle, err := OpenDeferred(context.Background(), deferredEnv(t, path))
	if err != nil {
		t.Fatal(err)
	}
	if !idle.st.StartedEmpty() {
		t.Fatal("a new store is not reported as started empty")
	}
	returned := waitTwoJudgements(t, idle)
	if assembled(idle) {
		t.Fatal("the start-up work on a new store assembled the runtime")
	}
	if n := fileSize(t, path); n != 0 {
		t.Fatalf("an idle server wrote %d bytes into its new store", n)
	}
	if err := idle.Close(); err != nil {
		t.Fatal(err)
	}
	wait.Recv(t, "the start-up work to end at Close", wait.InProcess, returned)
	if n := fileSize(t, path); n != 0 {
		t.Fatalf("closing an idle server wrote %d bytes into its new store", n)
	}

	used, err := OpenDeferred(context.Background(), deferredEnv(t, path))
	if err != nil {
		t.Fatal(err)
	}
	defer used.Close()
	if !used.st.StartedEmpty() {
		t.Fatal("an empty store file is not reported as started empty")
	}
	a, err := used.App()
	if err != nil {
		t.Fatal(err)
	}
	var metaRows int
	if err := a.Store.DB().QueryRowContext(context.Background(), "SELECT count(*) FROM interop_meta").Scan(&metaRows); err != nil {
		t.Fatalf("the first store call: %v", err)
	}
	if !a.Store.Migrated() {
		t.Error("the first store call did not create the schema")
	}
	again, err := store.Open(context.Background(), path, store.WithoutUpgrade())
	if err != nil {
		t.Fatalf("the created store does not open: %v", err)
	}
	defer again.Close()
	if again.Migrated() || again.StartedEmpty() {
		t.Error("the created store did not take the fast path")
	}
}
