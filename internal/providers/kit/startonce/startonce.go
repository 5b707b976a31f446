// Package startonce runs a provider program's start detached from the call
// that needed it: one start at a time, shared by every caller that waits
// for it, bounded by its own timeout on the injected clock and cancelled
// by Close, never by a caller that stops waiting.
//
// A program that takes longer to start than one call may wait (node
// programs on a busy machine take tens of seconds; a listing waits well
// under a second) is then not killed and started again by every call: the
// call that stops waiting gets a [StillStartingError] and the next call
// joins the same start.
package startonce

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/clockctx"
)

// ErrClosed is returned by Do after Close.
var ErrClosed = errors.New("closed")

// StillStartingError is what a caller gets when its context ends before
// the start it waits for: the start goes on for the next call. It wraps the
// caller's context error.
type StillStartingError struct {
	What string // what is starting, e.g. "codex"
	Err  error  // the caller's ctx.Err()
}

func (e *StillStartingError) Error() string {
	return fmt.Sprintf("%s is still starting (the start goes on for the next call): %v", e.What, e.Err)
}

func (e *StillStartingError) Unwrap() error { return e.Err }

// Starter runs at most one start at a time. The zero value is not usable;
// set Clock and Timeout (or use [New]).
type Starter[T any] struct {
	what    string
	clock   quartz.Clock
	timeout time.Duration
	tags    []string

	mu     sync.Mutex
	cur    *attempt[T]
	cancel context.CancelFunc
	closed bool
	wg     sync.WaitGroup
}

// attempt is one start, shared by the callers that wait for it.
type attempt[T any] struct {
	done chan struct{}
	v    T // read after done is closed
	err  error
}

// New returns a Starter of what (named in errors) whose starts are bounded
// by timeout on clock (0: no bound of its own); tags name the timer for
// quartz.Mock.Trap.
func New[T any](what string, clock quartz.Clock, timeout time.Duration, tags ...string) *Starter[T] {
	if clock == nil {
		clock = quartz.NewReal()
	}
	return &Starter[T]{what: what, clock: clock, timeout: timeout, tags: tags}
}

// Do waits for the start under way, beginning one with start when none
// is, and returns its result. start runs with a context that keeps ctx's
// values but not its cancellation, ended by the Starter's timeout or by
// Close. When ctx ends first, Do returns a *StillStartingError and the
// start goes on.
//
// A caller that found nothing running may come just after a start ended
// and begin another: start should first check whether what it starts is
// there already.
func (s *Starter[T]) Do(ctx context.Context, start func(context.Context) (T, error)) (T, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		var zero T
		return zero, fmt.Errorf("%s: %w", s.what, ErrClosed)
	}
	at := s.cur
	if at == nil {
		at = &attempt[T]{done: make(chan struct{})}
		s.cur = at
		sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		if s.timeout > 0 {
			var tcancel context.CancelFunc
			sctx, tcancel = clockctx.WithTimeout(sctx, s.clock, s.timeout, s.tags...)
			inner := cancel
			cancel = func() { tcancel(); inner() }
		}
		s.cancel = cancel
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			v, err := start(sctx)
			cancel()
			s.mu.Lock()
			at.v, at.err = v, err
			s.cur, s.cancel = nil, nil
			s.mu.Unlock()
			close(at.done)
		}()
	}
	s.mu.Unlock()
	select {
	case <-at.done:
		return at.v, at.err
	case <-ctx.Done():
		var zero T
		return zero, &StillStartingError{What: s.what, Err: ctx.Err()}
	}
}

// Starting reports whether a start is under way (begun and not ended);
// it implements providers.StartReporter.
func (s *Starter[T]) Starting() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur != nil
}

// Close cancels the start under way, waits for it to return and makes
// every later Do fail with ErrClosed.
func (s *Starter[T]) Close() {
	s.mu.Lock()
	s.closed = true
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	s.wg.Wait()
}
