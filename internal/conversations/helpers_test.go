package conversations_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

// t0 is the fake clock's start.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *fakeClock { return &fakeClock{now: t0} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// call is one recorded Dispatch call.
type call struct {
	Provider, NativeID, Text string
	Opts                     conversations.DispatchOptions
}

// step is one scripted Dispatch outcome.
type step struct {
	receipt providers.Receipt
	err     error
	hang    bool          // block until ctx ends, then return ctx.Err()
	started chan struct{} // closed when Dispatch is entered
	gate    chan struct{} // block until closed, then answer receipt/err
	panic   bool
	// during runs inside Dispatch (after the gate), to observe the store
	// while the dispatch is in flight.
	during func()
}

func acceptQueued() step {
	return step{receipt: providers.Receipt{Accepted: true, Status: providers.StatusQueued, ProviderState: "transport_accepted",
		Detail: map[string]any{"delivery": "transport_accepted", "completion": "not_observed"}}}
}
func acceptBare() step { return step{receipt: providers.Receipt{Accepted: true}} }
func acceptCompleted() step {
	return step{receipt: providers.Receipt{Accepted: true, Status: providers.StatusCompleted}}
}
func refuse() step {
	return step{receipt: providers.Receipt{Accepted: false, Detail: map[string]any{"reason": "adapter not connected"}}}
}
func notSent() step {
	return step{err: &providers.NotSentError{Err: errors.New("codex app-server is not running")}}
}
func rejectedErr() step {
	return step{err: &providers.RejectedError{Reason: "session is archived"}}
}
func uncertain() step {
	return step{err: errors.New("connection reset after the request was written")}
}
func hang() step { return step{hang: true} }

// dispatcher is a scripted test double for conversations.Dispatcher. When
// the script runs out it accepts with status queued.
type dispatcher struct {
	mu    sync.Mutex
	steps []step
	calls []call
}

func script(steps ...step) *dispatcher { return &dispatcher{steps: steps} }

func (d *dispatcher) Dispatch(ctx context.Context, provider, nativeID, text string, opts conversations.DispatchOptions) (providers.Receipt, error) {
	d.mu.Lock()
	d.calls = append(d.calls, call{provider, nativeID, text, opts})
	st := acceptQueued()
	if len(d.steps) > 0 {
		st, d.steps = d.steps[0], d.steps[1:]
	}
	d.mu.Unlock()
	if st.started != nil {
		close(st.started)
	}
	if st.gate != nil {
		select {
		case <-st.gate:
		case <-ctx.Done():
			return providers.Receipt{}, ctx.Err()
		}
	}
	if st.during != nil {
		st.during()
	}
	switch {
	case st.panic:
		panic("adapter bug")
	case st.hang:
		<-ctx.Done()
		return providers.Receipt{}, ctx.Err()
	}
	r := st.receipt
	if r.Provider == "" && st.err == nil {
		r.Provider, r.NativeID, r.Operation = providers.ID(provider), nativeID, "send"
	}
	return r, st.err
}

func (d *dispatcher) Calls() []call {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]call(nil), d.calls...)
}

// env is one test's store, service, clock and dispatcher.
type env struct {
	st    *store.Store
	c     *ent.Client
	svc   *conversations.Service
	clock *fakeClock
	disp  *dispatcher
}

func openStore(t testing.TB, path string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newEnv(t testing.TB, steps ...step) *env {
	t.Helper()
	return newEnvAt(t, pgtest.StoreLocation(t), steps...)
}

// newEnvAt is newEnv on the store at location (a file or a PostgreSQL URL).
func newEnvAt(t testing.TB, location string, steps ...step) *env {
	t.Helper()
	st := openStore(t, location)
	e := &env{st: st, c: st.Client(), clock: newClock(), disp: script(steps...)}
	e.svc = e.service(e.disp)
	return e
}

// service returns another Service (as another process would have) over
// the same store and clock.
func (e *env) service(d conversations.Dispatcher, opts ...conversations.Option) *conversations.Service {
	base := []conversations.Option{conversations.WithClock(e.clock)}
	return conversations.New(e.st, d, append(base, opts...)...)
}

// conv creates a conversation with participants codex:a and
// claude-code:b (IDs "codex:a" and "claude-code:b").
func (e *env) conv(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	c, err := e.svc.Create(ctx, "Review auth")
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range []conversations.JoinInput{
		{ConversationID: c.ID, Provider: "codex", NativeID: "a"},
		{ConversationID: c.ID, Provider: "claude-code", NativeID: "b", Role: "reviewer"},
	} {
		if _, err := e.svc.Join(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	return c.ID
}

// send sends text from codex:a to claude-code:b.
func (e *env) send(t testing.TB, convID, text, key string) (conversations.SendResult, error) {
	t.Helper()
	return e.svc.Send(context.Background(), conversations.SendInput{
		ConversationID: convID, Sender: "codex:a", Recipient: "claude-code:b", Text: text, IdempotencyKey: key,
	})
}

// counts summarizes the store's conversation rows.
type counts struct{ Conversations, Participants, Messages int }

func (e *env) counts(t testing.TB) counts {
	t.Helper()
	ctx := context.Background()
	return counts{
		Conversations: e.c.Conversation.Query().CountX(ctx),
		Participants:  e.c.Participant.Query().CountX(ctx),
		Messages:      e.c.Message.Query().CountX(ctx),
	}
}

// snapshot renders every message row, to compare the store before and
// after an operation.
func (e *env) snapshot(t testing.TB) string {
	t.Helper()
	rows := e.c.Message.Query().Order(ent.Asc("conversation_id"), ent.Asc("sequence")).AllX(context.Background())
	s := ""
	for _, r := range rows {
		receipt, _ := json.Marshal(r.Receipt)
		s += fmt.Sprintf("%s|%d|%s|%s|%s|%s|%s|%s|%s|%q\n", r.ID, r.Sequence, r.Delivery, receipt, deref(r.DispatchLeaseID),
			deref(r.DispatchExpiresAt), deref(r.DeliveryUnknownAt), deref(r.TrimmedAt), r.IdempotencyKey, r.Text)
	}
	for _, c := range e.c.Conversation.Query().AllX(context.Background()) {
		s += fmt.Sprintf("%s|%d|%s\n", c.ID, c.LastSequence, c.UpdatedAt)
	}
	return s
}

func deref[T any](p *T) string {
	if p == nil {
		return "<nil>"
	}
	return fmt.Sprint(*p)
}

// message reads one message row.
func (e *env) message(t testing.TB, id string) *ent.Message {
	t.Helper()
	m, err := e.c.Message.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// interrupted records a message as a runtime that stopped mid-dispatch
// leaves it: queued, no receipt, lease until leaseUntil.
func (e *env) interrupted(t testing.TB, convID, key string, leaseUntil time.Time) string {
	t.Helper()
	ctx := context.Background()
	conv := e.c.Conversation.GetX(ctx, convID)
	seq := conv.LastSequence + 1
	id := "message_interrupted_" + key
	e.c.Message.Create().SetID(id).SetConversationID(convID).SetSequence(seq).
		SetSender("codex:a").SetRecipient("claude-code:b").SetText("interrupted").
		SetCreatedAt(e.clock.Now()).SetIdempotencyKey(key).
		SetDispatchLeaseID("dispatch_x").SetDispatchStartedAt(leaseUntil.Add(-conversations.LeaseTTL)).
		SetDispatchExpiresAt(leaseUntil).ExecX(ctx)
	e.c.Conversation.UpdateOneID(convID).SetLastSequence(seq).ExecX(ctx)
	return id
}
