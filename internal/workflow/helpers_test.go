package workflow

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 678_000_000, time.UTC)

// newClock is a fake clock standing at t0.
func newClock(t testing.TB) *quartz.Mock {
	return testclock.At(t, t0)
}

// fakeEnv is a map-backed LookupEnv.
type fakeEnv map[string]string

func (e fakeEnv) lookup(k string) (string, bool) { v, ok := e[k]; return v, ok }

// fakeSessions is a map-backed SessionLookup keyed by "provider:nativeId".
type fakeSessions map[string]SessionInfo

func (f fakeSessions) LookupSession(_ context.Context, provider, nativeID string) (SessionInfo, bool, error) {
	info, ok := f[provider+":"+nativeID]
	return info, ok, nil
}

type fixture struct {
	t     testing.TB
	svc   *Service
	st    *store.Store
	clock *quartz.Mock // never moves unless told to
	env   fakeEnv
	ctx   context.Context
}

func newFixture(t testing.TB, mod ...func(*Options)) *fixture {
	t.Helper()
	st := teststore.Open(t)
	f := &fixture{t: t, st: st, clock: newClock(t), env: fakeEnv{}, ctx: context.Background()}
	o := Options{Clock: f.clock, LookupEnv: f.env.lookup, Environ: func() []string { return []string{"PATH=/usr/local/bin:/usr/bin:/bin"} }}
	for _, m := range mod {
		m(&o)
	}
	f.svc = New(st, o)
	return f
}

// counts returns the row count of every coordination table.
func (f *fixture) counts() map[string]int {
	f.t.Helper()
	c := f.st.Client()
	return map[string]int{
		"works":    c.WorkItem.Query().CountX(f.ctx),
		"evidence": c.Evidence.Query().CountX(f.ctx),
		"handoffs": c.Handoff.Query().CountX(f.ctx),
		"reviews":  c.Review.Query().CountX(f.ctx),
		"deps":     c.WorkItem.Query().QueryDependsOn().CountX(f.ctx),
	}
}

// snapshot is a cheap fingerprint of the whole store's contents.
func (f *fixture) snapshot() string {
	f.t.Helper()
	g, err := f.svc.WorkGraph(f.ctx, GraphInput{Limit: 100})
	if err != nil {
		f.t.Fatalf("graph: %v", err)
	}
	raw, err := CompactJSON(g)
	if err != nil {
		f.t.Fatal(err)
	}
	return string(raw)
}

func (f *fixture) work(objective string, deps ...string) Work {
	f.t.Helper()
	w, err := f.svc.CreateWork(f.ctx, CreateWorkInput{Objective: objective, AcceptanceCriteria: []string{"it works"}, DependsOn: deps})
	if err != nil {
		f.t.Fatalf("CreateWork: %v", err)
	}
	return w
}

func (f *fixture) evidence(workID string, session string, data any) Evidence {
	f.t.Helper()
	in := AddEvidenceInput{Kind: "diff", Trust: "provider_observed", Source: EvidenceSource{Adapter: "codex"}, Summary: "a diff", Data: data}
	if workID != "" {
		in.WorkID = &workID
	}
	if session != "" {
		in.SessionID = &session
	}
	e, err := f.svc.AddEvidence(f.ctx, in)
	if err != nil {
		f.t.Fatalf("AddEvidence: %v", err)
	}
	return e
}

// wantErr checks err matches kind and contains every fragment.
func wantErr(t testing.TB, err error, kind error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want error %v %q, got nil", kind, fragments)
	}
	if kind != nil && !errors.Is(err, kind) {
		t.Fatalf("error %q is not %v", err, kind)
	}
	for _, frag := range fragments {
		if !strings.Contains(err.Error(), frag) {
			t.Fatalf("error %q does not contain %q", err, frag)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// unchanged runs fn, which must fail, and checks the store did not change.
func (f *fixture) unchanged(fn func() error) error {
	f.t.Helper()
	before, counts := f.snapshot(), f.counts()
	err := fn()
	if err == nil {
		f.t.Fatal("expected an error")
	}
	if after := f.counts(); !equalCounts(counts, after) {
		f.t.Fatalf("row counts changed on a rejected call: %v -> %v", counts, after)
	}
	if after := f.snapshot(); after != before {
		f.t.Fatalf("store changed on a rejected call:\nbefore %s\nafter  %s", before, after)
	}
	return err
}

func equalCounts(a, b map[string]int) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return len(a) == len(b)
}
