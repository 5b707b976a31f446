package freebuff

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
	"github.com/agent-interop/runtime/internal/testutil/freebuffsim"
)

type outcome struct {
	nativeID, ref, reason string
	status                providers.ReceiptStatus
	turn                  *providers.TurnResult
}

// fakeHost records reported outcomes.
type fakeHost struct{ ch chan outcome }

func newFakeHost() *fakeHost { return &fakeHost{ch: make(chan outcome, 16)} }

func (h *fakeHost) ReportOutcome(p providers.ID, nativeID, ref string, o providers.Outcome) {
	if p != providers.Freebuff {
		panic("wrong provider " + string(p))
	}
	h.ch <- outcome{nativeID: nativeID, ref: ref, status: o.Status, reason: o.Reason, turn: o.Turn}
}

func (h *fakeHost) next(t *testing.T) outcome {
	t.Helper()
	select {
	case o := <-h.ch:
		return o
	case <-guard(t).Done():
		t.Fatal("no outcome reported")
		return outcome{}
	}
}

func TestAdapterDesktop(t *testing.T) {
	f := newDesktopFixture(t, freebuffsim.Options{}, true)
	host := newFakeHost()
	a := NewAdapter(f.svc, host)
	ctx := context.Background()
	tid := f.threads[0]

	caps := a.Capabilities(ctx)
	if caps.Provider != providers.Freebuff || caps.Authorization != "authorized" || caps.SendMessage.State != providers.Available ||
		caps.Steer.Supported || caps.Diff.Supported || caps.Permissions.Supported || caps.Model.State != providers.Available ||
		caps.SendMessage.Transport != "http" {
		t.Fatalf("capabilities = %+v", caps)
	}
	sessions, err := a.ListSessions(ctx)
	if err != nil || len(sessions) != 2 || sessions[0].ID != "freebuff:"+tid || sessions[0].NativeID != tid ||
		sessions[0].Endpoint != f.sim.URL() || !sessions[0].Provenance.Native || sessions[0].CWD != f.project {
		t.Fatalf("sessions = %+v, %v", sessions, err)
	}
	if s, err := a.GetSession(ctx, "unknown-thread"); s != nil || err != nil {
		t.Fatalf("unknown session = %+v, %v", s, err)
	}

	// Subscribe before sending: the stream carries this thread's events.
	sctx, cancel := context.WithCancel(ctx)
	events, err := a.Subscribe(sctx, tid)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := a.Send(ctx, tid, "through the adapter", providers.SendOptions{})
	if err != nil || rec.Status != providers.StatusQueued || rec.Ref == "" {
		t.Fatalf("send = %+v, %v", rec, err)
	}
	o := host.next(t)
	if o.ref != rec.Ref || o.status != providers.StatusCompleted || o.nativeID != tid {
		t.Fatalf("outcome = %+v (ref %s)", o, rec.Ref)
	}
	sawText := false
	for !sawText {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("subscription closed early")
			}
			var pe ProgressEvent
			must(t, json.Unmarshal(ev.Data, &pe))
			if ev.NativeID != tid || pe.ThreadID != tid || ev.Type != pe.Kind {
				t.Fatalf("event = %+v", ev)
			}
			sawText = pe.Kind == core.KindAssistantText && strings.Contains(pe.Text, "through the adapter")
		case <-guard(t).Done():
			t.Fatal("no assistant text on the subscription")
		}
	}
	// A failing turn is reported rejected with the provider's reason.
	f.sim.SetTurnMode(freebuffsim.TurnFail)
	rec, err = a.Send(ctx, tid, "fail please", providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o = host.next(t)
	if o.ref != rec.Ref || o.status != providers.StatusRejected || o.reason != "model overloaded" {
		t.Fatalf("outcome = %+v", o)
	}
	// The provider stream ending closes the channel.
	f.sim.DropClients()
	for range events {
	}
	cancel()

	var un *providers.UnsupportedError
	if _, err := a.Send(ctx, tid, "x", providers.SendOptions{Mode: "steer"}); !errors.As(err, &un) || un.Reason != reasonSteer {
		t.Fatalf("steer: %v", err)
	}
	if _, err := a.Send(ctx, tid, "x", providers.SendOptions{Reasoning: "high"}); !errors.As(err, &un) {
		t.Fatalf("per-prompt reasoning: %v", err)
	}
	if _, err := a.Diff(ctx, tid, providers.DiffOptions{}); !errors.As(err, &un) {
		t.Fatalf("diff: %v", err)
	}
	if _, err := a.PendingPermissions(ctx); !errors.As(err, &un) {
		t.Fatalf("permissions: %v", err)
	}
	if _, err := a.RespondPermission(ctx, tid, "r", "allow"); !errors.As(err, &un) {
		t.Fatalf("respond: %v", err)
	}
	if r, err := a.Cancel(ctx, tid); err != nil || r.Operation != "cancel" {
		t.Fatalf("cancel = %+v, %v", r, err)
	}
	if _, err := a.SetModel(ctx, tid, providers.Model{ProviderID: "openai", ModelID: "gpt-5.1"}); err != nil {
		t.Fatal(err)
	}
	if _, st, _ := f.sim.Thread(tid); st["model"] != "openai/gpt-5.1" {
		t.Fatalf("model = %v", st["model"])
	}
	if _, err := a.SetReasoning(ctx, tid, "medium"); err != nil {
		t.Fatal(err)
	}
	created, err := a.CreateSession(ctx, providers.CreateOptions{CWD: f.project, Title: "Made by the adapter"})
	if err != nil || created.Title != "Made by the adapter" || created.Provider != providers.Freebuff {
		t.Fatalf("created = %+v, %v", created, err)
	}
	resumed, err := a.ResumeSession(ctx, created.NativeID)
	if err != nil || resumed.NativeID != created.NativeID {
		t.Fatalf("resumed = %+v, %v", resumed, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestAdapterDesktopReadOnlyCapabilities(t *testing.T) {
	f := newDesktopFixture(t, freebuffsim.Options{Auth: freebuffsim.AuthV0124}, false)
	caps := NewAdapter(f.svc, nil).Capabilities(context.Background())
	if caps.Authorization != "unauthorized" || caps.SendMessage.State != providers.Degraded || caps.SendMessage.Reason != ReasonDesktopUnverified ||
		caps.Sessions.State != providers.Available {
		t.Fatalf("capabilities = %+v", caps)
	}
	none := New(Config{LookupEnv: newEnv(nil).lookup, ProcDir: "-", HomeDir: t.TempDir(), WorkDir: t.TempDir()})
	defer none.Close()
	caps = NewAdapter(none, nil).Capabilities(context.Background())
	if caps.Discovery.State != providers.Unavailable || caps.Discovery.Fix == "" || caps.Authorization != "unknown" {
		t.Fatalf("capabilities with nothing found = %+v", caps)
	}
	if _, err := NewAdapter(none, nil).ListSessions(context.Background()); err == nil {
		t.Fatal("ListSessions with nothing found must explain, not return an empty list")
	}
}

func TestAdapterCLI(t *testing.T) {
	f := newCLIFixture(t, true, nil)
	host := newFakeHost()
	a := NewAdapter(f.svc, host)
	ctx := context.Background()
	caps := a.Capabilities(ctx)
	if caps.SendMessage.State != providers.Available || caps.Model.Supported || caps.Reasoning.Supported || caps.Events.Supported ||
		caps.SendMessage.Transport != "managed PTY" || caps.Program == "" {
		t.Fatalf("capabilities = %+v", caps)
	}
	s, err := a.CreateSession(ctx, providers.CreateOptions{CWD: f.project})
	if err != nil || !strings.HasPrefix(s.Endpoint, "freebuff pty pid ") {
		t.Fatalf("session = %+v, %v", s, err)
	}
	rec, err := a.Send(ctx, s.NativeID, "cli outcome", providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if o := host.next(t); o.ref != rec.Ref || o.status != providers.StatusCompleted {
		t.Fatalf("outcome = %+v", o)
	}
	var un *providers.UnsupportedError
	if _, err := a.Subscribe(ctx, s.NativeID); !errors.As(err, &un) {
		t.Fatalf("subscribe: %v", err)
	}
	if _, err := a.SetModel(ctx, s.NativeID, providers.Model{ModelID: "x"}); !errors.As(err, &un) {
		t.Fatalf("model: %v", err)
	}
	sessions, err := a.ListSessions(ctx)
	if err != nil || len(sessions) != 1 || !isoDashID.MatchString(sessions[0].NativeID) || sessions[0].Transport != "managed PTY" {
		t.Fatalf("sessions = %+v, %v", sessions, err)
	}
	if _, err := a.CreateSession(ctx, providers.CreateOptions{CWD: "relative"}); err == nil || providers.IsUncertain(err) {
		t.Fatalf("relative cwd: %v", err)
	}
}
