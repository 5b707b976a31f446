package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// fakeStreams is a provider whose streams the test feeds.
type fakeStreams struct {
	mu     sync.Mutex
	opens  atomic.Int32
	chans  []chan providers.NativeEvent
	opened chan chan providers.NativeEvent
	err    error
}

func newFakeStreams() *fakeStreams {
	return &fakeStreams{opened: make(chan chan providers.NativeEvent, 16)}
}

func (f *fakeStreams) open(ctx context.Context, _ providers.ID, _ string) (<-chan providers.NativeEvent, error) {
	f.opens.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	ch := make(chan providers.NativeEvent, 64)
	f.chans = append(f.chans, ch)
	f.opened <- ch
	return ch, nil
}

func ev(typ string, n int) providers.NativeEvent {
	return providers.NativeEvent{Type: typ, Timestamp: time.Date(2026, 11, 30, 6, 0, 0, n*1000, time.UTC), Data: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n))}
}

func waitOpen(t *testing.T, f *fakeStreams) chan providers.NativeEvent {
	t.Helper()
	return wait.Recv(t, "the hub to open the session's event stream", wait.InProcess, f.opened)
}

func newHub(t *testing.T, st *store.Store, f *fakeStreams, opts LogOptions) *Hub {
	h := NewHub(NewLog(st, opts), HubOptions{Open: f.open, ReopenBackoff: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond})
	t.Cleanup(func() { h.Close() })
	return h
}

func TestOneSharedSubscriptionAndMonotonicSequenceAcrossReopen(t *testing.T) {
	st := teststore.Open(t)
	f := newFakeStreams()
	h := newHub(t, st, f, LogOptions{})
	ctx := context.Background()
	req := ReadRequest{Provider: providers.Codex, NativeID: "t1", Limit: 100}
	// Many readers, many polls: one provider stream.
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 5; j++ {
				if _, err := h.Read(ctx, req); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	ch := waitOpen(t, f)
	wg.Wait()
	if n := f.opens.Load(); n != 1 {
		t.Fatalf("provider streams opened = %d, want 1", n)
	}
	ch <- ev("a", 1)
	ch <- ev("b", 2)
	req.Timeout = 5 * time.Second
	p, err := h.Read(ctx, req)
	for err == nil && len(p.Events) < 2 {
		req.AfterSequence = p.Next
		var more Page
		more, err = h.Read(ctx, req)
		p.Events = append(p.Events, more.Events...)
		p.Next, p.Epoch = more.Next, more.Epoch
	}
	if err != nil || p.Epoch != 1 || p.Events[0].Sequence != 1 || p.Events[1].Sequence != 2 || p.Events[1].Type != "b" {
		t.Fatalf("page = %+v, %v", p, err)
	}
	close(ch) // the provider stream ends: reopened with a new epoch
	ch2 := waitOpen(t, f)
	ch2 <- ev("c", 3)
	req.AfterSequence = 2
	p, err = h.Read(ctx, req)
	if err != nil || len(p.Events) != 1 || p.Events[0].Sequence != 3 || p.Events[0].Epoch != 2 || p.Epoch != 2 {
		t.Fatalf("after reopen = %+v, %v", p, err)
	}
	if string(p.Events[0].Data) != `{"n":3}` || !p.Events[0].Timestamp.Equal(ev("c", 3).Timestamp) {
		t.Fatalf("event = %+v", p.Events[0])
	}
}

// TestWaitWakesProgressAndCancel checks behaviour, not speed: a waiting
// read answers when an event arrives, reports progress while it waits, and
// ends with context.Canceled when its caller goes away. (How fast is a
// benchmark's business: BenchmarkWaitWakeAndCancel.) The deadlines below
// only keep a broken build from hanging.
func TestWaitWakesProgressAndCancel(t *testing.T) {
	st := teststore.Open(t)
	f := newFakeStreams()
	h := NewHub(NewLog(st, LogOptions{}), HubOptions{Open: f.open, ReopenBackoff: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond, ProgressInterval: 5 * time.Millisecond})
	t.Cleanup(func() { h.Close() })
	ctx := context.Background()
	if _, err := h.Read(ctx, ReadRequest{Provider: providers.Codex, NativeID: "t1"}); err != nil {
		t.Fatal(err)
	}
	ch := waitOpen(t, f)
	var progress atomic.Int32
	done := make(chan Page, 1)
	go func() {
		p, _ := h.Read(ctx, ReadRequest{Provider: providers.Codex, NativeID: "t1", Timeout: 20 * time.Second,
			Progress: func(waited, total time.Duration) { progress.Add(1) }})
		done <- p
	}()
	wait.For(t, "three progress reports while the read waits", wait.InProcess, func() bool { return progress.Load() >= 3 })
	ch <- ev("x", 1)
	if p := wait.Recv(t, "the waiting read to be woken by a new event", wait.InProcess, done); len(p.Events) != 1 || p.Events[0].Type != "x" {
		t.Fatalf("page = %+v", p)
	}
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := h.Read(cctx, ReadRequest{Provider: providers.Codex, NativeID: "t1", AfterSequence: 1, Timeout: 20 * time.Second})
		errc <- err
	}()
	cancel()
	if err := wait.Recv(t, "the cancelled read to return", wait.InProcess, errc); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	// A bounded wait with nothing new returns an empty page at the cursor.
	p, err := h.Read(ctx, ReadRequest{Provider: providers.Codex, NativeID: "t1", AfterSequence: 1, Timeout: 50 * time.Millisecond})
	if err != nil || len(p.Events) != 0 || p.Next != 1 || p.WaitEnded != WaitTimeout {
		t.Fatalf("timeout page = %+v, %v", p, err)
	}
}

// TestWaitEndsWhenTheSessionIsParked: a wait for events ends at once, and
// says why, when the session waits on an approval or its provider is
// gone; every page carries the session's liveness.
func TestWaitEndsWhenTheSessionIsParked(t *testing.T) {
	st := teststore.Open(t)
	f := newFakeStreams()
	var mu sync.Mutex
	state := providers.LiveWorking
	h := NewHub(NewLog(st, LogOptions{}), HubOptions{Open: f.open, ReopenBackoff: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond,
		Liveness: func(providers.ID, string) providers.Liveness {
			mu.Lock()
			defer mu.Unlock()
			at := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
			return providers.Liveness{State: state, ObservedAt: &at}
		}})
	t.Cleanup(func() { h.Close() })
	ctx := context.Background()
	first, err := h.Read(ctx, ReadRequest{Provider: providers.Codex, NativeID: "t1"})
	if err != nil || first.Liveness == nil || first.Liveness.State != providers.LiveWorking || first.WaitEnded != "" {
		t.Fatalf("first page = %+v, %v", first, err)
	}
	ch := waitOpen(t, f)
	for _, parked := range []providers.LivenessState{providers.LiveWaitingOnApproval, providers.LiveDead} {
		mu.Lock()
		state = parked
		mu.Unlock()
		done := make(chan Page, 1)
		go func() {
			p, _ := h.Read(ctx, ReadRequest{Provider: providers.Codex, NativeID: "t1", Timeout: MaxWait})
			done <- p
		}()
		select {
		case p := <-done:
			if len(p.Events) != 0 || p.WaitEnded != string(parked) || p.Liveness.State != parked {
				t.Fatalf("parked page = %+v", p)
			}
		case <-time.After(MaxWait - 5*time.Second):
			t.Fatalf("a wait on a %s session ran to its timeout", parked)
		}
	}
	// Events still come first: a parked session's new event is returned.
	ch <- ev("permission", 1)
	wait.For(t, "the parked session's new event to be served", wait.InProcess, func() bool {
		p, _ := h.Read(ctx, ReadRequest{Provider: providers.Codex, NativeID: "t1", Timeout: time.Second})
		return len(p.Events) == 1 && p.WaitEnded == ""
	})
}

func TestRetentionGap(t *testing.T) { pgtest.EachDialect(t, testRetentionGap) }

func testRetentionGap(t *testing.T, location string) {
	st := teststore.OpenAt(t, location)
	l := NewLog(st, LogOptions{Retention: 50})
	ctx := context.Background()
	for i := 1; i <= 120; i++ {
		if _, err := l.Append(ctx, providers.Codex, "t1", 1, []providers.NativeEvent{ev("e", i)}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := l.Page(ctx, providers.Codex, "t1", 0, 10)
	if err != nil || p.Gap == nil || *p.Gap != (Gap{From: 1, To: 70}) || p.Events[0].Sequence != 71 || p.Next != 80 {
		t.Fatalf("page = %+v gap %+v, %v", p, p.Gap, err)
	}
	p, _ = l.Page(ctx, providers.Codex, "t1", 75, 10)
	if p.Gap != nil || p.Events[0].Sequence != 76 {
		t.Fatalf("page inside window = %+v", p)
	}
	// Rows are trimmed in steps: never more than retention + slack remain.
	var n int64
	if err := st.DB().QueryRow("SELECT count(*) FROM session_events WHERE native_id = 't1'").Scan(&n); err != nil || n > 50+16 {
		t.Fatalf("rows kept = %d, %v", n, err)
	}
	// A batch larger than the retention keeps only its newest events.
	big := make([]providers.NativeEvent, 200)
	for i := range big {
		big[i] = ev("big", i)
	}
	last, err := l.Append(ctx, providers.Codex, "t2", 1, big)
	if err != nil || last != 200 {
		t.Fatal(last, err)
	}
	p, _ = l.Page(ctx, providers.Codex, "t2", 0, 100)
	if p.Gap == nil || p.Gap.To != 150 || p.Events[0].Sequence != 151 || len(p.Events) != 50 {
		t.Fatalf("big batch page = %+v", p)
	}
}

func TestCursorSurvivesRestartAndTwoProcessesShareSequences(t *testing.T) {
	pgtest.EachDialect(t, testCursorSurvivesRestartAndTwoProcessesShareSequences)
}

func testCursorSurvivesRestartAndTwoProcessesShareSequences(t *testing.T, path string) {
	ctx := context.Background()
	open := func() *store.Store {
		st, err := store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	a, b := open(), open() // two "runtime processes" on one file
	la, lb := NewLog(a, LogOptions{}), NewLog(b, LogOptions{})
	var wg sync.WaitGroup
	for w, l := range []*Log{la, lb, la, lb} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if _, err := l.Append(ctx, providers.Codex, "shared", 1, []providers.NativeEvent{ev(fmt.Sprint(w), i)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	a.Close()
	b.Close()
	c := open() // restart
	defer c.Close()
	lc := NewLog(c, LogOptions{})
	seen := map[int64]bool{}
	after := int64(0)
	for {
		p, err := lc.Page(ctx, providers.Codex, "shared", after, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Events) == 0 {
			break
		}
		for _, e := range p.Events {
			if seen[e.Sequence] || e.Sequence != after+1 {
				t.Fatalf("sequence %d after %d (dup=%v)", e.Sequence, after, seen[e.Sequence])
			}
			seen[e.Sequence] = true
			after = e.Sequence
		}
	}
	if after != 200 {
		t.Fatalf("last sequence %d, want 200", after)
	}
	// The cursor continues after the restart.
	if _, err := lc.Append(ctx, providers.Codex, "shared", CurrentEpoch, []providers.NativeEvent{ev("later", 1)}); err != nil {
		t.Fatal(err)
	}
	p, _ := lc.Page(ctx, providers.Codex, "shared", 200, 10)
	if len(p.Events) != 1 || p.Events[0].Sequence != 201 {
		t.Fatalf("after restart = %+v", p)
	}
}

func TestWaitWakesOnAnotherProcessAppend(t *testing.T) {
	pgtest.EachDialect(t, testWaitWakesOnAnotherProcessAppend)
}

func testWaitWakesOnAnotherProcessAppend(t *testing.T, path string) {
	ctx := context.Background()
	a, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	f := newFakeStreams()
	h := NewHub(NewLog(a, LogOptions{}), HubOptions{Open: f.open, ReopenBackoff: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond, ProgressInterval: 5 * time.Millisecond})
	t.Cleanup(func() { h.Close() })
	other := NewLog(b, LogOptions{})
	done := make(chan Page, 1)
	waiting := make(chan struct{})
	var once sync.Once
	go func() {
		p, _ := h.Read(ctx, ReadRequest{Provider: providers.Codex, NativeID: "x", Timeout: MaxWait,
			Progress: func(time.Duration, time.Duration) { once.Do(func() { close(waiting) }) }})
		done <- p
	}()
	waitOpen(t, f)
	<-waiting // the read reports progress: it is waiting
	if _, err := other.Append(ctx, providers.Codex, "x", 1, []providers.NativeEvent{ev("from-b", 1)}); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-done:
		if len(p.Events) != 1 || p.Events[0].Type != "from-b" {
			t.Fatalf("page = %+v", p)
		}
	case <-time.After(MaxWait - 5*time.Second): // a bound below the wait's own
		t.Fatal("not woken by another process's append")
	}
}

type notFound struct{}

func (notFound) Error() string  { return "Unknown session codex:nope" }
func (notFound) NotFound() bool { return true }

func TestUnsupportedAndUnknownAreErrorsOtherFailuresWarn(t *testing.T) {
	st := teststore.Open(t)
	f := newFakeStreams()
	f.err = &providers.UnsupportedError{Provider: providers.Cursor, Operation: "events"}
	h := newHub(t, st, f, LogOptions{})
	_, err := h.Read(context.Background(), ReadRequest{Provider: providers.Cursor, NativeID: "s"})
	if err == nil || err.Error() != "cursor does not expose native events: cursor does not support events" {
		t.Fatalf("err = %v", err)
	}
	f.err = notFound{}
	if _, err := h.Read(context.Background(), ReadRequest{Provider: providers.Codex, NativeID: "nope"}); err == nil || err.Error() != "Unknown session codex:nope" {
		t.Fatalf("err = %v", err)
	}
	f.err = errors.New("codex app-server failed to start")
	p, err := h.Read(context.Background(), ReadRequest{Provider: providers.Codex, NativeID: "s2"})
	if err != nil || p.Warning == "" {
		t.Fatalf("page = %+v, %v", p, err)
	}
}

// TestWatchOpensTheStreamBeforeATurn: Watch starts the shared subscription
// and returns once the provider stream is open, so an event sent right
// after it is logged in the first epoch.
func TestWatchOpensTheStreamBeforeATurn(t *testing.T) {
	st := teststore.Open(t)
	f := newFakeStreams()
	h := newHub(t, st, f, LogOptions{})
	ctx := context.Background()
	if err := h.Watch(ctx, providers.Codex, "w1", 10*time.Second); err != nil {
		t.Fatalf("watch: %v", err)
	}
	ch := waitOpen(t, f)
	if !h.Subscribed(providers.Codex, "w1") {
		t.Fatal("no subscription after Watch")
	}
	ch <- ev("first", 1)
	p, err := h.Read(ctx, ReadRequest{Provider: providers.Codex, NativeID: "w1", Timeout: 10 * time.Second})
	if err != nil || len(p.Events) != 1 || p.Events[0].Type != "first" || p.Events[0].Epoch != 1 {
		t.Fatalf("page = %+v, %v", p, err)
	}
	if err := h.Watch(ctx, providers.Codex, "w1", time.Second); err != nil {
		t.Fatalf("second watch: %v", err)
	}
	select {
	case <-f.opened:
		t.Fatal("a second Watch opened a second provider stream")
	default:
	}
}

// TestEventTimesRoundTripOnEveryDialect: an event's timestamp reads back as
// written (to the microsecond, PostgreSQL's precision) on both dialects.
func TestEventTimesRoundTripOnEveryDialect(t *testing.T) {
	pgtest.EachDialect(t, func(t *testing.T, location string) {
		l := NewLog(teststore.OpenAt(t, location), LogOptions{})
		ctx := context.Background()
		ts := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)
		if _, err := l.Append(ctx, providers.Codex, "times", 1, []providers.NativeEvent{{Type: "t", Timestamp: ts, Data: []byte(`{"b":1,"a":[2]}`)}}); err != nil {
			t.Fatal(err)
		}
		p, err := l.Page(ctx, providers.Codex, "times", 0, 10)
		if err != nil || len(p.Events) != 1 {
			t.Fatalf("page = %+v, %v", p, err)
		}
		if got := p.Events[0]; !got.Timestamp.Equal(ts) || string(got.Data) != `{"b":1,"a":[2]}` {
			t.Fatalf("event = %v %s, want %v with its data byte for byte", got.Timestamp, got.Data, ts)
		}
	})
}
