package registry

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry/registrytest"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

func TestListProvidersInOrderWithoutFabrication(t *testing.T) {
	st := teststore.Open(t)
	oc := &registrytest.Adapter{Provider: providers.OpenCode}
	cx := &registrytest.Adapter{Provider: providers.Codex, CapsFunc: func(context.Context) providers.Capabilities {
		down := providers.Capability{Supported: true, State: providers.Unavailable, Reason: "codex program not found"}
		return providers.Capabilities{Provider: providers.Codex, Sessions: down}
	}}
	r, err := New(st, []providers.Adapter{cx, oc}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	caps := r.ListProviders(context.Background())
	var ids []string
	for _, c := range caps {
		ids = append(ids, string(c.Provider))
	}
	if !slices.Equal(ids, func() (out []string) {
		for _, id := range providers.Order() {
			out = append(out, string(id))
		}
		return
	}()) || ids[0] != "freebuff" || ids[4] != "cursor" {
		t.Fatalf("order = %v", ids)
	}
	if caps[0].Sessions.State != providers.Unavailable || !strings.Contains(caps[0].Sessions.Reason, "no adapter configured") {
		t.Fatalf("freebuff = %+v", caps[0].Sessions)
	}
	if caps[2].Sessions.Reason != "codex program not found" || caps[1].Sessions.State != providers.Available {
		t.Fatalf("caps = %+v", caps)
	}
	if _, err := New(st, []providers.Adapter{oc, oc}, Options{}); err == nil {
		t.Fatal("duplicate adapters accepted")
	}
}

func TestListSessionsReportsFailuresSeparately(t *testing.T) {
	st := teststore.Open(t)
	oc := &registrytest.Adapter{Provider: providers.OpenCode, EndpointName: "http://127.0.0.1:4096"}
	oc.SetSessions([]providers.Session{oc.Session("ses_1", "one"), oc.Session("ses_2", "two")}, nil)
	cx := &registrytest.Adapter{Provider: providers.Codex}
	cx.SetSessions(nil, errors.New("codex app-server failed to start: exit status 1"))
	r, _ := New(st, []providers.Adapter{oc, cx}, Options{})
	ctx := context.Background()
	got, err := r.ListSessions(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Sessions) != 2 || len(got.ProviderErrors) != 1 || got.ProviderErrors[0].Provider != providers.Codex ||
		!strings.Contains(got.ProviderErrors[0].Error, "exit status 1") {
		t.Fatalf("list = %+v", got)
	}
	one, err := r.ListSessions(ctx, "codex")
	if err != nil || len(one.Sessions) != 0 || len(one.ProviderErrors) != 1 {
		t.Fatalf("codex only = %+v, %v", one, err)
	}
	if _, err := r.ListSessions(ctx, "bogus"); err == nil || !strings.HasPrefix(err.Error(), "Unknown provider bogus") {
		t.Fatalf("unknown provider = %v", err)
	}
	nc, err := r.ListSessions(ctx, "cursor")
	if err != nil || len(nc.ProviderErrors) != 1 || !strings.Contains(nc.ProviderErrors[0].Error, "no adapter configured") {
		t.Fatalf("unconfigured = %+v, %v", nc, err)
	}
	// Recorded with their endpoint.
	n, err := st.Client().ProviderSession.Query().Count(ctx)
	if err != nil || n != 2 {
		t.Fatalf("recorded %d, %v", n, err)
	}
}

func TestSessionStaysOnTheEndpointThatExposedIt(t *testing.T) {
	st := teststore.Open(t)
	a := &registrytest.Adapter{Provider: providers.OpenCode, EndpointName: "http://127.0.0.1:1111"}
	b := &registrytest.Adapter{Provider: providers.OpenCode, EndpointName: "http://127.0.0.1:2222"}
	a.Endpoints = map[string]*registrytest.Adapter{b.EndpointName: b}
	a.SetSessions([]providers.Session{a.Session("ses_1", "first")}, nil)
	clock := testclock.At(t, time.Unix(1, 0))
	r, _ := New(st, []providers.Adapter{a}, Options{Clock: clock})
	ctx := context.Background()
	if _, err := r.ListSessions(ctx, "opencode"); err != nil {
		t.Fatal(err)
	}
	// The adapter's current server changes; the same session now shows
	// up on server 2, but it keeps routing to server 1.
	a.EndpointName = b.EndpointName
	s := a.Session("ses_1", "renamed")
	a.SetSessions([]providers.Session{s}, nil)
	got, _ := r.ListSessions(ctx, "opencode")
	if got.Sessions[0].Endpoint != "http://127.0.0.1:1111" || got.Sessions[0].Title != "renamed" {
		t.Fatalf("session = %+v", got.Sessions[0])
	}
	rt, err := r.Resolve(ctx, "opencode", "ses_1")
	if err == nil {
		t.Fatalf("routed to %v although endpoint 1 is gone", rt.Endpoint)
	}
	if !strings.Contains(err.Error(), "http://127.0.0.1:1111 is gone") {
		t.Fatalf("route error = %v", err)
	}
	// A session first seen on server 2 routes there.
	a.SetSessions([]providers.Session{a.Session("ses_2", "second")}, nil)
	r.ListSessions(ctx, "opencode")
	rt, err = r.Resolve(ctx, "opencode", "ses_2")
	if err != nil || rt.Adapter != providers.Adapter(a) || rt.Endpoint != "http://127.0.0.1:2222" {
		t.Fatalf("route = %+v, %v", rt, err)
	}
}

func TestResolveUnknownSessionAndUnsupported(t *testing.T) {
	st := teststore.Open(t)
	a := &registrytest.Adapter{Provider: providers.Codex, EndpointName: "stdio:codex"}
	a.SetSessions([]providers.Session{a.Session("t1", "x")}, nil)
	r, _ := New(st, []providers.Adapter{a}, Options{})
	ctx := context.Background()
	_, err := r.Resolve(ctx, "codex", "nope")
	var us *UnknownSessionError
	if !errors.As(err, &us) || !us.NotFound() || !strings.HasPrefix(err.Error(), "Unknown session codex:nope") {
		t.Fatalf("unknown session = %v", err)
	}
	// A session never listed is looked up and recorded.
	rt, err := r.Resolve(ctx, "codex", "t1")
	if err != nil || rt.Endpoint != "stdio:codex" {
		t.Fatalf("resolve = %+v, %v", rt, err)
	}
	if _, err := r.Diff(ctx, "codex", "t1", providers.DiffOptions{}); err == nil || !strings.Contains(err.Error(), "codex does not expose native diff: codex does not support diff") {
		t.Fatalf("diff = %v", err)
	}
	if _, err := r.Resolve(ctx, "cursor", "x"); !errors.As(err, new(*NotConfiguredError)) {
		t.Fatalf("unconfigured = %v", err)
	}
	if _, err := r.Resolve(ctx, "zed", "x"); !errors.As(err, new(*UnknownProviderError)) {
		t.Fatalf("unknown provider = %v", err)
	}
	s, err := r.CreateSession(ctx, "codex", providers.CreateOptions{Title: "made"})
	if err != nil || s.Endpoint != "stdio:codex" {
		t.Fatalf("create = %+v, %v", s, err)
	}
	if rt, err := r.Resolve(ctx, "codex", s.NativeID); err != nil || rt.NativeID != s.NativeID {
		t.Fatalf("created session route = %+v, %v", rt, err)
	}
}

type rec struct {
	outcomes []string
	events   []string
}

func (r *rec) ReportOutcome(_ providers.ID, nativeID, ref string, o providers.Outcome) {
	r.outcomes = append(r.outcomes, nativeID+"/"+ref+"/"+string(o.Status))
}
func (r *rec) ReportEvent(_ providers.ID, ev providers.NativeEvent) {
	r.events = append(r.events, ev.NativeID+"/"+ev.Type)
}

func TestHostKeepsEarlyReports(t *testing.T) {
	h := NewHost()
	h.ReportOutcome(providers.Codex, "t", "turn1", providers.Outcome{Status: providers.StatusCompleted})
	h.ReportEvent(providers.Codex, providers.NativeEvent{NativeID: "t", Type: providers.EventProviderRestarted})
	r := &rec{}
	h.ForwardOutcomes(r)
	h.ForwardEvents(r)
	h.ReportOutcome(providers.Codex, "t", "turn2", providers.Outcome{Status: providers.StatusRejected})
	if strings.Join(r.outcomes, ",") != "t/turn1/completed,t/turn2/rejected" || strings.Join(r.events, ",") != "t/provider.restarted" {
		t.Fatalf("reports = %+v", r)
	}
}

func TestLastKnownNeverContactsTheProvider(t *testing.T) {
	st := teststore.Open(t)
	calls := 0
	cx := &registrytest.Adapter{Provider: providers.Codex, CapsFunc: func(context.Context) providers.Capabilities {
		calls++
		return providers.Capabilities{Provider: providers.Codex, Sessions: providers.Capability{Supported: true, State: providers.Degraded, Reason: "slow"}}
	}}
	r, err := New(st, []providers.Adapter{cx}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.LastKnown(providers.Codex); ok || calls != 0 {
		t.Fatalf("known before any check (calls %d)", calls)
	}
	if k, ok := r.LastKnown(providers.Cursor); !ok || k.Capabilities.Sessions.State != providers.Unavailable {
		t.Fatalf("a provider without adapter must be known unavailable: %+v", k)
	}
	r.ListProviders(context.Background())
	k, ok := r.LastKnown(providers.Codex)
	if !ok || k.Capabilities.Sessions.Reason != "slow" || k.CheckedAt.IsZero() || calls != 1 {
		t.Fatalf("after list: %+v %v calls %d", k, ok, calls)
	}
}

// TestAdapterCallTimeoutRunsOnTheClock: an adapter that does not answer
// is cut at the registry's timeout on its injected clock (the mock here:
// the test does not wait 20 s).
func TestAdapterCallTimeoutRunsOnTheClock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	defer cancel()
	clock := testclock.At(t, time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC))
	trap := clock.Trap().AfterFunc("registry", "adapter call")
	defer trap.Close()
	cx := &registrytest.Adapter{Provider: providers.Codex, CapsFunc: func(ctx context.Context) providers.Capabilities {
		<-ctx.Done() // never answers by itself
		return providers.Capabilities{Provider: providers.Codex, Sessions: providers.Capability{Supported: true, State: providers.Unavailable, Reason: ctx.Err().Error()}}
	}}
	r, err := New(teststore.Open(t), []providers.Adapter{cx}, Options{Clock: clock, CapabilityTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []providers.Capabilities, 1)
	go func() { done <- r.ListProviders(ctx) }()
	call, err := trap.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if call.Duration != 20*time.Second {
		t.Fatalf("adapter call bounded by %s, want 20s", call.Duration)
	}
	call.MustRelease(ctx)
	clock.Advance(20 * time.Second).MustWait(ctx)
	select {
	case list := <-done:
		for _, c := range list {
			if c.Provider == providers.Codex && !strings.Contains(c.Sessions.Reason, context.DeadlineExceeded.Error()) {
				t.Fatalf("codex = %+v, want cut at its deadline", c)
			}
		}
	case <-ctx.Done():
		t.Fatal("ListProviders did not end when the clock passed the adapter timeout")
	}
}
