package opencode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/agent-interop/runtime/internal/providers/kit/sse"
)

// This file is the event stream: one GET /global/event connection at a
// time, read as server-sent events, reconnected with back-off while
// something needs it.

// Event stream bounds.
const (
	maxEventBytes     = 16 << 20 // largest single SSE event
	maxStreamFailures = 3        // consecutive failed connections before the hub stops (no prompt followed)
	// followPatience is how long the hub keeps trying to reconnect while it
	// follows prompts and nothing proved the server gone (a busy server on a
	// loaded machine can be slow to answer); then they are reported lost.
	followPatience = 2 * time.Minute

	minReconnectDelay = 250 * time.Millisecond
	maxReconnectDelay = 8 * time.Second
	stableStream      = 10 * time.Second // a stream that lasted this long resets the back-off
)

// streamState is the hub's connection state.
type streamState struct {
	streamMu sync.Mutex // guards the fields below and each attempt's cancel, idleStop and err
	// closing is written holding streamMu and turnMu: either may read it.
	closing  bool
	running  bool
	att      *attempt
	holds    int
	lastBase string // the endpoint of the last stream attempt
}

// attempt is one connection of the event stream.
type attempt struct {
	connected chan struct{} // closed on server.connected
	done      chan struct{} // closed when the attempt ended
	cancel    context.CancelFunc
	idleStop  bool  // ended because nothing needed the stream any more
	err       error // why it ended; set before done is closed
	once      sync.Once
}

func newAttempt() *attempt {
	return &attempt{connected: make(chan struct{}), done: make(chan struct{}), cancel: func() {}}
}

func (at *attempt) markConnected() { at.once.Do(func() { close(at.connected) }) }

func (at *attempt) isConnected() bool {
	select {
	case <-at.connected:
		return true
	default:
		return false
	}
}

// neededLocked reports whether something needs the stream: a prompt being
// sent, a subscriber, or a prompt followed. The caller holds streamMu.
func (h *hub) neededLocked() bool {
	return h.holds > 0 || h.subs.Len() > 0 || h.following()
}

// ensureRunningLocked starts the stream unless it runs or the hub is
// closing. The caller holds streamMu.
func (h *hub) ensureRunningLocked() {
	if h.running || h.closing {
		return
	}
	h.running = true
	h.att = newAttempt()
	h.wg.Add(1)
	go h.run()
}

// maybeStopLocked ends the connection when nothing needs it any more. The
// caller holds streamMu.
func (h *hub) maybeStopLocked() {
	if h.running && !h.neededLocked() && h.att != nil {
		h.att.idleStop = true
		h.att.cancel()
	}
}

// maybeStop is maybeStopLocked for callers without streamMu.
func (h *hub) maybeStop() {
	h.streamMu.Lock()
	defer h.streamMu.Unlock()
	h.maybeStopLocked()
}

// hold keeps the stream running while a prompt is sent and reports whether
// it is connected. It waits at most the request timeout for the connection.
func (h *hub) hold(ctx context.Context) (bool, func()) {
	h.streamMu.Lock()
	if h.closing {
		h.streamMu.Unlock()
		return false, func() {}
	}
	h.holds++
	h.ensureRunningLocked()
	att := h.att
	h.streamMu.Unlock()
	release := func() {
		h.streamMu.Lock()
		h.holds--
		h.maybeStopLocked()
		h.streamMu.Unlock()
	}
	return h.waitConnected(ctx, att, h.a.cfg.RequestTimeout), release
}

// run connects, reads until the stream ends, and reconnects while needed.
func (h *hub) run() {
	defer h.wg.Done()
	failures := 0
	next := minReconnectDelay
	reached := h.a.clock.Now() // when the stream was last connected (or the hub started)
	for {
		h.streamMu.Lock()
		att := h.att
		ctx, cancel := context.WithCancel(h.base)
		att.cancel = cancel
		if att.idleStop || h.closing {
			cancel()
		}
		h.streamMu.Unlock()

		started := h.a.clock.Now()
		err := h.stream(ctx, cancel, att)
		cancel()
		lasted := h.a.clock.Now().Sub(started)

		h.streamMu.Lock()
		stopping := h.closing || att.idleStop
		base := h.lastBase
		h.streamMu.Unlock()
		// A stream that ended on its own: is the server still there? If
		// not, the turns it was running are gone with it.
		goneWhy := ""
		if !stopping && h.base.Err() == nil {
			goneWhy = h.a.serverGone(err, base)
		}

		h.streamMu.Lock()
		att.err = err
		h.subs.EndAll()
		close(att.done)
		switch {
		case att.isConnected() && lasted >= stableStream:
			failures, next = 0, minReconnectDelay
		case att.isConnected():
			failures = 0 // connected but dropped quickly: keep backing off
		default:
			failures++
		}
		if att.isConnected() {
			reached = h.a.clock.Now()
		}
		var reports []report
		if goneWhy != "" {
			reports = h.lost(goneWhy)
		}
		giveUp := failures >= maxStreamFailures
		if giveUp && h.following() && h.a.clock.Now().Sub(reached) < followPatience {
			giveUp = false // prompts are followed: keep trying, with back-off
		}
		if !h.closing && h.neededLocked() && giveUp {
			reports = append(reports, h.lost(fmt.Sprintf("the OpenCode event stream could not be reopened for %s (%d attempts; %v)",
				h.a.clock.Now().Sub(reached).Round(time.Second), failures, err))...)
		}
		if h.closing || !h.neededLocked() || giveUp {
			h.running = false
			h.att = nil
			h.streamMu.Unlock()
			h.deliver(reports)
			return
		}
		h.att = newAttempt()
		h.streamMu.Unlock()
		h.deliver(reports)

		if !h.sleep(next) {
			h.streamMu.Lock()
			h.subs.EndAll()
			h.running = false
			h.att = nil
			h.streamMu.Unlock()
			return
		}
		next = min(next*2, maxReconnectDelay)
	}
}

// sleep waits d on the adapter's clock; false when the hub is closing.
func (h *hub) sleep(d time.Duration) bool {
	fired := make(chan struct{})
	t := h.a.clock.AfterFunc(d, func() { close(fired) })
	defer t.Stop()
	select {
	case <-fired:
		return true
	case <-h.base.Done():
		return false
	}
}

// stream runs one connection of GET /global/event.
func (h *hub) stream(ctx context.Context, cancel context.CancelFunc, att *attempt) error {
	ep, err := h.a.current(ctx)
	if err != nil {
		return fmt.Errorf("event stream: %w", err)
	}
	h.streamMu.Lock()
	h.lastBase = ep.base
	h.streamMu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ep.base+"/global/event", nil)
	if err != nil {
		return fmt.Errorf("event stream: %w", err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	h.a.authorize(req)

	// Silence longer than HeartbeatTimeout (the server beats every 10 s)
	// means a dead connection: cancel it and let run reconnect.
	idle := h.a.clock.AfterFunc(h.a.cfg.HeartbeatTimeout, cancel)
	defer idle.Stop()

	read, _ := h.a.clients()
	resp, err := read.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			h.a.invalidate(ep)
		}
		return &connectFailure{base: ep.base, err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return fmt.Errorf("event stream: %w", newAPIError(http.MethodGet, "/global/event", resp.StatusCode, resp.Header.Get("Content-Type"), data, h.a.secrets()))
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return fmt.Errorf("event stream: GET /global/event answered %q, not text/event-stream (not an OpenCode server?)", resp.Header.Get("Content-Type"))
	}

	// Every read resets the idle timer; comments, "event:", "id:" and
	// "retry:" lines carry nothing OpenCode uses.
	err = sse.Read(resp.Body, sse.Options{
		MaxEvent: maxEventBytes,
		Activity: func() { idle.Reset(h.a.cfg.HeartbeatTimeout) },
	}, func(ev sse.Event) { h.dispatch(att, []byte(ev.Data)) })
	if ctx.Err() != nil {
		h.streamMu.Lock()
		stopped := att.idleStop
		h.streamMu.Unlock()
		if stopped || h.base.Err() != nil {
			return errors.New("event stream stopped")
		}
		return fmt.Errorf("event stream: no data for %s (missed heartbeats)", h.a.cfg.HeartbeatTimeout)
	}
	if errors.Is(err, io.EOF) {
		return errors.New("event stream: server closed the stream")
	}
	return fmt.Errorf("event stream: %w", err)
}

// waitConnected waits for att to connect, for at most d.
func (h *hub) waitConnected(ctx context.Context, att *attempt, d time.Duration) bool {
	if att == nil {
		return false
	}
	expired := make(chan struct{})
	t := h.a.clock.AfterFunc(d, func() { close(expired) })
	defer t.Stop()
	select {
	case <-att.connected:
		return true
	case <-att.done:
		return att.isConnected()
	case <-ctx.Done():
	case <-expired:
	}
	return false
}
