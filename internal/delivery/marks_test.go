package delivery

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// markEnv is newEnv on a SQLite store (owner marks exist only there).
func markEnv(t *testing.T, path string, mutate ...func(*Options)) *env {
	t.Helper()
	e := newEnv(t, path, mutate...)
	if e.svc.marks == nil {
		t.Skip("a team store keeps no owner marks")
	}
	return e
}

// storeGone makes every later store read of e fail, so a pass that reads
// the store returns an error.
func storeGone(t *testing.T, e *env) {
	t.Helper()
	if err := e.st.Close(); err != nil {
		t.Fatal(err)
	}
}

func markFiles(t *testing.T, e *env) []string {
	t.Helper()
	entries, err := os.ReadDir(e.svc.marks.dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	return names
}

func hasMark(t *testing.T, e *env, id string) bool {
	t.Helper()
	for _, n := range markFiles(t, e) {
		if n == id {
			return true
		}
	}
	return false
}

// TestIdlePassReadsNothingWhileEveryOwnerRuns: once a pass has swept the
// marks, an idle process's pass does not read the store while every other
// mark's process runs; it reads and settles once one is gone.
func TestIdlePassReadsNothingWhileEveryOwnerRuns(t *testing.T) {
	a := markEnv(t, "")
	ctx := context.Background()
	release, done := inflight(t, a, "marked")
	defer func() { close(release); <-done }()
	if !hasMark(t, a, a.svc.Owner()) {
		t.Fatalf("no mark for the owner of an open operation: %v", markFiles(t, a))
	}
	b := markEnv(t, a.path, func(o *Options) { o.Clock = a.clock })
	// Not swept yet: the first pass reads the store, leaves the live
	// owner's operation alone, and records the sweep.
	if ops, err := b.svc.pass(ctx); err != nil || len(ops) != 0 {
		t.Fatalf("first pass = %+v, %v", ops, err)
	}
	if !b.svc.marks.swept() {
		t.Fatal("a pass that read the store did not record its sweep")
	}
	// An idle process beside a live owner: the pass must not read (the
	// store is closed, so a read would fail).
	c := markEnv(t, a.path, func(o *Options) { o.Clock = a.clock })
	storeGone(t, c)
	if ops, err := c.svc.pass(ctx); err != nil || len(ops) != 0 {
		t.Fatalf("idle pass beside a live owner read the store: %+v, %v", ops, err)
	}
	if n := table.watchCount(a.pid()); n < 1 {
		t.Fatalf("the live marked owner on this host is not watched (%d)", n)
	}
	// The owner dies: the pass reads the store (here: fails to).
	table.kill(a.pid())
	if _, err := c.svc.pass(ctx); err == nil {
		t.Fatal("a pass after a marked owner died did not read the store")
	}
	// With a store, the pass settles the operation and the sweep removes
	// the dead owner's mark, which owns nothing open any more.
	b.fake.LookupFunc = func(context.Context, providers.TurnQuery) (providers.TurnRecord, error) {
		return providers.TurnRecord{Source: "fake history"}, nil
	}
	ops, err := b.svc.pass(ctx)
	if err != nil || len(ops) != 1 || ops[0].Status != providers.StatusDeliveryUnknown {
		t.Fatalf("pass after the owner died = %+v, %v", ops, err)
	}
	if hasMark(t, a, a.svc.Owner()) {
		t.Errorf("the dead owner's mark survived the sweep: %v", markFiles(t, a))
	}
	if !hasMark(t, a, b.svc.Owner()) {
		t.Errorf("the settling process, now an owner, has no mark: %v", markFiles(t, a))
	}
}

// TestPassOnAStoreNoProcessCreatedReadsNothing: a process that found no
// store and owns nothing reads nothing in a pass while no process has
// created the store (the file is still empty); once another process has
// created it and recorded a send, the pass reads the store as on any
// store a pass has not swept.
func TestPassOnAStoreNoProcessCreatedReadsNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "interop.db")
	st := teststore.OpenAt(t, path, store.WithLazyConnect())
	if !st.NotCreated() {
		t.Fatal("a store opened on a missing file is not reported as not created")
	}
	reg, err := registry.New(st, nil, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := testclock.At(t, time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC))
	pid := int(1000 + nextPID.Add(1))
	svc := New(st, reg, Options{Clock: c, Process: &Process{Host: "h", Boot: "b1", PID: pid}, Alive: table.alive, WatchExit: table.watch})
	t.Cleanup(func() { svc.Close() })
	if ops, err := svc.pass(ctx); err != nil || len(ops) != 0 {
		t.Fatalf("pass on a store no process created = %+v, %v", ops, err)
	}
	if info, err := os.Stat(path); err != nil || info.Size() != 0 {
		t.Fatalf("the pass created the store (%v): it must read nothing", err)
	}

	// Another process creates the store and records a send.
	a := markEnv(t, path, func(o *Options) { o.Clock = c })
	release, done := inflight(t, a, "marked")
	defer func() { close(release); <-done }()
	if st.NotCreated() {
		t.Fatal("a store another process created is still reported as not created")
	}
	if _, err := svc.pass(ctx); err != nil {
		t.Fatalf("pass after another process created the store: %v", err)
	}
	if !svc.marks.swept() {
		t.Fatal("the pass did not read the store another process created (no sweep recorded)")
	}
}

// TestPassReadsTheStoreUntilSwept: a store no marking process has swept
// (an earlier version wrote it) is read on every pass.
func TestPassReadsTheStoreUntilSwept(t *testing.T) {
	a := markEnv(t, "")
	storeGone(t, a)
	if _, err := a.svc.pass(context.Background()); err == nil {
		t.Fatal("a pass over an unswept store did not read it")
	}
}

// TestStaleOrStoppedMarkReadsTheStore: a mark not renewed within the owner
// timeout, one from before this host restarted and one that says its
// process closed with operations open each make the pass read the store.
func TestStaleOrStoppedMarkReadsTheStore(t *testing.T) {
	cases := []struct {
		name string
		put  func(e *env, m *marks, pid int) error
	}{
		{"not renewed", func(e *env, m *marks, pid int) error {
			return m.put(Process{ID: "rt_other", Host: "h", Boot: "b1", PID: pid}, false, e.clock.Now().Add(-DefaultOwnerTimeout-time.Second))
		}},
		{"dated in the future", func(e *env, m *marks, pid int) error {
			return m.put(Process{ID: "rt_other", Host: "h", Boot: "b1", PID: pid}, false, e.clock.Now().Add(DefaultOwnerTimeout+time.Second))
		}},
		{"another boot", func(e *env, m *marks, pid int) error {
			return m.put(Process{ID: "rt_other", Host: "h", Boot: "b0", PID: pid}, false, e.clock.Now())
		}},
		{"stopped", func(e *env, m *marks, pid int) error {
			return m.put(Process{ID: "rt_other", Host: "h", Boot: "b1", PID: pid}, true, e.clock.Now())
		}},
		{"unreadable", func(e *env, m *marks, _ int) error {
			if err := os.MkdirAll(m.dir, 0o700); err != nil {
				return err
			}
			p := filepath.Join(m.dir, "rt_other")
			if err := os.WriteFile(p, []byte(strings.Repeat("{", maxMarkBytes+10)), 0o600); err != nil {
				return err
			}
			old := e.clock.Now().Add(-DefaultOwnerTimeout - time.Second)
			return os.Chtimes(p, old, old)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := markEnv(t, "")
			if _, err := e.svc.pass(context.Background()); err != nil { // sweeps
				t.Fatal(err)
			}
			live := int(nextPID.Add(1)) + 1000 // a pid the fake table runs
			if err := tc.put(e, e.svc.marks, live); err != nil {
				t.Fatal(err)
			}
			storeGone(t, e)
			if _, err := e.svc.pass(context.Background()); err == nil {
				t.Fatal("the pass did not read the store")
			}
		})
	}
}

// TestMarksThatAreNotMarksAreIgnored: files in the marks directory that
// cannot be an owner's mark (hidden, a directory, a link, a bad name) do
// not make an idle pass read the store.
func TestMarksThatAreNotMarksAreIgnored(t *testing.T) {
	e := markEnv(t, "")
	if _, err := e.svc.pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	dir := e.svc.marks.dir
	for _, f := range []string{".tmp-123", "has space", "semi;colon"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "rt_dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "rt_link")); err != nil {
		t.Fatal(err)
	}
	storeGone(t, e)
	if _, err := e.svc.pass(context.Background()); err != nil {
		t.Fatalf("an idle pass read the store for files that are not marks: %v", err)
	}
}

// TestUnmarkedOwnerIsMarkedOnItsBehalf: an owner of open operations that
// wrote no mark (an earlier version) is marked by the next pass that reads
// the store, so its death makes idle passes read it again.
func TestUnmarkedOwnerIsMarkedOnItsBehalf(t *testing.T) {
	a := markEnv(t, "")
	release, done := inflight(t, a, "unmarked")
	defer func() { close(release); <-done }()
	if err := a.svc.marks.remove(a.svc.Owner()); err != nil {
		t.Fatal(err)
	}
	b := markEnv(t, a.path, func(o *Options) { o.Clock = a.clock })
	if _, err := b.svc.pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !hasMark(t, a, a.svc.Owner()) {
		t.Fatalf("the unmarked owner was not marked: %v", markFiles(t, a))
	}
	c := markEnv(t, a.path, func(o *Options) { o.Clock = a.clock })
	storeGone(t, c)
	if _, err := c.svc.pass(context.Background()); err != nil {
		t.Fatalf("idle pass beside the live, now marked owner read the store: %v", err)
	}
	table.kill(a.pid())
	if _, err := c.svc.pass(context.Background()); err == nil {
		t.Fatal("the death of an owner marked on its behalf did not make the pass read the store")
	}
}

// TestCloseRemovesOrStopsTheMark: a process that closes owning nothing
// open removes its mark; one that closes with an operation open leaves a
// stopped mark, which makes the next idle pass read the store and settle.
func TestCloseRemovesOrStopsTheMark(t *testing.T) {
	ctx := context.Background()
	a := markEnv(t, "")
	a.fake.SendFunc = func(context.Context, string, string, providers.SendOptions) (providers.Receipt, error) {
		return providers.Receipt{Accepted: true, Status: providers.StatusCompleted}, nil
	}
	if _, err := a.svc.Send(ctx, SendRequest{Provider: "codex", NativeID: "t1", Text: "done at once"}); err != nil {
		t.Fatal(err)
	}
	if !hasMark(t, a, a.svc.Owner()) {
		t.Fatal("an owner has no mark")
	}
	if err := a.svc.Close(); err != nil {
		t.Fatal(err)
	}
	if hasMark(t, a, a.svc.Owner()) {
		t.Fatalf("a process that owned nothing open kept its mark at close: %v", markFiles(t, a))
	}

	b := markEnv(t, a.path)
	if _, err := b.svc.pass(ctx); err != nil { // sweeps
		t.Fatal(err)
	}
	c := markEnv(t, a.path)
	c.fake.SendFunc = func(context.Context, string, string, providers.SendOptions) (providers.Receipt, error) {
		return queued("turn-open")
	}
	if _, err := c.svc.Send(ctx, SendRequest{Provider: "codex", NativeID: "t1", Text: "still open"}); err != nil {
		t.Fatal(err)
	}
	if err := c.svc.Close(); err != nil {
		t.Fatal(err)
	}
	if !hasMark(t, c, c.svc.Owner()) {
		t.Fatal("a process that closed with an operation open removed its mark")
	}
	b.fake.LookupFunc = func(context.Context, providers.TurnQuery) (providers.TurnRecord, error) {
		return providers.TurnRecord{Found: true, Status: providers.StatusCompleted, Source: "fake history"}, nil
	}
	ops, err := b.svc.pass(ctx) // c's pid still runs: only the stopped mark tells
	if err != nil || len(ops) != 1 || ops[0].Status != providers.StatusCompleted {
		t.Fatalf("pass after a close with an open operation = %+v, %v", ops, err)
	}
	if hasMark(t, c, c.svc.Owner()) {
		t.Errorf("the stopped mark survived the sweep after its operation settled: %v", markFiles(t, c))
	}
}

// TestHeartbeatRenewsTheMark: each heartbeat dates the mark, and writes it
// again when a sweep removed it as stale.
func TestHeartbeatRenewsTheMark(t *testing.T) {
	a := markEnv(t, "")
	ticker := a.clock.Trap().NewTicker("delivery", "heartbeat")
	defer ticker.Close()
	release, done := inflight(t, a, "beat")
	defer func() { close(release); <-done }()
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	defer cancel()
	ticker.MustWait(ctx).MustRelease(ctx) // the heartbeat runs
	id := a.svc.Owner()
	path := a.svc.marks.path(id)
	if err := a.svc.marks.remove(id); err != nil {
		t.Fatal(err)
	}
	datedNow := func() bool {
		info, err := os.Stat(path)
		return err == nil && info.ModTime().Equal(a.clock.Now())
	}
	advanceThrough(t, a.clock, DefaultHeartbeatEvery)
	wait.For(t, "the heartbeat to write the removed mark again, dated now", wait.InProcess, datedNow)
	advanceThrough(t, a.clock, DefaultHeartbeatEvery)
	wait.For(t, "the next heartbeat to date the mark now", wait.InProcess, datedNow)
}

// TestOwningProcessAlwaysReads: a process that recorded operations reads
// the store on every pass, marks or not.
func TestOwningProcessAlwaysReads(t *testing.T) {
	a := markEnv(t, "")
	a.fake.SendFunc = func(context.Context, string, string, providers.SendOptions) (providers.Receipt, error) {
		return providers.Receipt{Accepted: true, Status: providers.StatusCompleted}, nil
	}
	if _, err := a.svc.pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := a.svc.Send(context.Background(), SendRequest{Provider: "codex", NativeID: "t1", Text: "x"}); err != nil {
		t.Fatal(err)
	}
	storeGone(t, a)
	if _, err := a.svc.pass(context.Background()); err == nil {
		t.Fatal("an owning process's pass did not read the store")
	}
}
