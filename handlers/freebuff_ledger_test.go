package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/answercheck"
	"github.com/agent-interop/runtime/internal/testutil/freebuffsim"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
)

// freebuffStack is the Freebuff tools as the app wires them: the service
// over the simulated Desktop, its adapter in the registry, the delivery
// ledger over a real store, the adapter's outcomes reported to the ledger.
type freebuffStack struct {
	sim     *freebuffsim.Desktop
	st      *store.Store
	reg     *registry.Registry
	del     *delivery.Service
	tools   FreebuffTools
	project string
}

func newFreebuffStack(t *testing.T) *freebuffStack {
	t.Helper()
	sim, err := freebuffsim.NewDesktop(freebuffsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	project := t.TempDir()
	sim.AddProject(project)
	env := map[string]string{freebuff.EnvOrchestratorURL: sim.URL(), freebuff.EnvLaunchID: sim.LaunchID()}
	svc := freebuff.New(freebuff.Config{
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		ProcDir:   "-", HomeDir: t.TempDir(), WorkDir: t.TempDir(),
	})
	reports := registry.NewHost()
	st := teststore.Open(t)
	reg, err := registry.New(st, []providers.Adapter{freebuff.NewAdapter(svc, reports)}, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	del := delivery.New(st, reg, delivery.Options{Reports: reports})
	t.Cleanup(func() {
		del.Close()
		svc.Close()
	})
	return &freebuffStack{sim: sim, st: st, reg: reg, del: del, tools: FreebuffTools{Svc: svc, Delivery: del}, project: project}
}

// writes counts the simulated Desktop's writes to a thread's action.
func (s *freebuffStack) writes(thread, action string) int {
	n := 0
	for _, r := range s.sim.Requests() {
		if r.Path == "/api/thread/"+thread+"/"+action {
			n++
		}
	}
	return n
}

func (s *freebuffStack) ops(t *testing.T, thread string) []*ent.Operation {
	t.Helper()
	ops, err := s.st.Client().Operation.Query().Where(operation.NativeID(thread)).Order(ent.Asc(operation.FieldCreatedAt)).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

func sendThread(t *testing.T, s *freebuffStack, args string) (*catalogs.ThreadWrite, error) {
	t.Helper()
	in, err := catalogs.DecodeSendThreadMessage(json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return s.tools.SendThreadMessage(context.Background(), in)
}

// TestFreebuffSendIsIdempotent: a send repeated with its key reaches
// Freebuff once and answers the same operation; the key of another request
// is refused, and nothing more is sent.
func TestFreebuffSendIsIdempotent(t *testing.T) {
	s := newFreebuffStack(t)
	tid := s.sim.AddThread(s.project, "Idempotent")
	completed := make(chan string, 16)
	s.del.OnOutcome(func(o delivery.Operation) {
		if o.Status == providers.StatusCompleted {
			select {
			case completed <- o.ID:
			default:
			}
		}
	})
	args := `{"threadId":"` + tid + `","text":"build it","idempotencyKey":"fb-1"}`
	first, err := sendThread(t, s, args)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Accepted || first.IdempotencyKey != "fb-1" || !strings.HasPrefix(first.OperationID, "op_") || first.ThreadID != tid || first.Operation != "send" {
		t.Fatalf("first send = %+v", first)
	}
	if err := answercheck.New().CheckJSON(entry(t, "send_thread_message"), first); err != nil {
		t.Fatal(err)
	}
	second, err := sendThread(t, s, args)
	if err != nil {
		t.Fatal(err)
	}
	if second.OperationID != first.OperationID || second.IdempotencyKey != "fb-1" || !second.Accepted {
		t.Fatalf("repeated send = %+v, want operation %s", second, first.OperationID)
	}
	if n := s.writes(tid, "message"); n != 1 {
		t.Fatalf("the simulated Desktop received %d sends, want 1", n)
	}
	// The same key with another text, or to another thread: refused.
	other := s.sim.AddThread(s.project, "Other")
	for _, bad := range []string{
		`{"threadId":"` + tid + `","text":"build something else","idempotencyKey":"fb-1"}`,
		`{"threadId":"` + other + `","text":"build it","idempotencyKey":"fb-1"}`,
	} {
		_, err := sendThread(t, s, bad)
		var dup *delivery.DuplicateKeyError
		if !errors.As(err, &dup) || dup.Existing.ID != first.OperationID || !strings.Contains(err.Error(), "Idempotency key 'fb-1' already has an operation") {
			t.Fatalf("%s: %v, want the duplicate key refused", bad, err)
		}
	}
	if n := s.writes(tid, "message") + s.writes(other, "message"); n != 1 {
		t.Fatalf("the simulated Desktop received %d sends after the refusals, want 1", n)
	}
	if ops := s.ops(t, tid); len(ops) != 1 || ops[0].IdempotencyKey != "fb-1" || ops[0].Provider != "freebuff" {
		t.Fatalf("recorded operations = %v", ops)
	}
	// The turn's end, observed on the Desktop's event stream, completes it.
	select {
	case id := <-completed:
		if id != first.OperationID {
			t.Fatalf("completed %s, want %s", id, first.OperationID)
		}
	case <-time.After(20 * time.Second):
		op, _ := s.del.Get(context.Background(), first.OperationID)
		t.Fatalf("operation stayed %s", op.Status)
	}
}

// TestFreebuffSendLostAfterDispatch: a connection cut after the prompt
// reached the Desktop is delivery_unknown, and neither the call nor a
// repeat with the same key sends it again.
func TestFreebuffSendLostAfterDispatch(t *testing.T) {
	s := newFreebuffStack(t)
	tid := s.sim.AddThread(s.project, "Cut")
	s.sim.SetTurnMode(freebuffsim.TurnNever)
	s.sim.CutNextWrites(1)
	args := `{"threadId":"` + tid + `","text":"maybe","idempotencyKey":"fb-cut"}`
	for i := range 2 {
		_, err := sendThread(t, s, args)
		var du *delivery.DeliveryUnknownError
		if !errors.As(err, &du) || du.Result.Operation.IdempotencyKey != "fb-cut" || !strings.Contains(err.Error(), "delivery_unknown") {
			t.Fatalf("call %d: %v, want delivery_unknown", i+1, err)
		}
	}
	if n := s.writes(tid, "message"); n != 1 {
		t.Fatalf("the simulated Desktop received %d sends, want 1", n)
	}
	ops := s.ops(t, tid)
	if len(ops) != 1 || ops[0].Status != operation.StatusDeliveryUnknown {
		t.Fatalf("recorded operations = %v", ops)
	}
}

// TestFreebuffThreadWritesAreOperations: stop, resume, model and
// reasoning changes are recorded as operations of their kinds, with the
// request; a refused one is recorded rejected and answered as an error
// naming its operation; bad input is refused before anything is recorded.
func TestFreebuffThreadWritesAreOperations(t *testing.T) {
	s := newFreebuffStack(t)
	tid := s.sim.AddThread(s.project, "Writes")
	ctx := context.Background()
	check := answercheck.New()
	call := func(tool string) func(*catalogs.ThreadWrite, error) *catalogs.ThreadWrite {
		return func(w *catalogs.ThreadWrite, err error) *catalogs.ThreadWrite {
			t.Helper()
			if err != nil {
				t.Fatalf("%s: %v", tool, err)
			}
			if err := check.CheckJSON(entry(t, tool), w); err != nil {
				t.Fatalf("%s: %v", tool, err)
			}
			return w
		}
	}
	in1, _ := catalogs.DecodeStopThread(json.RawMessage(`{"threadId":"` + tid + `"}`))
	stop := call("stop_thread")(s.tools.StopThread(ctx, in1))
	in2, _ := catalogs.DecodeResumeThread(json.RawMessage(`{"threadId":"` + tid + `"}`))
	resume := call("resume_thread")(s.tools.ResumeThread(ctx, in2))
	in3, _ := catalogs.DecodeSetThreadModel(json.RawMessage(`{"threadId":"` + tid + `","model":"openai/gpt-5.1"}`))
	model := call("set_thread_model")(s.tools.SetThreadModel(ctx, in3))
	in4, _ := catalogs.DecodeSetThreadReasoning(json.RawMessage(`{"threadId":"` + tid + `","effort":"HIGH"}`))
	effort := call("set_thread_reasoning")(s.tools.SetThreadReasoning(ctx, in4))

	want := map[string]struct {
		w       *catalogs.ThreadWrite
		kind    string
		request string
	}{
		stop.OperationID:   {stop, "cancel", ""},
		resume.OperationID: {resume, "resume", ""},
		model.OperationID:  {model, "set_model", `"model":"openai/gpt-5.1"`},
		effort.OperationID: {effort, "set_reasoning", `"effort":"high"`},
	}
	ops := s.ops(t, tid)
	if len(ops) != 4 {
		t.Fatalf("%d operations recorded, want 4: %v", len(ops), ops)
	}
	for _, o := range ops {
		w, ok := want[o.ID]
		if !ok || o.Operation != w.kind || o.Provider != "freebuff" || o.IdempotencyKey != w.w.IdempotencyKey ||
			!strings.HasPrefix(o.IdempotencyKey, "auto_") || o.Status == operation.StatusRejected || !strings.Contains(string(o.Detail), w.request) {
			t.Fatalf("operation %s %s (%s, key %s, detail %s), want %+v", o.ID, o.Operation, o.Status, o.IdempotencyKey, o.Detail, w)
		}
	}
	if s.writes(tid, "stop") != 1 || s.writes(tid, "resume") != 1 || s.writes(tid, "agent") != 1 || s.writes(tid, "effort") != 1 {
		t.Fatalf("the simulated Desktop received %v", s.sim.Requests())
	}

	// A model the Desktop refuses: recorded rejected, answered as an error.
	in5, _ := catalogs.DecodeSetThreadModel(json.RawMessage(`{"threadId":"` + tid + `","model":"no/such-model"}`))
	_, err := s.tools.SetThreadModel(ctx, in5)
	var refused *RefusedWriteError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "invalid model") {
		t.Fatalf("refused model: %v", err)
	}
	if o, err := s.del.Get(ctx, refused.OperationID); err != nil || o.Status != providers.StatusRejected || o.Operation != "set_model" {
		t.Fatalf("refused model recorded as %+v (%v)", o, err)
	}

	// Bad input: refused with the field's rule, nothing recorded or sent.
	before := len(s.ops(t, tid))
	in6, _ := catalogs.DecodeSetThreadReasoning(json.RawMessage(`{"threadId":"` + tid + `","effort":"maximal"}`))
	if _, err := s.tools.SetThreadReasoning(ctx, in6); err == nil || !strings.Contains(err.Error(), "Invalid reasoning effort") {
		t.Fatalf("bad effort: %v", err)
	}
	in7, _ := catalogs.DecodeStopThread(json.RawMessage(`{"threadId":"bad id"}`))
	if in7 != nil {
		if _, err := s.tools.StopThread(ctx, in7); err == nil || err.Error() != "Invalid identifier" {
			t.Fatalf("stop with a bad id: %v", err)
		}
	}
	if after := len(s.ops(t, tid)); after != before {
		t.Fatalf("bad input recorded %d operations", after-before)
	}
}

// TestFreebuffOpenOperationsSettleAfterARestart: a process that recorded
// Freebuff writes and went away before their outcome is replaced by
// another, which settles each from what the Desktop reports: a prompt the
// thread answered is completed, one whose turn failed rejected, one the
// thread never saw delivery_unknown, a resume delivery_unknown (Freebuff
// keeps no record of it). Nothing is sent again.
func TestFreebuffOpenOperationsSettleAfterARestart(t *testing.T) {
	s := newFreebuffStack(t)
	ctx := context.Background()
	answered := s.sim.AddThread(s.project, "Answered")
	failed := s.sim.AddThread(s.project, "Failed")
	unseen := s.sim.AddThread(s.project, "Unseen")

	// The first process records the writes; the prompts of two of them
	// reach the Desktop (its dispatch), then it stops.
	open := map[string]string{}
	record := func(thread, text string) {
		t.Helper()
		target, err := s.del.Prepare(ctx, "freebuff", thread)
		if err != nil {
			t.Fatal(err)
		}
		err = s.st.Tx(ctx, func(tx *ent.Tx) error {
			p, err := s.del.RecordSend(ctx, tx, target, delivery.SendRequest{Provider: "freebuff", NativeID: thread, Text: text})
			if err == nil {
				open[thread] = p.Operation.ID
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		s.del.Committed()
	}
	record(answered, "answer me")
	record(failed, "fail me")
	record(unseen, "never sent")
	in, _ := catalogs.DecodeResumeThread(json.RawMessage(`{"threadId":"` + unseen + `"}`))
	if _, err := s.tools.ResumeThread(ctx, in); err != nil {
		t.Fatal(err)
	}
	resumeOp := s.ops(t, unseen)[1]
	if _, err := s.st.Client().Operation.UpdateOneID(resumeOp.ID).SetStatus(operation.StatusQueued).Save(ctx); err != nil {
		t.Fatal(err) // as if the process stopped before recording the receipt
	}
	// A stop, a model change and an effort change that reached the
	// Desktop, and a model change overtaken by a later one, each left
	// open the same way.
	states := s.sim.AddThread(s.project, "States")
	overtaken := s.sim.AddThread(s.project, "Overtaken")
	reopen := func(thread string) string {
		t.Helper()
		ops := s.ops(t, thread)
		id := ops[len(ops)-1].ID
		if _, err := s.st.Client().Operation.UpdateOneID(id).SetStatus(operation.StatusQueued).Save(ctx); err != nil {
			t.Fatal(err)
		}
		return id
	}
	stopIn, _ := catalogs.DecodeStopThread(json.RawMessage(`{"threadId":"` + states + `"}`))
	if _, err := s.tools.StopThread(ctx, stopIn); err != nil {
		t.Fatal(err)
	}
	stopOp := reopen(states)
	modelIn, _ := catalogs.DecodeSetThreadModel(json.RawMessage(`{"threadId":"` + states + `","model":"openai/gpt-5.1"}`))
	if _, err := s.tools.SetThreadModel(ctx, modelIn); err != nil {
		t.Fatal(err)
	}
	modelOp := reopen(states)
	effortIn, _ := catalogs.DecodeSetThreadReasoning(json.RawMessage(`{"threadId":"` + states + `","effort":"high"}`))
	if _, err := s.tools.SetThreadReasoning(ctx, effortIn); err != nil {
		t.Fatal(err)
	}
	effortOp := reopen(states)
	modelIn, _ = catalogs.DecodeSetThreadModel(json.RawMessage(`{"threadId":"` + overtaken + `","model":"openai/gpt-5.1"}`))
	if _, err := s.tools.SetThreadModel(ctx, modelIn); err != nil {
		t.Fatal(err)
	}
	overtakenOp := reopen(overtaken)
	if _, err := s.tools.Svc.SetThreadModel(ctx, overtaken, "anthropic/claude-sonnet-4.5", "codebuff"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.tools.Svc.SendThreadMessage(ctx, answered, "answer me"); err != nil {
		t.Fatal(err)
	}
	s.sim.SetTurnMode(freebuffsim.TurnFail)
	if _, err := s.tools.Svc.SendThreadMessage(ctx, failed, "fail me"); err != nil {
		t.Fatal(err)
	}
	sent := len(s.sim.Requests())
	if err := s.del.Close(); err != nil {
		t.Fatal(err)
	}

	next := delivery.New(s.st, s.reg, delivery.Options{})
	defer next.Close()
	settled, err := next.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]delivery.Operation{}
	for _, o := range settled {
		got[o.ID] = o
	}
	for _, c := range []struct {
		id, status, reason string
	}{
		{open[answered], "completed", "a reply follows the prompt"},
		{open[failed], "rejected", "turn ended with an error"},
		{open[unseen], "delivery_unknown", "has no record of it"},
		{resumeOp.ID, "completed", "the thread's queue is not paused"},
		{stopOp, "completed", "the thread shows no running turn"},
		{modelOp, "completed", "the thread shows model openai/gpt-5.1"},
		{effortOp, "completed", "the thread shows effort high"},
		{overtakenOp, "delivery_unknown", "the thread shows model anthropic/claude-sonnet-4.5, which may be a later change"},
	} {
		o, ok := got[c.id]
		if !ok || string(o.Status) != c.status || !strings.Contains(o.Reason(), c.reason) {
			t.Fatalf("operation %s settled as %+v (reason %q), want %s with %q", c.id, o, o.Reason(), c.status, c.reason)
		}
	}
	if n := len(s.sim.Requests()); n != sent {
		t.Fatalf("settlement sent %d writes", n-sent)
	}
}
