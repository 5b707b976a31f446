// Package interrupt ends a context on SIGINT or SIGTERM, as
// signal.NotifyContext does, but installs the handlers only when the
// caller says so, so that a spawned server can answer its client first.
//
// The first signal.Notify of a process is not cheap: os/signal starts its
// receiving loop, and the runtime starts a goroutine locked to a thread of
// its own to change the signal mask (LockOSThread, which also starts the
// runtime's template thread), then hands each signal to that thread and
// waits for its reply. Three threads are created and two round trips made
// before Notify returns: about 0.2 ms of `interop-runtime serve`'s
// spawn → initialize on an idle machine, even when another goroutine does
// it beside the start-up, and about 0.3 MiB of its memory at that point.
package interrupt

import (
	"context"
	"os"
	"os/signal"
	"sync"
)

// Handlers are the signal handlers of one [Notify] context. Until they
// are installed ([Handlers.Start], [Handlers.Wait]) a signal has its
// default effect: it ends the process at once. The methods of a nil
// *Handlers do nothing.
type Handlers struct {
	ctx    context.Context
	cancel context.CancelFunc
	sigs   []os.Signal
	ch     chan os.Signal

	start     sync.Once
	installed chan struct{} // closed once the handlers are installed, or will never be
	done      chan struct{} // closed when the goroutine that installed them ends
}

type handlersKey struct{}

// Notify returns a copy of parent that is cancelled when one of sigs
// arrives once its handlers are installed, and the function that stops
// listening for them and cancels it (call it, as with
// signal.NotifyContext's stop). Nothing is installed yet: see [Wait] and
// [From].
func Notify(parent context.Context, sigs ...os.Signal) (context.Context, context.CancelFunc) {
	h := &Handlers{
		sigs:      sigs,
		ch:        make(chan os.Signal, 1),
		installed: make(chan struct{}),
		done:      make(chan struct{}),
	}
	h.ctx, h.cancel = context.WithCancel(context.WithValue(parent, handlersKey{}, h))
	return h.ctx, h.stop
}

// From returns the handlers of the [Notify] context ctx derives from, or
// nil.
func From(ctx context.Context) *Handlers {
	h, _ := ctx.Value(handlersKey{}).(*Handlers)
	return h
}

// Wait installs the handlers of ctx's [Notify] context, if it has one
// and they are not yet, and returns once they are: from then on a signal
// ends ctx instead of the process.
func Wait(ctx context.Context) { From(ctx).Wait() }

// Start installs the handlers on a goroutine of its own and returns at
// once. Later calls, and calls after stop, do nothing.
func (h *Handlers) Start() {
	if h == nil {
		return
	}
	h.start.Do(func() { go h.run() })
}

// Wait starts installing the handlers if nothing did yet, and returns once
// they are installed (or once the context's stop has run).
func (h *Handlers) Wait() {
	if h == nil {
		return
	}
	h.Start()
	<-h.installed
}

func (h *Handlers) run() {
	defer close(h.done)
	signal.Notify(h.ch, h.sigs...)
	close(h.installed)
	select {
	case <-h.ch:
		h.cancel()
	case <-h.ctx.Done():
	}
}

func (h *Handlers) stop() {
	h.cancel()
	started := true
	h.start.Do(func() { // never started: now never will be
		started = false
		close(h.installed)
	})
	if started {
		<-h.done
		signal.Stop(h.ch)
	}
}
