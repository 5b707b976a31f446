package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/providers/registry/registrytest"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type env struct {
	st    *store.Store
	fake  *registrytest.Adapter
	reg   *registry.Registry
	svc   *Service
	clock *clock
	path  string
}

func newEnv(t *testing.T, path string) *env {
	t.Helper()
	if path == "" {
		path = pgtest.StoreLocation(t)
	}
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	fake := &registrytest.Adapter{Provider: providers.Codex, EndpointName: "stdio:fake"}
	fake.SetSessions([]providers.Session{fake.Session("t1", "one"), fake.Session("t2", "two")}, nil)
	reg, err := registry.New(st, []providers.Adapter{fake}, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)}
	n := atomic.Int64{}
	svc := New(st, reg, Options{Now: c.Now, NewID: func() string { return fmt.Sprintf("%s-%d", filepath.Base(filepath.Dir(path)), n.Add(1)) }})
	e := &env{st: st, fake: fake, reg: reg, svc: svc, clock: c, path: path}
	t.Cleanup(func() { svc.Close(); st.Close() })
	return e
}

func queued(ref string) (providers.Receipt, error) {
	return providers.Receipt{Accepted: true, Status: providers.StatusQueued, ProviderState: "turn_inProgress", Ref: ref}, nil
}

func TestSendIsRecordedBeforeDispatch(t *testing.T) {
	pgtest.EachDialect(t, testSendIsRecordedBeforeDispatch)
}

func testSendIsRecordedBeforeDispatch(t *testing.T, location string) {
	e := newEnv(t, location)
	ctx := context.Background()
	e.fake.SendFunc = func(ctx context.Context, nativeID, text string, _ providers.SendOptions) (providers.Receipt, error) {
		ops, err := e.st.Client().Operation.Query().Where(operation.StatusEQ(operation.StatusQueued)).All(ctx)
		if err != nil || len(ops) != 1 || ops[0].LeaseExpiresAt == nil || ops[0].ProviderState != "dispatching" ||
			ops[0].TextSha256 == "" || strings.Contains(string(ops[0].Detail), text) {
			t.Errorf("at dispatch: %+v, %v", ops, err)
		}
		return queued("turn-1")
	}
	res, err := e.svc.Send(ctx, SendRequest{Provider: "codex", NativeID: "t1", Text: "hello", IdempotencyKey: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	op := res.Operation
	if op.Status != providers.StatusQueued || op.Ref != "turn-1" || op.LeaseExpiresAt != nil || op.IdempotencyKey != "k1" ||
		res.Receipt.Status != providers.StatusQueued || !res.Receipt.Accepted {
		t.Fatalf("result = %+v", res)
	}
	// The reused key is refused and nothing is sent again.
	_, err = e.svc.Send(ctx, SendRequest{Provider: "codex", NativeID: "t1", Text: "hello", IdempotencyKey: "k1"})
	var dup *DuplicateKeyError
	if !errors.As(err, &dup) || !strings.Contains(err.Error(), "Idempotency key 'k1' already has an operation ("+op.ID+", send codex:t1, status queued)") {
		t.Fatalf("dup = %v", err)
	}
	if n := e.fake.CallCount("send"); n != 1 {
		t.Fatalf("sent %d times", n)
	}
	// The provider later reports the turn completed.
	e.svc.ReportOutcome(providers.Codex, "t1", "turn-1", providers.StatusCompleted, "turn completed")
	e.svc.Sync(ctx)
	got, _ := e.svc.Get(ctx, op.ID)
	if got.Status != providers.StatusCompleted || !strings.Contains(string(got.Detail), "turn completed") {
		t.Fatalf("after outcome = %+v %s", got, got.Detail)
	}
	// A completed record is final.
	e.svc.ReportOutcome(providers.Codex, "t1", "turn-1", providers.StatusRejected, "late")
	e.svc.Sync(ctx)
	if got, _ := e.svc.Get(ctx, op.ID); got.Status != providers.StatusCompleted {
		t.Fatalf("final record changed: %+v", got)
	}
	// A generated key is used when none is given.
	res, err = e.svc.Send(ctx, SendRequest{Provider: "codex", NativeID: "t1", Text: "again"})
	if err != nil || !strings.HasPrefix(res.Operation.IdempotencyKey, "auto_") {
		t.Fatalf("generated key = %+v, %v", res.Operation, err)
	}
}

func TestOutcomeClassification(t *testing.T) {
	e := newEnv(t, "")
	ctx := context.Background()
	cases := []struct {
		err    error
		status providers.ReceiptStatus
		class  string
	}{
		{&providers.NotSentError{Err: errors.New("codex app-server unavailable")}, providers.StatusRejected, "not_sent"},
		{&providers.RejectedError{Reason: "no active turn to interrupt"}, providers.StatusRejected, "rejected"},
		{&providers.UnsupportedError{Provider: providers.Codex, Operation: "steer", Reason: "x"}, providers.StatusRejected, "unsupported"},
		{fmt.Errorf("codex turn/start: outcome unknown: %w", context.DeadlineExceeded), providers.StatusDeliveryUnknown, "delivery_unknown"},
	}
	for i, tc := range cases {
		e.fake.SendFunc = func(context.Context, string, string, providers.SendOptions) (providers.Receipt, error) {
			return providers.Receipt{}, tc.err
		}
		res, err := e.svc.Send(ctx, SendRequest{Provider: "codex", NativeID: "t1", Text: "x", IdempotencyKey: fmt.Sprint("c", i)})
		if tc.status == providers.StatusDeliveryUnknown {
			var du *DeliveryUnknownError
			if !errors.As(err, &du) || !strings.Contains(err.Error(), "must not be resent blindly") || !providers.IsUncertain(err) {
				t.Fatalf("case %d: err = %v", i, err)
			}
			res = du.Result
		} else if err != nil {
			t.Fatalf("case %d: err = %v", i, err)
		}
		var d detail
		_ = json.Unmarshal(res.Operation.Detail, &d)
		if res.Operation.Status != tc.status || d.Classification != tc.class || res.Receipt.Accepted || d.Reason == "" {
			t.Fatalf("case %d: op = %+v detail %s", i, res.Operation, res.Operation.Detail)
		}
	}
	// A delivery_unknown record is never re-dispatched; later evidence may
	// resolve it.
	e.svc.ReportOutcome(providers.Codex, "t1", "", providers.StatusCompleted, "")
	if n := e.fake.CallCount("send"); n != len(cases) {
		t.Fatalf("sends = %d", n)
	}
}

func TestOutcomeBeforeReceiptIsApplied(t *testing.T) {
	e := newEnv(t, "")
	ctx := context.Background()
	e.fake.SendFunc = func(context.Context, string, string, providers.SendOptions) (providers.Receipt, error) {
		// The turn finishes before Send returns (codex answers turn/start and
		// its turn/completed back to back).
		e.svc.ReportOutcome(providers.Codex, "t1", "turn-9", providers.StatusRejected, "unexpected status 401 Unauthorized")
		e.svc.Sync(context.Background())
		return queued("turn-9")
	}
	var seen []Operation
	e.svc.OnOutcome(func(o Operation) { seen = append(seen, o) })
	res, err := e.svc.Send(ctx, SendRequest{Provider: "codex", NativeID: "t1", Text: "FAIL401"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Operation.Status != providers.StatusRejected || !strings.Contains(string(res.Operation.Detail), "401") {
		t.Fatalf("op = %+v %s", res.Operation, res.Operation.Detail)
	}
	if len(seen) != 1 || seen[0].ID != res.Operation.ID {
		t.Fatalf("listeners saw %+v", seen)
	}
}

func TestProviderLossMovesQueuedToDeliveryUnknownAndEvidenceResolves(t *testing.T) {
	e := newEnv(t, "")
	ctx := context.Background()
	e.fake.SendFunc = func(context.Context, string, string, providers.SendOptions) (providers.Receipt, error) {
		return queued("turn-2")
	}
	res, _ := e.svc.Send(ctx, SendRequest{Provider: "codex", NativeID: "t2", Text: "x"})
	e.svc.ReportOutcome(providers.Codex, "t2", "turn-2", providers.StatusDeliveryUnknown, "codex app-server connection lost")
	e.svc.Sync(ctx)
	got, _ := e.svc.Get(ctx, res.Operation.ID)
	if got.Status != providers.StatusDeliveryUnknown || got.ProviderState != "provider_lost" {
		t.Fatalf("op = %+v", got)
	}
	e.svc.ReportOutcome(providers.Codex, "t2", "turn-2", providers.StatusCompleted, "turn completed")
	e.svc.Sync(ctx)
	if got, _ := e.svc.Get(ctx, res.Operation.ID); got.Status != providers.StatusCompleted {
		t.Fatalf("evidence not applied: %+v", got)
	}
}

func TestRecoverMarksExpiredLeasesDeliveryUnknown(t *testing.T) {
	pgtest.EachDialect(t, testRecoverMarksExpiredLeasesDeliveryUnknown)
}

func testRecoverMarksExpiredLeasesDeliveryUnknown(t *testing.T, location string) {
	e := newEnv(t, location)
	ctx := context.Background()
	release := make(chan struct{})
	started := make(chan struct{})
	e.fake.SendFunc = func(ctx context.Context, _, _ string, _ providers.SendOptions) (providers.Receipt, error) {
		close(started)
		<-release
		return queued("turn-x")
	}
	go e.svc.Send(ctx, SendRequest{Provider: "codex", NativeID: "t1", Text: "in flight", IdempotencyKey: "inflight"})
	<-started
	// Another runtime starting now must not touch the in-flight record...
	other := New(e.st, e.reg, Options{Now: e.clock.Now})
	defer other.Close()
	if ch, err := other.Recover(ctx); err != nil || len(ch) != 0 {
		t.Fatalf("recover with a live lease = %+v, %v", ch, err)
	}
	// ...but once its lease expired (the runtime died), it is delivery_unknown.
	e.clock.Add(DefaultLease + time.Second)
	ch, err := other.Recover(ctx)
	if err != nil || len(ch) != 1 || ch[0].Status != providers.StatusDeliveryUnknown || ch[0].IdempotencyKey != "inflight" {
		t.Fatalf("recover = %+v, %v", ch, err)
	}
	if ch, _ := other.Recover(ctx); len(ch) != 0 {
		t.Fatalf("recover not idempotent: %+v", ch)
	}
	close(release)
	// The late result of the dead dispatch is still recorded as evidence.
	e.svc.Sync(ctx)
}

func TestLeaseRenewedWhileInFlight(t *testing.T) {
	path := filepath.Join(t.TempDir(), "interop.db")
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fake := &registrytest.Adapter{Provider: providers.Codex}
	fake.SetSessions([]providers.Session{fake.Session("t1", "")}, nil)
	reg, _ := registry.New(st, []providers.Adapter{fake}, registry.Options{})
	c := &clock{t: time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)}
	svc := New(st, reg, Options{Now: c.Now, RenewEvery: 10 * time.Millisecond, Lease: time.Minute})
	defer svc.Close()
	fake.SendFunc = func(ctx context.Context, _, _ string, _ providers.SendOptions) (providers.Receipt, error) {
		first, _ := st.Client().Operation.Query().Only(ctx)
		c.Add(30 * time.Second)
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			o, _ := st.Client().Operation.Query().Only(ctx)
			if o.LeaseExpiresAt.After(*first.LeaseExpiresAt) {
				return queued("r")
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Error("lease not renewed")
		return queued("r")
	}
	if _, err := svc.Send(context.Background(), SendRequest{Provider: "codex", NativeID: "t1", Text: "x"}); err != nil {
		t.Fatal(err)
	}
}

func TestRefusedBeforeRecording(t *testing.T) {
	e := newEnv(t, "")
	ctx := context.Background()
	for _, req := range []SendRequest{
		{Provider: "bogus", NativeID: "t1", Text: "x"},
		{Provider: "codex", NativeID: "missing", Text: "x"},
		{Provider: "codex", NativeID: "t1", Text: "   "},
	} {
		if _, err := e.svc.Send(ctx, req); err == nil {
			t.Fatalf("%+v accepted", req)
		}
	}
	if n, _ := e.st.Client().Operation.Query().Count(ctx); n != 0 {
		t.Fatalf("%d records written for refused calls", n)
	}
	// Unsupported operation: recorded and rejected with the reason.
	res, err := e.svc.Cancel(ctx, CancelRequest{Provider: "codex", NativeID: "t1"})
	if err != nil || res.Operation.Status != providers.StatusRejected || !strings.Contains(string(res.Operation.Detail), "codex does not support cancel: fake") {
		t.Fatalf("cancel = %+v, %v", res, err)
	}
	res, err = e.svc.RespondPermission(ctx, PermissionResponse{Provider: "codex", NativeID: "t1", RequestID: "1-0", Decision: "accept"})
	if err != nil || res.Operation.Operation != OpPermission || res.Operation.Status != providers.StatusRejected {
		t.Fatalf("permission = %+v, %v", res, err)
	}
}

func TestTwoProcessesSameKeyDispatchOnce(t *testing.T) {
	pgtest.EachDialect(t, testTwoProcessesSameKeyDispatchOnce)
}

func testTwoProcessesSameKeyDispatchOnce(t *testing.T, location string) {
	a := newEnv(t, location)
	b := newEnv(t, a.path)
	var sends atomic.Int32
	send := func(context.Context, string, string, providers.SendOptions) (providers.Receipt, error) {
		sends.Add(1)
		return queued("r")
	}
	a.fake.SendFunc, b.fake.SendFunc = send, send
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := a
			if i%2 == 1 {
				e = b
			}
			_, errs[i] = e.svc.Send(context.Background(), SendRequest{Provider: "codex", NativeID: "t1", Text: "x", IdempotencyKey: "shared"})
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else if !errors.As(err, new(*DuplicateKeyError)) {
			t.Fatalf("unexpected error %v", err)
		}
	}
	if ok != 1 || sends.Load() != 1 {
		t.Fatalf("accepted %d, dispatched %d", ok, sends.Load())
	}
}

func TestConversationDispatcher(t *testing.T) {
	e := newEnv(t, "")
	ctx := context.Background()
	var texts []string
	e.fake.SendFunc = func(_ context.Context, _, text string, opts providers.SendOptions) (providers.Receipt, error) {
		texts = append(texts, text)
		return queued("turn-c")
	}
	var d conversations.Dispatcher = e.svc
	r, err := d.Dispatch(ctx, "codex", "t1", "[agent-interop message m1 from a]\nhi", conversations.DispatchOptions{Mode: "send", MessageID: "m1", IdempotencyKey: "outbound_1"})
	if err != nil || !r.Accepted || r.Status != providers.StatusQueued {
		t.Fatalf("dispatch = %+v, %v", r, err)
	}
	op, err := e.svc.ByKey(ctx, "conversation:outbound_1")
	if err != nil || !strings.Contains(string(op.Detail), `"conversationMessageId":"m1"`) {
		t.Fatalf("op = %+v, %v", op, err)
	}
	_, err = d.Dispatch(ctx, "codex", "t1", "again", conversations.DispatchOptions{MessageID: "m1", IdempotencyKey: "outbound_1"})
	if err == nil || !providers.IsUncertain(err) || len(texts) != 1 {
		t.Fatalf("second dispatch = %v (texts %v)", err, texts)
	}
	_, err = d.Dispatch(ctx, "codex", "missing", "x", conversations.DispatchOptions{MessageID: "m2"})
	if !errors.As(err, new(*providers.NotSentError)) {
		t.Fatalf("unknown session = %v", err)
	}
}
