package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/providers/registry/registrytest"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

type env struct {
	st    *store.Store
	fake  *registrytest.Adapter
	reg   *registry.Registry
	svc   *Service
	clock *quartz.Mock
	path  string
}

// pids is a fake process table: which pids "run" on host h, and a watch
// of their exits.
type pids struct {
	mu      sync.Mutex
	dead    map[int]bool
	exits   map[int]chan struct{}
	watches map[int]int // watches started per pid
}

func (p *pids) alive(pid int) bool { p.mu.Lock(); defer p.mu.Unlock(); return !p.dead[pid] }

func (p *pids) kill(pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dead[pid] = true
	if ch, ok := p.exits[pid]; ok {
		close(ch)
		delete(p.exits, pid)
	}
}

// watch is the fake WatchExit: the channel closes when kill(pid) is called.
func (p *pids) watch(pid int) (<-chan struct{}, func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watches[pid]++
	if p.dead[pid] {
		ch := make(chan struct{})
		close(ch)
		return ch, func() {}
	}
	ch, ok := p.exits[pid]
	if !ok {
		ch = make(chan struct{})
		p.exits[pid] = ch
	}
	return ch, func() {}
}

func (p *pids) watchCount(pid int) int { p.mu.Lock(); defer p.mu.Unlock(); return p.watches[pid] }

var table = &pids{dead: map[int]bool{}, exits: map[int]chan struct{}{}, watches: map[int]int{}}

var nextPID atomic.Int64

// newEnv opens a store (a fresh one, or path) and a Service acting as a
// runtime process of its own (host "h", a fresh fake pid).
func newEnv(t *testing.T, path string, mutate ...func(*Options)) *env {
	t.Helper()
	if path == "" {
		path = teststore.Location(t)
	}
	st := teststore.OpenAt(t, path)
	fake := &registrytest.Adapter{Provider: providers.Codex, EndpointName: "stdio:fake"}
	fake.SetSessions([]providers.Session{fake.Session("t1", "one"), fake.Session("t2", "two")}, nil)
	reg, err := registry.New(st, []providers.Adapter{fake}, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := testclock.At(t, time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC))
	n := atomic.Int64{}
	pid := int(1000 + nextPID.Add(1))
	opts := Options{
		Clock: c, NewID: func() string { return fmt.Sprintf("%d-%d", pid, n.Add(1)) },
		Process: &Process{Host: "h", Boot: "b1", PID: pid}, Alive: table.alive, WatchExit: table.watch,
	}
	for _, m := range mutate {
		m(&opts)
	}
	svc := New(st, reg, opts)
	e := &env{st: st, fake: fake, reg: reg, svc: svc, clock: c, path: path}
	t.Cleanup(func() { svc.Close() })
	return e
}

// pid is the fake pid of e's process.
func (e *env) pid() int { return e.svc.me.PID }

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
		if err != nil || len(ops) != 1 || ops[0].Owner != e.svc.Owner() || ops[0].ProviderState != "dispatching" ||
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
	if op.Status != providers.StatusQueued || op.Ref != "turn-1" || op.Owner != e.svc.Owner() || op.IdempotencyKey != "k1" ||
		res.Receipt.Status != providers.StatusQueued || !res.Receipt.Accepted {
		t.Fatalf("result = %+v", res)
	}
	// The same request again under its key answers the recorded operation;
	// another text under it is refused; nothing is sent again.
	again, err := e.svc.Send(ctx, SendRequest{Provider: "codex", NativeID: "t1", Text: "hello", IdempotencyKey: "k1"})
	if err != nil || again.Operation.ID != op.ID || again.Receipt.Status != providers.StatusQueued {
		t.Fatalf("replay = %+v, %v", again, err)
	}
	_, err = e.svc.Send(ctx, SendRequest{Provider: "codex", NativeID: "t1", Text: "hello again", IdempotencyKey: "k1"})
	var dup *DuplicateKeyError
	if !errors.As(err, &dup) || !strings.Contains(err.Error(), "Idempotency key 'k1' already has an operation ("+op.ID+", send codex:t1, status queued) for other arguments") {
		t.Fatalf("dup = %v", err)
	}
	if n := e.fake.CallCount("send"); n != 1 {
		t.Fatalf("sent %d times", n)
	}
	// The provider later reports the turn completed.
	e.svc.ReportOutcome(providers.Codex, "t1", "turn-1", providers.Outcome{Status: providers.StatusCompleted, Reason: "turn completed"})
	e.svc.Sync(ctx)
	got, _ := e.svc.Get(ctx, op.ID)
	if got.Status != providers.StatusCompleted || !strings.Contains(string(got.Detail), "turn completed") {
		t.Fatalf("after outcome = %+v %s", got, got.Detail)
	}
	// A completed record is final.
	e.svc.ReportOutcome(providers.Codex, "t1", "turn-1", providers.Outcome{Status: providers.StatusRejected, Reason: "late"})
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
	e.svc.ReportOutcome(providers.Codex, "t1", "", providers.Outcome{Status: providers.StatusCompleted})
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
		e.svc.ReportOutcome(providers.Codex, "t1", "turn-9", providers.Outcome{Status: providers.StatusRejected, Reason: "unexpected status 401 Unauthorized"})
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
	e.svc.ReportOutcome(providers.Codex, "t2", "turn-2", providers.Outcome{Status: providers.StatusDeliveryUnknown, Reason: "codex app-server connection lost"})
	e.svc.Sync(ctx)
	got, _ := e.svc.Get(ctx, res.Operation.ID)
	if got.Status != providers.StatusDeliveryUnknown || got.ProviderState != "provider_lost" {
		t.Fatalf("op = %+v", got)
	}
	e.svc.ReportOutcome(providers.Codex, "t2", "turn-2", providers.Outcome{Status: providers.StatusCompleted, Reason: "turn completed"})
	e.svc.Sync(ctx)
	if got, _ := e.svc.Get(ctx, res.Operation.ID); got.Status != providers.StatusCompleted {
		t.Fatalf("evidence not applied: %+v", got)
	}
}

// inflight starts a send on e whose dispatch blocks until release is
// closed, and waits until it is being dispatched.
func inflight(t *testing.T, e *env, key string) (release chan struct{}, done chan error) {
	t.Helper()
	release, started, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	e.fake.SendFunc = func(ctx context.Context, _, _ string, _ providers.SendOptions) (providers.Receipt, error) {
		close(started)
		<-release
		return queued("turn-" + key)
	}
	go func() {
		_, err := e.svc.Send(context.Background(), SendRequest{Provider: "codex", NativeID: "t1", Text: "in flight " + key, IdempotencyKey: key})
		done <- err
	}()
	<-started
	return release, done
}

// advanceThrough moves c by d, firing the timers and tickers due on the
// way in order (quartz's Advance stops at the next one).
func advanceThrough(t *testing.T, c *quartz.Mock, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	defer cancel()
	for d > 0 {
		step := d
		if next, ok := c.Peek(); ok && next < step {
			step = next
		}
		c.Advance(step).MustWait(ctx)
		d -= step
	}
}

func TestSettleLeavesLiveOwnersAlone(t *testing.T) {
	// A's heartbeat stays silent for the test's span (it renews on the
	// injected clock).
	a := newEnv(t, "", func(o *Options) { o.HeartbeatEvery = time.Hour })
	ctx := context.Background()
	release, done := inflight(t, a, "live")
	defer func() { close(release); <-done }()
	// A second runtime on the same store and host: A's pid runs and its
	// heartbeat is fresh, so its open operation is left to it.
	b := newEnv(t, a.path)
	b.fake.LookupFunc = func(context.Context, providers.TurnQuery) (providers.TurnRecord, error) {
		t.Error("a live owner's operation was looked up")
		return providers.TurnRecord{}, nil
	}
	if ch, err := b.svc.Settle(ctx); err != nil || len(ch) != 0 {
		t.Fatalf("settle with a live owner = %+v, %v", ch, err)
	}
	// On another host only the heartbeat tells: fresh is alive...
	remote := newEnv(t, a.path, func(o *Options) { o.Process.Host = "elsewhere"; o.Clock = a.clock })
	if ch, err := remote.svc.Settle(ctx); err != nil || len(ch) != 0 {
		t.Fatalf("settle from another host with a fresh heartbeat = %+v, %v", ch, err)
	}
	// ...and silent past the owner timeout is gone.
	advanceThrough(t, a.clock, DefaultOwnerTimeout+time.Second)
	remote.fake.LookupFunc = func(context.Context, providers.TurnQuery) (providers.TurnRecord, error) {
		return providers.TurnRecord{Source: "fake history"}, nil
	}
	ch, err := remote.svc.Settle(ctx)
	if err != nil || len(ch) != 1 || ch[0].Status != providers.StatusDeliveryUnknown || !strings.Contains(ch[0].Reason(), "sent no heartbeat for") {
		t.Fatalf("settle after the heartbeat stopped = %+v, %v", ch, err)
	}
}

func TestSettleDeadOwnerFromNativeHistory(t *testing.T) {
	cases := []struct {
		name      string
		lookup    func(context.Context, providers.TurnQuery) (providers.TurnRecord, error)
		status    providers.ReceiptStatus
		reason    string
		turn      string
		lookedFor bool
	}{
		{"completed in history", func(_ context.Context, q providers.TurnQuery) (providers.TurnRecord, error) {
			return providers.TurnRecord{Found: true, Status: providers.StatusCompleted, NativeTurnID: "turn-native", Source: "fake history"}, nil
		}, providers.StatusCompleted, "completed, as observed in fake history", "turn-native", true},
		{"failed in history", func(context.Context, providers.TurnQuery) (providers.TurnRecord, error) {
			return providers.TurnRecord{Found: true, Status: providers.StatusRejected, Reason: "401 Unauthorized", Source: "fake history"}, nil
		}, providers.StatusRejected, "401 Unauthorized (observed in fake history)", "", true},
		{"reached but unfinished", func(context.Context, providers.TurnQuery) (providers.TurnRecord, error) {
			return providers.TurnRecord{Found: true, Status: providers.StatusQueued, Reason: "the turn was still in progress", Source: "fake history"}, nil
		}, providers.StatusDeliveryUnknown, "fake history shows it reached codex, but the turn was still in progress", "", true},
		{"not in history", func(context.Context, providers.TurnQuery) (providers.TurnRecord, error) {
			return providers.TurnRecord{Source: "fake history"}, nil
		}, providers.StatusDeliveryUnknown, "fake history has no record of it; it may or may not have reached codex", "", true},
		{"lookup failed", func(context.Context, providers.TurnQuery) (providers.TurnRecord, error) {
			return providers.TurnRecord{}, errors.New("app-server did not start")
		}, providers.StatusDeliveryUnknown, "looking it up in codex's history failed (app-server did not start)", "", true},
		{"no history", nil, providers.StatusDeliveryUnknown, "codex keeps no history this runtime can read", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newEnv(t, "")
			ctx := context.Background()
			release, done := inflight(t, a, "k")
			table.kill(a.pid()) // the runtime died mid-dispatch
			b := newEnv(t, a.path)
			var queries []providers.TurnQuery
			if tc.lookup != nil {
				b.fake.LookupFunc = func(ctx context.Context, q providers.TurnQuery) (providers.TurnRecord, error) {
					queries = append(queries, q)
					return tc.lookup(ctx, q)
				}
			}
			ch, err := b.svc.Settle(ctx)
			if err != nil || len(ch) != 1 {
				t.Fatalf("settle = %+v, %v", ch, err)
			}
			op := ch[0]
			if op.Status != tc.status || !strings.Contains(op.Reason(), tc.reason) || op.NativeTurnID != tc.turn ||
				!strings.Contains(op.Reason(), "") || op.ProviderState != "reconciled" {
				t.Fatalf("settled = %+v reason %q", op, op.Reason())
			}
			if tc.status == providers.StatusDeliveryUnknown && !strings.Contains(op.Reason(), "is no longer running") {
				t.Errorf("reason does not say why the owner is gone: %q", op.Reason())
			}
			if tc.lookedFor && (len(queries) != 1 || queries[0].CorrelationID != op.ID || queries[0].TextSHA256 == "" || queries[0].NativeID != "t1") {
				t.Errorf("lookup queries = %+v", queries)
			}
			var d detail
			_ = json.Unmarshal(op.Detail, &d)
			if d.Reconciliation == nil || d.Reconciliation.By != b.svc.Owner() || d.Reconciliation.PreviousOwner != a.svc.Owner() {
				t.Errorf("reconciliation record = %+v", d.Reconciliation)
			}
			// Settled once: nothing left, nothing resent.
			if ch, _ := b.svc.Settle(ctx); len(ch) != 0 {
				t.Errorf("second settle = %+v", ch)
			}
			if a.fake.CallCount("send") != 1 || b.fake.CallCount("send") != 0 {
				t.Errorf("sends: %d, %d", a.fake.CallCount("send"), b.fake.CallCount("send"))
			}
			// The dead dispatch's late answer does not undo the settlement
			// (but later evidence of a result may still resolve it).
			close(release)
			<-done
			got, _ := b.svc.Get(ctx, op.ID)
			if got.Status != tc.status {
				t.Errorf("after the late answer: %+v", got)
			}
		})
	}
}

func TestSettleAfterCloseAndAcrossReboot(t *testing.T) {
	a := newEnv(t, "")
	ctx := context.Background()
	a.fake.SendFunc = func(context.Context, string, string, providers.SendOptions) (providers.Receipt, error) {
		return queued("turn-q")
	}
	res, err := a.svc.Send(ctx, SendRequest{Provider: "codex", NativeID: "t1", Text: "accepted, outcome pending"})
	if err != nil || res.Operation.Status != providers.StatusQueued {
		t.Fatalf("send = %+v, %v", res, err)
	}
	if err := a.svc.Close(); err != nil {
		t.Fatal(err)
	}
	// The process closed (its pid may still run): released at once.
	b := newEnv(t, a.path)
	b.fake.LookupFunc = func(_ context.Context, q providers.TurnQuery) (providers.TurnRecord, error) {
		if q.Ref != "turn-q" {
			t.Errorf("query ref = %q", q.Ref)
		}
		return providers.TurnRecord{Found: true, Status: providers.StatusCompleted, Source: "fake history"}, nil
	}
	ch, err := b.svc.Settle(ctx)
	if err != nil || len(ch) != 1 || ch[0].Status != providers.StatusCompleted {
		t.Fatalf("settle after close = %+v, %v", ch, err)
	}
	// An owner from before a reboot of this host is gone even if its pid
	// runs again.
	c := newEnv(t, a.path)
	release, done := inflight(t, c, "boot")
	defer func() { close(release); <-done }()
	rebooted := newEnv(t, a.path, func(o *Options) { o.Process.Boot = "b2"; o.Alive = func(int) bool { return true } })
	ch, err = rebooted.svc.Settle(ctx)
	if err != nil || len(ch) != 1 || !strings.Contains(ch[0].Reason(), "before this host restarted") {
		t.Fatalf("settle after reboot = %+v, %v", ch, err)
	}
}

func TestSettleClaimsOnceAcrossProcesses(t *testing.T) {
	a := newEnv(t, "")
	release, done := inflight(t, a, "once")
	defer func() { close(release); <-done }()
	table.kill(a.pid())
	var lookups atomic.Int32
	lookup := func(context.Context, providers.TurnQuery) (providers.TurnRecord, error) {
		lookups.Add(1)
		return providers.TurnRecord{Source: "fake history"}, nil
	}
	settlers := make([]*env, 4)
	for i := range settlers {
		settlers[i] = newEnv(t, a.path)
		settlers[i].fake.LookupFunc = lookup
	}
	var wg sync.WaitGroup
	var settled atomic.Int32
	for _, s := range settlers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ch, err := s.svc.Settle(context.Background())
			if err != nil {
				t.Error(err)
			}
			settled.Add(int32(len(ch)))
		}()
	}
	wg.Wait()
	if settled.Load() != 1 || lookups.Load() != 1 {
		t.Fatalf("settled %d times with %d lookups, want 1 and 1", settled.Load(), lookups.Load())
	}
}

func TestStartSettlingRunsAtStartAndStopsOnClose(t *testing.T) {
	a := newEnv(t, "")
	release, done := inflight(t, a, "bg")
	defer func() { close(release); <-done }()
	table.kill(a.pid())
	b := newEnv(t, a.path, func(o *Options) { o.SettleEvery = time.Hour })
	b.fake.LookupFunc = func(context.Context, providers.TurnQuery) (providers.TurnRecord, error) {
		return providers.TurnRecord{Source: "fake history"}, nil
	}
	got := make(chan []Operation, 1)
	b.svc.StartSettling(context.Background(), func(ops []Operation, err error) {
		if err != nil {
			t.Error(err)
		}
		got <- ops
	})
	if ops := <-got; len(ops) != 1 || ops[0].IdempotencyKey != "bg" {
		t.Fatalf("start-up settlement = %+v", ops)
	}
	if err := b.svc.Close(); err != nil { // returns once the loop stopped
		t.Fatal(err)
	}
}

// TestOwnerExitSettlesWithoutATick: a live owner on this host is watched,
// and when it exits the settlement loop settles its open operation at once,
// with no tick of the (hour-long) settlement interval on the clock.
func TestOwnerExitSettlesWithoutATick(t *testing.T) {
	a := newEnv(t, "")
	release, done := inflight(t, a, "watched")
	defer func() { close(release); <-done }()
	b := newEnv(t, a.path, func(o *Options) { o.SettleEvery = time.Hour })
	b.fake.LookupFunc = func(context.Context, providers.TurnQuery) (providers.TurnRecord, error) {
		return providers.TurnRecord{Source: "fake history"}, nil
	}
	settled := make(chan Operation, 1)
	b.svc.OnOutcome(func(op Operation) { settled <- op })
	first := make(chan []Operation, 1)
	b.svc.StartSettling(context.Background(), func(ops []Operation, err error) {
		if err != nil {
			t.Error(err)
		}
		first <- ops
	})
	if ops := <-first; len(ops) != 0 {
		t.Fatalf("a live owner's operation was settled: %+v", ops)
	}
	if n := table.watchCount(a.pid()); n != 1 {
		t.Fatalf("the live owner on this host was watched %d times, want 1", n)
	}
	table.kill(a.pid())
	var op Operation
	select {
	case op = <-settled:
	case <-time.After(wait.InProcess):
		t.Fatalf("the owner's exit did not settle its operation within %s (the clock never moved)", wait.InProcess)
	}
	if op.IdempotencyKey != "watched" || op.Status != providers.StatusDeliveryUnknown || !strings.Contains(op.Reason(), "is no longer running") {
		t.Fatalf("settled on the owner's exit = %+v (%s)", op, op.Reason())
	}
	if err := b.svc.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestOwnersElsewhereAreNotWatched: an owner on another host, or this
// process itself, is never watched by pid (the pid means nothing here).
func TestOwnersElsewhereAreNotWatched(t *testing.T) {
	a := newEnv(t, "", func(o *Options) { o.Process.Host = "elsewhere" })
	release, done := inflight(t, a, "remote")
	defer func() { close(release); <-done }()
	b := newEnv(t, a.path, func(o *Options) { o.Clock = a.clock })
	if ops, err := b.svc.Settle(context.Background()); err != nil || len(ops) != 0 {
		t.Fatalf("settle = %+v, %v", ops, err)
	}
	if _, err := a.svc.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := table.watchCount(a.pid()); n != 0 {
		t.Fatalf("an owner on another host was watched %d times", n)
	}
}

// TestStartSettlingRacesClose: a client's initialize can start the
// settlement loop while the process is already closing (seen as a data
// race in the -race server of the e2e tier). Close waits for every loop it
// started and a loop started after Close never runs; under -race this
// fails on a WaitGroup Add racing Wait.
func TestStartSettlingRacesClose(t *testing.T) {
	for range 20 {
		e := newEnv(t, "", func(o *Options) { o.SettleEvery = time.Hour })
		started := make(chan struct{})
		go func() {
			defer close(started)
			e.svc.StartSettling(context.Background(), nil)
		}()
		if err := e.svc.Close(); err != nil {
			t.Fatal(err)
		}
		<-started
		e.svc.StartSettling(context.Background(), func([]Operation, error) {
			t.Error("a settlement loop ran after Close")
		})
	}
}

func TestCorrelationIDIsTheOperation(t *testing.T) {
	e := newEnv(t, "")
	var got string
	e.fake.SendFunc = func(_ context.Context, _, _ string, opts providers.SendOptions) (providers.Receipt, error) {
		got = opts.CorrelationID
		r, _ := queued("turn-c")
		r.NativeTurnID = "turn-c"
		return r, nil
	}
	res, err := e.svc.Send(context.Background(), SendRequest{Provider: "codex", NativeID: "t1", Text: "x"})
	if err != nil || got != res.Operation.ID || res.Operation.NativeTurnID != "turn-c" || res.Receipt.NativeTurnID != "turn-c" {
		t.Fatalf("correlation %q, op %+v, %v", got, res, err)
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
	// The same request from both processes: every caller gets the one
	// operation's receipt (the losers a replay), and it is sent once.
	for _, err := range errs {
		if err != nil {
			t.Fatalf("unexpected error %v", err)
		}
	}
	if n := a.st.Client().Operation.Query().CountX(context.Background()); n != 1 || sends.Load() != 1 {
		t.Fatalf("%d operations, dispatched %d", n, sends.Load())
	}
}

// eventRecorder is an EventReporter that keeps what it was told.
type eventRecorder struct {
	mu  sync.Mutex
	evs []providers.NativeEvent
}

func (r *eventRecorder) ReportEvent(_ providers.ID, ev providers.NativeEvent) {
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
}

// TestOutcomesFromTheRelayBecomeOperationEvents: the ledger takes the
// adapters' outcomes from the registry's relay and tells the event log of
// each changed operation.
func TestOutcomesFromTheRelayBecomeOperationEvents(t *testing.T) {
	relay := registry.NewHost()
	rec := &eventRecorder{}
	e := newEnv(t, "", func(o *Options) { o.Reports, o.Events = relay, rec })
	ctx := context.Background()
	e.fake.SendFunc = func(context.Context, string, string, providers.SendOptions) (providers.Receipt, error) {
		return queued("turn-5")
	}
	res, err := e.svc.Send(ctx, SendRequest{Provider: "codex", NativeID: "t1", Text: "x", IdempotencyKey: "k-5"})
	if err != nil {
		t.Fatal(err)
	}
	relay.ReportOutcome(providers.Codex, "t1", "turn-5", providers.Outcome{Status: providers.StatusCompleted})
	e.svc.Sync(ctx)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.evs) != 1 || rec.evs[0].Type != EventOperation || rec.evs[0].NativeID != "t1" {
		t.Fatalf("events = %+v", rec.evs)
	}
	var data operationEvent
	if err := json.Unmarshal(rec.evs[0].Data, &data); err != nil || data.OperationID != res.Operation.ID ||
		data.IdempotencyKey != "k-5" || data.Status != providers.StatusCompleted {
		t.Fatalf("event data %s (%v)", rec.evs[0].Data, err)
	}
}
