package events

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/internal/clockctx"
	"github.com/agent-interop/runtime/internal/growstack"
	"github.com/agent-interop/runtime/internal/providers"
)

// MaxWait bounds one read's wait (read_session_events' timeoutMs).
const MaxWait = limits.ReadSessionEventsTimeoutMsMax * time.Millisecond

// openWait is how long a read waits for a session's first stream to open
// (so a missing session or an unsupported provider is reported as such).
const openWait = 3 * time.Second

// Opener opens a session's provider event stream (the registry's routed
// Subscribe).
type Opener func(ctx context.Context, provider providers.ID, nativeID string) (<-chan providers.NativeEvent, error)

// HubOptions configure a Hub.
type HubOptions struct {
	// Open opens provider streams (required for live events).
	Open Opener
	// IdleTimeout ends a subscription nobody read for this long (default 10 min).
	IdleTimeout time.Duration
	// PollInterval is how often a waiting read checks the database for
	// events appended by another process (default 100 ms).
	PollInterval time.Duration
	// ProgressInterval is how often a waiting read reports progress
	// (default 500 ms, so at least every second).
	ProgressInterval time.Duration
	// ReopenBackoff is the first delay before reopening a stream that
	// failed or ended at once (default 250 ms, doubling to 10 s).
	ReopenBackoff time.Duration
	// Logf receives diagnostics (default: discarded).
	Logf func(format string, args ...any)
	// Liveness reports what the runtime knows of a session now (the
	// registry's); every page carries it, and a wait ends early when the
	// session is parked on an approval or its provider is gone.
	Liveness func(provider providers.ID, nativeID string) providers.Liveness
	// Reports, when set, hands the hub the adapters' out-of-band events
	// (the registry's relay); each is appended to its session's log.
	Reports EventSource
}

// EventSource passes provider events on to a reporter once it is there.
type EventSource interface {
	ForwardEvents(providers.EventReporter)
}

// Hub shares one provider subscription per session among all readers.
type Hub struct {
	log  *Log
	opts HubOptions

	mu     sync.Mutex
	subs   map[key]*subscription
	closed bool
	wg     sync.WaitGroup
}

type subscription struct {
	k        key
	clock    quartz.Clock
	cancel   context.CancelFunc
	mu       sync.Mutex
	lastRead time.Time
	err      error // last open failure ("" while streaming)
	opened   chan struct{}
	openOnce sync.Once
	// While a drain runs (live), ReportEvent hands its event to it, so the
	// event is stored after every event the provider stream delivered
	// before it (a turn's last update before the verdict's operation
	// event). rmu orders the hand-over with the drain's end.
	rmu     sync.Mutex
	live    bool
	reports chan report
}

// report is an out-of-band event handed to a session's drain; done closes
// once it was appended.
type report struct {
	ev   providers.NativeEvent
	done chan struct{}
}

// NewHub returns a hub over log.
func NewHub(log *Log, opts HubOptions) *Hub {
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 10 * time.Minute
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 100 * time.Millisecond
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = 500 * time.Millisecond
	}
	if opts.ReopenBackoff <= 0 {
		opts.ReopenBackoff = 250 * time.Millisecond
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	h := &Hub{log: log, opts: opts, subs: map[key]*subscription{}}
	if opts.Reports != nil {
		opts.Reports.ForwardEvents(h)
	}
	return h
}

// clock is the hub's time source: its log's (one injected clock).
func (h *Hub) clock() quartz.Clock { return h.log.clock }

// Log returns the hub's log.
func (h *Hub) Log() *Log { return h.log }

// ReadRequest is one read_session_events call.
type ReadRequest struct {
	Provider      providers.ID
	NativeID      string
	AfterSequence int64
	Limit         int           // 1..100 (default 50)
	Timeout       time.Duration // 0..30 s; 0 answers at once
	// Progress, when set, is called at least every second while the read
	// waits, with the time waited so far and the wait's bound.
	Progress func(waited, total time.Duration)
}

// Read answers one read: the events after the cursor, waiting up to
// req.Timeout for the first one. It makes sure the session's shared
// provider subscription is running; when it cannot be opened the stored
// events are still served and Page.Warning says why.
func (h *Hub) Read(ctx context.Context, req ReadRequest) (Page, error) {
	if req.Limit <= 0 {
		req.Limit = 50
	}
	if req.Limit > MaxPage {
		req.Limit = MaxPage
	}
	if req.Timeout < 0 {
		req.Timeout = 0
	}
	if req.Timeout > MaxWait {
		req.Timeout = MaxWait
	}
	k := key{req.Provider, req.NativeID}
	sub, err := h.ensure(k)
	if err != nil {
		return Page{}, err
	}
	warning := sub.wait(ctx, openWait)
	var unsupported *providers.UnsupportedError
	if errors.As(warning, &unsupported) {
		return Page{}, fmt.Errorf("%s does not expose native events: %w", req.Provider, warning)
	}
	var nf interface{ NotFound() bool }
	if errors.As(warning, &nf) && nf.NotFound() {
		return Page{}, warning
	}
	page, err := h.read(ctx, k, req, h.clock().Now())
	if warning != nil {
		page.Warning = "live events unavailable: " + warning.Error()
	}
	if h.opts.Liveness != nil {
		l := h.opts.Liveness(k.provider, k.nativeID)
		page.Liveness = &l
	}
	return page, err
}

// parked reports whether a wait for new events should end now because the
// session cannot produce any until someone acts: it waits on an approval,
// or its provider process is gone.
func (h *Hub) parked(k key) (providers.LivenessState, bool) {
	if h.opts.Liveness == nil {
		return "", false
	}
	switch l := h.opts.Liveness(k.provider, k.nativeID); l.State {
	case providers.LiveWaitingOnApproval, providers.LiveDead:
		return l.State, true
	}
	return "", false
}

func (h *Hub) read(ctx context.Context, k key, req ReadRequest, start time.Time) (Page, error) {
	deadline := start.Add(req.Timeout)
	progress := h.clock().NewTicker(h.opts.ProgressInterval, "events", "progress")
	defer progress.Stop()
	poll := h.clock().NewTicker(h.opts.PollInterval, "events", "poll")
	defer poll.Stop()
	var timer <-chan time.Time
	for {
		wake := h.log.notify.wait(k) // before reading: an append in between still wakes us
		page, err := h.log.Page(ctx, k.provider, k.nativeID, req.AfterSequence, req.Limit)
		if err != nil || len(page.Events) > 0 || page.Gap != nil {
			return page, err
		}
		left := h.clock().Until(deadline)
		if left <= 0 {
			if req.Timeout > 0 {
				page.WaitEnded = WaitTimeout
			}
			return page, nil
		}
		if state, ok := h.parked(k); ok {
			page.WaitEnded = string(state)
			return page, nil
		}
		if timer == nil {
			t := h.clock().NewTimer(left, "events", "read deadline")
			defer t.Stop()
			timer = t.C
		}
	wait:
		for {
			select {
			case <-ctx.Done():
				return page, ctx.Err()
			case <-timer:
				page, err := h.log.Page(ctx, k.provider, k.nativeID, req.AfterSequence, req.Limit)
				if len(page.Events) == 0 && page.Gap == nil {
					page.WaitEnded = WaitTimeout
				}
				return page, err
			case <-wake:
				break wait
			case <-poll.C:
				break wait
			case <-progress.C:
				if req.Progress != nil { // never more than the bound, on a late tick
					req.Progress(min(h.clock().Since(start), req.Timeout), req.Timeout)
				}
			}
		}
	}
}

// Watch makes sure the session's shared subscription is running and waits
// (at most within) until its provider stream is open, so that events of a
// turn about to start are captured from its first one. It returns the
// stream's open failure, if any; callers treat it as best effort.
func (h *Hub) Watch(ctx context.Context, provider providers.ID, nativeID string, within time.Duration) error {
	s, err := h.ensure(key{provider, nativeID})
	if err != nil {
		return err
	}
	return s.wait(ctx, within)
}

// ensure returns the session's subscription, starting its pump when needed.
func (h *Hub) ensure(k key) (*subscription, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errors.New("event hub is closed")
	}
	s := h.subs[k]
	if s == nil {
		ctx, cancel := context.WithCancel(context.Background())
		s = &subscription{k: k, clock: h.clock(), cancel: cancel, opened: make(chan struct{}), lastRead: h.clock().Now(),
			reports: make(chan report, 64)}
		h.subs[k] = s
		h.wg.Add(1)
		go h.pump(ctx, s)
	}
	s.mu.Lock()
	s.lastRead = h.clock().Now()
	s.mu.Unlock()
	return s, nil
}

// wait gives a new subscription a moment to open (bounded by d) and returns
// its last open failure, if any.
func (s *subscription) wait(ctx context.Context, d time.Duration) error {
	if d > 0 {
		t := s.clock.NewTimer(d, "events", "open wait")
		select {
		case <-s.opened:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *subscription) setErr(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
	s.openOnce.Do(func() { close(s.opened) })
}

func (s *subscription) idleFor() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clock.Since(s.lastRead)
}

// pump keeps the provider stream of one session flowing into the log,
// reopening it (new epoch) whenever it ends, until the hub closes, the
// subscription idles out, or the provider says it has no events.
func (h *Hub) pump(ctx context.Context, s *subscription) {
	defer h.wg.Done()
	defer h.drop(s)
	growstack.Grow() // the stream's events are written to the store
	backoff := h.opts.ReopenBackoff
	for ctx.Err() == nil {
		if s.idleFor() > h.opts.IdleTimeout {
			return
		}
		if h.opts.Open == nil {
			s.setErr(errors.New("no provider stream opener configured"))
			return
		}
		sctx, scancel := context.WithCancel(ctx)
		ch, err := h.opts.Open(sctx, s.k.provider, s.k.nativeID)
		if err != nil {
			scancel()
			s.setErr(err)
			var nf interface{ NotFound() bool }
			if errors.As(err, new(*providers.UnsupportedError)) || (errors.As(err, &nf) && nf.NotFound()) {
				return
			}
			if !sleepCtx(ctx, h.clock(), backoff) {
				return
			}
			backoff = min(backoff*2, 10*time.Second)
			continue
		}
		epoch, err := h.log.NewEpoch(ctx, s.k.provider, s.k.nativeID)
		if err != nil {
			scancel()
			s.setErr(err)
			if !sleepCtx(ctx, h.clock(), backoff) {
				return
			}
			continue
		}
		// live before the stream counts as open (Watch returns), so a
		// report after Watch goes through the drain.
		s.rmu.Lock()
		s.live = true
		s.rmu.Unlock()
		s.setErr(nil)
		opened := h.clock().Now()
		h.drain(ctx, s, ch, epoch)
		scancel()
		if h.clock().Since(opened) > 5*time.Second {
			backoff = h.opts.ReopenBackoff
		} else if !sleepCtx(ctx, h.clock(), backoff) { // ended at once: do not spin
			return
		} else {
			backoff = min(backoff*2, 10*time.Second)
		}
	}
}

// drain appends events from ch until it closes, batching what is queued.
// An event ReportEvent hands over is appended after everything ch
// delivered before it: what this goroutine took, and what ch still
// queues.
func (h *Hub) drain(ctx context.Context, s *subscription, ch <-chan providers.NativeEvent, epoch int64) {
	idle := h.clock().NewTicker(time.Minute, "events", "idle")
	defer idle.Stop()
	defer func() {
		s.rmu.Lock()
		s.live = false
		s.rmu.Unlock()
		// No report is handed over any more: store those left.
		for {
			select {
			case r := <-s.reports:
				h.appendReport(ctx, s, r)
			default:
				return
			}
		}
	}()
	batch := make([]providers.NativeEvent, 0, 256)
	open := true
	// queued appends batch and what ch queues now (up to the batch's cap).
	queued := func() {
		for open && len(batch) < cap(batch) {
			select {
			case ev, ok := <-ch:
				if !ok {
					open = false
					return
				}
				batch = append(batch, ev)
			default:
				return
			}
		}
	}
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if _, err := h.log.Append(context.WithoutCancel(ctx), s.k.provider, s.k.nativeID, epoch, batch); err != nil {
			h.opts.Logf("events: %v", err)
			s.setErr(err)
		}
		batch = batch[:0]
	}
	for open {
		select {
		case <-ctx.Done():
			return
		case <-idle.C:
			if s.idleFor() > h.opts.IdleTimeout {
				return
			}
		case r := <-s.reports:
			for queued(); len(batch) > 0; queued() {
				flush()
			}
			h.appendReport(ctx, s, r)
		case ev, ok := <-ch:
			if !ok {
				return
			}
			batch = append(batch[:0], ev)
			queued()
			flush()
		}
	}
}

// appendReport stores a handed-over event with the session's current
// epoch, as ReportEvent does.
func (h *Hub) appendReport(ctx context.Context, s *subscription, r report) {
	defer close(r.done)
	if _, err := h.log.Append(context.WithoutCancel(ctx), s.k.provider, s.k.nativeID, CurrentEpoch, []providers.NativeEvent{r.ev}); err != nil {
		h.opts.Logf("events: report %s for %s:%s: %v", r.ev.Type, s.k.provider, s.k.nativeID, err)
	}
}

func (h *Hub) drop(s *subscription) {
	h.mu.Lock()
	if h.subs[s.k] == s {
		delete(h.subs, s.k)
	}
	h.mu.Unlock()
	s.cancel()
}

// ReportEvent implements providers.EventReporter: an out-of-band event
// (such as provider.restarted) is stored with the session's current epoch.
//
// While the session's provider stream is being drained, the event goes
// through that drain, after every event the stream delivered before the
// call: an outcome reported at a turn's end never overtakes the turn's
// last updates. ReportEvent returns once the event was stored.
func (h *Hub) ReportEvent(provider providers.ID, ev providers.NativeEvent) {
	ctx, cancel := clockctx.WithTimeout(context.Background(), h.clock(), 10*time.Second, "events", "report")
	defer cancel()
	h.mu.Lock()
	s := h.subs[key{provider, ev.NativeID}]
	h.mu.Unlock()
	if s != nil {
		r := report{ev: ev, done: make(chan struct{})}
		s.rmu.Lock()
		handed := false
		if s.live {
			select {
			case s.reports <- r:
				handed = true
			default: // a full hand-over queue: stored directly
			}
		}
		s.rmu.Unlock()
		if handed {
			select {
			case <-r.done:
			case <-ctx.Done():
				h.opts.Logf("events: report %s for %s:%s: not stored within its deadline", ev.Type, provider, ev.NativeID)
			}
			return
		}
	}
	if _, err := h.log.Append(ctx, provider, ev.NativeID, CurrentEpoch, []providers.NativeEvent{ev}); err != nil {
		h.opts.Logf("events: report %s for %s:%s: %v", ev.Type, provider, ev.NativeID, err)
	}
}

// Subscribed reports whether a subscription for the session is running.
func (h *Hub) Subscribed(provider providers.ID, nativeID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.subs[key{provider, nativeID}]
	return ok
}

// Close ends every subscription and waits for the pumps.
func (h *Hub) Close() error {
	h.mu.Lock()
	h.closed = true
	for _, s := range h.subs {
		s.cancel()
	}
	h.mu.Unlock()
	h.wg.Wait()
	return nil
}

// sleepCtx waits d on clock c, or until ctx ends (false).
func sleepCtx(ctx context.Context, c quartz.Clock, d time.Duration) bool {
	t := c.NewTimer(d, "events", "reopen backoff")
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
