package conversations_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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
)

// t0 is the fake clock's start.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// newClock is a fake clock standing at t0.
func newClock(t quartz.TestingT) *quartz.Mock {
	return testclock.At(t, t0)
}

// call is one prompt a fake provider session received.
type call struct {
	Provider, NativeID, Text string
	Opts                     providers.SendOptions
}

// step is one scripted outcome of a provider's Send.
type step struct {
	receipt providers.Receipt
	err     error
	hang    bool          // block until ctx ends, then return ctx.Err()
	started chan struct{} // closed when Send is entered
	gate    chan struct{} // block until closed, then answer receipt/err
	panic   bool
	// during runs inside Send (after the gate), to observe the store while
	// the dispatch is in flight.
	during func()
}

func acceptQueued() step {
	return step{receipt: providers.Receipt{Accepted: true, Status: providers.StatusQueued, ProviderState: "transport_accepted",
		Detail: map[string]any{"delivery": "transport_accepted", "completion": "not_observed"}, NativeTurnID: "turn-1", Ref: "ref-1"}}
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

// dispatcher scripts the Send of every fake provider. When the script runs
// out it accepts with status queued.
type dispatcher struct {
	mu    sync.Mutex
	steps []step
	calls []call
}

func script(steps ...step) *dispatcher { return &dispatcher{steps: steps} }

func (d *dispatcher) send(provider providers.ID) func(context.Context, string, string, providers.SendOptions) (providers.Receipt, error) {
	return func(ctx context.Context, nativeID, text string, opts providers.SendOptions) (providers.Receipt, error) {
		d.mu.Lock()
		d.calls = append(d.calls, call{string(provider), nativeID, text, opts})
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
		return st.receipt, st.err
	}
}

func (d *dispatcher) Calls() []call {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]call(nil), d.calls...)
}

// process is one runtime process's stack over a store: fake providers
// whose sessions exist (codex:a, claude-code:b, opencode:ses_9, cursor:o,
// ...), the delivery ledger and the conversations service.
type process struct {
	pid   int
	reg   *registry.Registry
	del   *delivery.Service
	svc   *conversations.Service
	fakes map[providers.ID]*registrytest.Adapter
}

var pidSeq atomic.Int64

// deadPIDs is the fake process table of host "h".
var deadPIDs sync.Map

func alive(pid int) bool { _, dead := deadPIDs.Load(pid); return !dead }

func newProcess(t testing.TB, st *store.Store, clock quartz.Clock, d *dispatcher, opts ...conversations.Option) *process {
	t.Helper()
	pid := int(5000 + pidSeq.Add(1))
	p, err := buildProcess(st, clock, d, &delivery.Process{Host: "h", PID: pid}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.del.Close() })
	return p
}

// buildProcess assembles a process; identity nil means this real process.
func buildProcess(st *store.Store, clock quartz.Clock, d *dispatcher, identity *delivery.Process, opts ...conversations.Option) (*process, error) {
	p := &process{fakes: map[providers.ID]*registrytest.Adapter{}}
	var adapters []providers.Adapter
	for _, id := range []providers.ID{providers.OpenCode, providers.Codex, providers.ClaudeCode, providers.Cursor} {
		f := &registrytest.Adapter{Provider: id}
		f.SetSessions([]providers.Session{f.Session("a", ""), f.Session("b", ""), f.Session("o", ""),
			f.Session("ses_9", ""), f.Session("thread-1", "")}, nil)
		f.SendFunc = d.send(id)
		p.fakes[id] = f
		adapters = append(adapters, f)
	}
	reg, err := registry.New(st, adapters, registry.Options{})
	if err != nil {
		return nil, err
	}
	p.reg = reg
	dopts := delivery.Options{Clock: clock, Process: identity}
	if identity != nil {
		p.pid, dopts.Alive = identity.PID, alive
	}
	p.del = delivery.New(st, reg, dopts)
	p.svc = conversations.New(st, p.del, append([]conversations.Option{conversations.WithClock(clock)}, opts...)...)
	return p, nil
}

// kill makes the process look dead to the others (its pid is gone).
func (p *process) kill() { deadPIDs.Store(p.pid, true) }

// env is one test's store, first process, clock and script.
type env struct {
	st    *store.Store
	c     *ent.Client
	p     *process
	svc   *conversations.Service
	clock *quartz.Mock
	disp  *dispatcher
}

func newEnv(t testing.TB, steps ...step) *env {
	t.Helper()
	return newEnvAt(t, teststore.Location(t), steps...)
}

// newEnvAt is newEnv on the store at location (a file or a PostgreSQL URL).
func newEnvAt(t testing.TB, location string, steps ...step) *env {
	t.Helper()
	st := teststore.OpenAt(t, location)
	e := &env{st: st, c: st.Client(), clock: newClock(t), disp: script(steps...)}
	e.p = newProcess(t, st, e.clock, e.disp)
	e.svc = e.p.svc
	return e
}

// process returns another runtime process over the same store and clock.
func (e *env) process(t testing.TB, d *dispatcher, opts ...conversations.Option) *process {
	t.Helper()
	return newProcess(t, e.st, e.clock, d, opts...)
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

// counts summarizes the store's conversation and ledger rows.
type counts struct{ Conversations, Participants, Messages, Operations int }

func (e *env) counts(t testing.TB) counts {
	t.Helper()
	ctx := context.Background()
	return counts{
		Conversations: e.c.Conversation.Query().CountX(ctx),
		Participants:  e.c.Participant.Query().CountX(ctx),
		Messages:      e.c.Message.Query().CountX(ctx),
		Operations:    e.c.Operation.Query().CountX(ctx),
	}
}

// snapshot renders every message row with its operation, to compare the
// store before and after an operation.
func (e *env) snapshot(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	rows := e.c.Message.Query().WithOperation().Order(ent.Asc("conversation_id"), ent.Asc("sequence")).AllX(ctx)
	s := ""
	for _, r := range rows {
		op := r.Edges.Operation
		s += fmt.Sprintf("%s|%d|%s|%s|%s|%s|%s|%s|%s|%q\n", r.ID, r.Sequence, op.Status, op.ProviderState, op.Detail, op.Owner,
			op.UpdatedAt, deref(r.TrimmedAt), r.IdempotencyKey, r.Text)
	}
	for _, c := range e.c.Conversation.Query().AllX(ctx) {
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

// message reads one message as the service shows it.
func (e *env) message(t testing.TB, id string) conversations.Message {
	t.Helper()
	m, err := e.c.Message.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.svc.Get(context.Background(), m.ConversationID, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range c.Messages {
		if x.ID == id {
			return x
		}
	}
	t.Fatalf("message %s not retained", id)
	return conversations.Message{}
}

// op reads the delivery operation of a message.
func (e *env) op(t testing.TB, messageID string) *ent.Operation {
	t.Helper()
	m := e.c.Message.Query().Where().AllX(context.Background())
	for _, x := range m {
		if x.ID == messageID {
			return e.c.Operation.GetX(context.Background(), x.OperationID)
		}
	}
	t.Fatalf("no message %s", messageID)
	return nil
}

// interrupted records a message as a runtime process that stopped
// mid-dispatch leaves it: its operation queued and owned by that process.
// With ownerAlive the process still runs (another host, fresh heartbeat).
func (e *env) interrupted(t testing.TB, convID, key string, ownerAlive bool) string {
	t.Helper()
	ctx := context.Background()
	owner := fmt.Sprintf("rt_gone_%s", key)
	if ownerAlive {
		owner = "rt_live_" + key
		e.c.RuntimeOwner.Create().SetID(owner).SetHost("other-host").SetPid(1).SetStartedAt(e.clock.Now()).
			SetHeartbeatAt(e.clock.Now()).ExecX(ctx)
	}
	opID := "op_interrupted_" + key
	e.c.Operation.Create().SetID(opID).SetIdempotencyKey(key).SetProvider("claude-code").SetNativeID("b").
		SetOperation("send").SetStatus("queued").SetProviderState("dispatching").SetOwner(owner).
		SetDetail(json.RawMessage(`{}`)).SetCreatedAt(e.clock.Now()).SetUpdatedAt(e.clock.Now()).ExecX(ctx)
	conv := e.c.Conversation.GetX(ctx, convID)
	seq := conv.LastSequence + 1
	id := "message_interrupted_" + key
	e.c.Message.Create().SetID(id).SetConversationID(convID).SetSequence(seq).
		SetSender("codex:a").SetRecipient("claude-code:b").SetText("interrupted").
		SetCreatedAt(e.clock.Now()).SetIdempotencyKey(key).SetOperationID(opID).ExecX(ctx)
	e.c.Conversation.UpdateOneID(convID).SetLastSequence(seq).ExecX(ctx)
	return id
}
