package app

import (
	"context"
	"errors"
	"sync"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/growstack"
	"github.com/agent-interop/runtime/internal/store"
)

// ErrClosed is what a Deferred answers once it was closed.
var ErrClosed = errors.New("the runtime is shutting down")

// Deferred is the runtime as serve runs it: the store opens at once, so a
// store that cannot be used stops the command before it answers; the rest
// (adapters, registry, ledger, services, handlers) is assembled on first
// use, by the first tool call or by the start-up settlement once a gone
// process may have left work (delivery.WaitForWork). A server that is
// never called reads nothing from the store and builds none of it.
type Deferred struct {
	cfg       Config
	st        *store.Store
	machine   string
	listAhead bool
	clock     quartz.Clock // of the wait for work (tests set a mock)

	mu       sync.Mutex
	app      *App
	err      error           // why assembling failed; kept
	after    context.Context // the start-up work's context, once it began
	endAfter context.CancelFunc
	endWait  context.CancelFunc // ends WaitForWork once the runtime is assembled
	closed   bool
	bg       sync.WaitGroup
}

// OpenDeferred opens the store as Open does and assembles nothing else.
func OpenDeferred(ctx context.Context, cfg Config) (*Deferred, error) {
	cfg = cfg.withDefaults()
	st, machine, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	d := &Deferred{cfg: cfg, st: st, machine: machine, listAhead: cfg.listAhead(), clock: st.Clock()}
	return d, nil
}

// App assembles the runtime on the first call and returns it; an assembly
// that failed fails every call the same way. Once the start-up work has
// begun, the assembled App's starts at once.
func (d *Deferred) App() (*App, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	if d.app == nil && d.err == nil {
		d.app, d.err = assemble(d.st, d.machine, d.cfg)
		if d.err == nil && d.after != nil {
			if d.endWait != nil {
				d.endWait() // the App's own settlement takes over
			}
			d.app.AfterInitialize(d.after)
		}
	}
	return d.app, d.err
}

// Handlers assembles the runtime (App) and returns its tool handlers.
func (d *Deferred) Handlers(context.Context) (catalogs.Handlers, error) {
	a, err := d.App()
	if err != nil {
		return nil, err
	}
	return a.Handlers, nil
}

// AfterInitialize is App.AfterInitialize for a runtime that may not be
// assembled yet: until it is, delivery.WaitForWork stands in for the
// settlement, in the caller's goroutine, and assembles the runtime when
// there is something to settle; it returns then (the App's settlement
// goes on in its own goroutines), or when ctx ends or Close is called.
// With INTEROP_LIST_AHEAD=1 it assembles at once, to start the listings.
func (d *Deferred) AfterInitialize(ctx context.Context) {
	d.mu.Lock()
	if d.closed || d.after != nil {
		d.mu.Unlock()
		return
	}
	ctx, d.endAfter = context.WithCancel(ctx)
	d.after = ctx
	a := d.app
	var waitCtx context.Context
	if a == nil {
		waitCtx, d.endWait = context.WithCancel(ctx)
		d.bg.Add(1)
	}
	d.mu.Unlock()
	if a != nil {
		a.AfterInitialize(ctx)
		return
	}
	defer d.bg.Done()
	// One stack growth while only the server's frame is below: the marks'
	// check and, later, the settlement's store reads need more than a new
	// goroutine's stack, and each growth reads the stack maps of every
	// frame on it.
	growstack.Grow()
	if !d.listAhead {
		if err := delivery.WaitForWork(waitCtx, d.st, delivery.Options{Clock: d.clock}); err != nil {
			return // closed, or a tool call assembled the runtime (its settlement runs)
		}
	}
	if _, err := d.App(); err != nil && !errors.Is(err, ErrClosed) {
		d.cfg.Logger.Warn("start-up settlement: the runtime could not be assembled", "err", err)
	}
}

// Close stops what was started and releases the store.
func (d *Deferred) Close() error {
	d.mu.Lock()
	d.closed = true
	a := d.app
	if d.endAfter != nil {
		d.endAfter()
	}
	d.mu.Unlock()
	d.bg.Wait()
	if a != nil {
		return a.Close()
	}
	return d.st.Close()
}
