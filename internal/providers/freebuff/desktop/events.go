package desktop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
	"github.com/agent-interop/runtime/internal/providers/kit/sse"
)

// Reconnect backoff of the SSE client (0.3.x: 250 ms doubling to 10 s).
const (
	BackoffMin = 250 * time.Millisecond
	BackoffMax = 10 * time.Second
)

// eventClient keeps one SSE subscription to GET /api/events open while the
// backend is in use, feeding the progress store. It reconnects with
// exponential backoff and re-discovers the orchestrator after an
// authorization refusal (a restarted Desktop has a new port and launch id).
type eventClient struct {
	d *Backend

	mu      sync.Mutex
	running bool
	closed  bool // stop was called: the backend is closed, start does nothing
	cancel  context.CancelFunc
	done    chan struct{}
}

func newEventClient(d *Backend) *eventClient { return &eventClient{d: d} }

// start launches the stream loop once. After stop it does nothing: a
// discovery or a subscription still under way when the backend closed must
// not start a loop that nothing would end.
func (e *eventClient) start() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.running || e.closed {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.running, e.cancel, e.done = true, cancel, make(chan struct{})
	go e.loop(ctx, e.done)
}

// stop ends the loop, waits for it, and keeps it from starting again.
func (e *eventClient) stop() {
	e.mu.Lock()
	cancel, done := e.cancel, e.done
	e.running, e.closed, e.cancel, e.done = false, true, nil, nil
	e.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

func (e *eventClient) loop(ctx context.Context, done chan struct{}) {
	defer close(done)
	store := e.d.store
	backoff := BackoffMin
	for ctx.Err() == nil {
		conn, err := e.d.connection(ctx, false)
		connected := false
		if err == nil {
			connected, err = e.stream(ctx, conn)
		}
		store.setConnected(false)
		store.subs.EndAll()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			e.d.cfg.Logger.Debug("freebuff event stream ended", "err", err)
		}
		if connected {
			backoff = BackoffMin
		}
		if !core.Sleep(e.d.cfg.Clock, backoff, ctx.Done(), TagBackoff) {
			return
		}
		backoff = min(backoff*2, BackoffMax)
	}
}

// authError marks a stream refused for authorization.
type authError struct{ status int }

func (a authError) Error() string { return fmt.Sprintf("event stream refused with HTTP %d", a.status) }

// stream runs one SSE connection until it ends; connected reports whether
// the stream was opened.
func (e *eventClient) stream(ctx context.Context, conn *desktopConn) (connected bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, conn.Base+"/api/events", nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("accept", "text/event-stream")
	if conn.LaunchID != "" {
		req.Header.Set(HeaderLaunchID, conn.LaunchID)
	}
	resp, err := e.d.stream.Do(req)
	if err != nil {
		e.d.invalidate()
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			// A rotated launch id: discover again before reconnecting.
			e.d.invalidate()
			if _, derr := e.d.connection(ctx, true); derr != nil {
				return false, derr
			}
			return false, authError{resp.StatusCode}
		}
		return false, fmt.Errorf("event stream answered HTTP %d", resp.StatusCode)
	}
	store := e.d.store
	e.d.norm.setOrigin(conn.origin())
	store.setConnected(true)
	// Every read counts as activity (": ping" keeps the stream fresh); an
	// oversized frame is dropped whole and the stream goes on.
	err = sse.Read(resp.Body, sse.Options{MaxEvent: maxFrameChars, DropOversize: true, Activity: store.touch}, func(f sse.Event) {
		evs, ends := e.d.norm.frame(f.Event, []byte(f.Data))
		for _, ev := range evs {
			store.append(ev)
		}
		if hook := e.d.onTurnEnd; hook != nil {
			for _, te := range ends {
				hook(te)
			}
		}
	})
	if errors.Is(err, io.EOF) {
		err = nil // the server ended the stream
	}
	// The stream ended: the Desktop may have restarted on a new port.
	e.d.invalidate()
	return true, err
}
