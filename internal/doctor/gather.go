package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/providers"
)

// Prober is the handshake role an adapter declares (providers.Roles).
type Prober = providers.Prober

// skipper is matched (errors.As) on a Probe error: a true HandshakeSkipped
// means the handshake was deliberately not attempted, not that it failed.
type skipper interface{ HandshakeSkipped() bool }

// StoreCheck reports on the state store, bounded by ctx.
type StoreCheck func(ctx context.Context) StoreReport

// Defaults of Options.
const (
	DefaultTimeout         = 20 * time.Second
	DefaultProviderTimeout = 15 * time.Second
	DefaultCloseTimeout    = 4 * time.Second
	DefaultVersionTimeout  = 3 * time.Second
)

// Options configure Run. Zero fields take the defaults.
type Options struct {
	// Runtime is the runtime version shown in the report.
	Runtime string
	// Adapters are checked concurrently and reported in registry order
	// (providers.Order); a provider without an adapter is reported as
	// unavailable. Run closes every adapter before it returns.
	Adapters []providers.Adapter
	// Store checks the state store (nil: not checked).
	Store StoreCheck
	// Timeout bounds the whole run, closing the adapters included
	// (default 20 s).
	Timeout time.Duration
	// ProviderTimeout bounds one provider's checks (default 15 s).
	ProviderTimeout time.Duration
	// CloseTimeout is the part of Timeout kept for closing the adapters
	// (default 4 s, at most half of Timeout).
	CloseTimeout time.Duration
	// VersionTimeout bounds running a program with --version (default 3 s).
	VersionTimeout time.Duration
	// ProgramVersion finds a program's version when its provider reported
	// none (default: [ExecVersion]).
	ProgramVersion func(ctx context.Context, path string) (string, error)
	// Clock is the time source: it stamps durations and fires the deadlines
	// (default the wall clock; tests pass a fake).
	Clock quartz.Clock
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.ProviderTimeout <= 0 {
		o.ProviderTimeout = DefaultProviderTimeout
	}
	if o.CloseTimeout <= 0 {
		o.CloseTimeout = DefaultCloseTimeout
	}
	if o.CloseTimeout > o.Timeout/2 {
		o.CloseTimeout = o.Timeout / 2
	}
	if o.VersionTimeout <= 0 {
		o.VersionTimeout = DefaultVersionTimeout
	}
	if o.ProgramVersion == nil {
		o.ProgramVersion = ExecVersion
	}
	if o.Clock == nil {
		o.Clock = quartz.NewReal()
	}
	return o
}

// Run checks every provider and the store and returns the report. It
// returns within Options.Timeout (plus scheduling slack) whatever the
// adapters do, and closes every adapter before returning.
func Run(ctx context.Context, opts Options) Report {
	o := opts.withDefaults()
	start := o.Clock.Now()
	rep := Report{Runtime: o.Runtime, StartedAt: start}

	gather := o.Timeout - o.CloseTimeout
	gctx, cancel := withDeadline(ctx, o.Clock, gather, "doctor")
	defer cancel()

	byID := map[providers.ID]providers.Adapter{}
	for _, a := range o.Adapters {
		if a != nil {
			if _, dup := byID[a.ID()]; !dup {
				byID[a.ID()] = a
			}
		}
	}
	// Every built-in agent in catalog order (one without an adapter is
	// reported so), then the user's in the order given.
	order := providers.Order()
	for _, a := range o.Adapters {
		if a != nil && !slices.Contains(order, a.ID()) {
			order = append(order, a.ID())
		}
	}
	runs := make([]*probeRun, len(order))
	for i, id := range order {
		r := &probeRun{id: id, adapter: byID[id], done: make(chan struct{}), clock: o.Clock}
		runs[i] = r
		if r.adapter == nil {
			close(r.done)
			continue
		}
		var pcancel context.CancelFunc
		r.ctx, pcancel = withDeadline(gctx, o.Clock, o.ProviderTimeout, string(id)+" provider")
		defer pcancel()
		go r.run(o)
	}

	var storeRep StoreReport
	storeDone := make(chan struct{})
	if o.Store != nil {
		go func() {
			defer close(storeDone)
			storeRep = o.Store(gctx)
		}()
	} else {
		close(storeDone)
	}

	for _, r := range runs {
		if r.adapter == nil {
			rep.Providers = append(rep.Providers, notConfigured(r.id))
			continue
		}
		select {
		case <-r.done:
		case <-r.ctx.Done():
		}
		rep.Providers = append(rep.Providers, r.finish())
	}
	select {
	case <-storeDone:
		rep.Store = storeRep
	case <-gctx.Done():
		rep.Store = StoreReport{Error: "the store check did not finish: " + context.Cause(gctx).Error(),
			Fix: "run `interop-runtime doctor` again; if it persists, another process may hold the store locked"}
	}
	if de := deadlineOf(gctx); de != nil && de.Scope == "doctor" {
		rep.DeadlineReached = true
	}
	cancel() // releases whatever still waits on a provider

	rep.Cleanup = closeAll(o, runs, rep.Providers)
	rep.ElapsedMS = millis(o.Clock.Now().Sub(start))
	return rep
}

// closeAll closes every adapter concurrently and waits up to CloseTimeout;
// close errors go to the provider's report and what did not finish in time
// is returned.
func closeAll(o Options, runs []*probeRun, reports []ProviderReport) []string {
	type closed struct {
		i   int
		err error
	}
	results := make(chan closed, len(runs))
	pending := map[int]bool{}
	for i, r := range runs {
		if r.adapter == nil {
			continue
		}
		pending[i] = true
		go func() {
			results <- closed{i, r.adapter.Close()}
		}()
	}
	if len(pending) == 0 {
		return nil
	}
	timeout := make(chan struct{})
	timer := o.Clock.AfterFunc(o.CloseTimeout, func() { close(timeout) })
	defer timer.Stop()
	for len(pending) > 0 {
		select {
		case c := <-results:
			delete(pending, c.i)
			if c.err != nil {
				reports[c.i].CloseError = c.err.Error()
			}
		case <-timeout:
			var left []string
			for i := range runs {
				if pending[i] {
					left = append(left, fmt.Sprintf("closing the %s adapter did not finish within %s; a process it started may still run", runs[i].id, o.CloseTimeout))
				}
			}
			return left
		}
	}
	return nil
}

// notConfigured is the report of a provider the runtime has no adapter for.
func notConfigured(id providers.ID) ProviderReport {
	reason := fmt.Sprintf("%s has no adapter configured in this runtime", id)
	c := providers.Capability{State: providers.Unavailable, Reason: reason}
	caps := providers.Capabilities{Discovery: c, Sessions: c, SendMessage: c, Steer: c, Cancel: c,
		Events: c, Diff: c, Permissions: c, Model: c, Reasoning: c}
	return ProviderReport{
		Provider: id, Summary: SummaryUnavailable, Authorization: "unknown",
		Handshake:    Handshake{Status: HandshakeSkipped, Detail: reason},
		Capabilities: named(caps),
	}
}

// probeRun is one provider's checks, running in their own goroutine. The
// report is built under mu; once frozen (the provider's deadline passed)
// late results are dropped.
type probeRun struct {
	id      providers.ID
	adapter providers.Adapter
	ctx     context.Context
	clock   quartz.Clock
	done    chan struct{}

	mu       sync.Mutex
	frozen   bool
	rep      ProviderReport
	stage    string
	capsSeen bool
	started  time.Time
}

func (r *probeRun) update(f func(*ProviderReport)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.frozen {
		f(&r.rep)
	}
}

func (r *probeRun) setStage(s string) {
	r.mu.Lock()
	r.stage = s
	r.mu.Unlock()
}

func (r *probeRun) run(o Options) {
	defer close(r.done)
	ctx := r.ctx
	r.mu.Lock()
	r.started = r.clock.Now()
	r.rep = ProviderReport{Provider: r.id, Authorization: "unknown"}
	r.mu.Unlock()

	if p := r.adapter.Roles().Handshake; p != nil {
		r.setStage("handshake")
		t0 := r.clock.Now()
		err := p.Probe(ctx)
		hs := classify(ctx, err)
		hs.DurationMS = millis(r.clock.Now().Sub(t0))
		r.update(func(rep *ProviderReport) { rep.Handshake = hs })
	} else {
		r.update(func(rep *ProviderReport) {
			rep.Handshake = Handshake{Status: HandshakeNotSupported,
				Detail: "the adapter has no separate handshake; its capability record below is what it observed"}
		})
	}
	if ctx.Err() != nil {
		return
	}

	r.setStage("capabilities")
	caps := r.adapter.Capabilities(ctx)
	r.mu.Lock()
	if !r.frozen {
		r.capsSeen = true
		rep := &r.rep
		rep.AdapterVersion = caps.AdapterVersion
		rep.Authorization = caps.Authorization
		if rep.Authorization == "" {
			rep.Authorization = "unknown"
		}
		rep.Capabilities = named(caps)
		rep.Limitations = withVersionWarning(caps)
		rep.Program = Program{Found: caps.Program != "", Path: caps.Program, Version: caps.ProviderVersion}
		if caps.ProviderVersion != "" {
			rep.Program.VersionSource = VersionFromProvider
		}
	}
	r.mu.Unlock()

	if caps.Program == "" || caps.ProviderVersion != "" || ctx.Err() != nil {
		return
	}
	r.setStage("version")
	vctx, vcancel := withDeadline(ctx, r.clock, o.VersionTimeout, caps.Program+" --version")
	v, err := o.ProgramVersion(vctx, caps.Program)
	vcancel()
	if err == nil && v != "" {
		r.update(func(rep *ProviderReport) {
			rep.Program.Version, rep.Program.VersionSource = v, VersionFromFlag
		})
	}
}

// classify turns a Probe result into a handshake outcome.
func classify(ctx context.Context, err error) Handshake {
	if err == nil {
		return Handshake{Status: HandshakeOK}
	}
	var sk skipper
	if errors.As(err, &sk) && sk.HandshakeSkipped() {
		return Handshake{Status: HandshakeSkipped, Detail: err.Error()}
	}
	if de := deadlineOf(ctx); de != nil {
		return Handshake{Status: HandshakeTimeout, Detail: fmt.Sprintf("no answer before %s: %v", de, err)}
	}
	return Handshake{Status: HandshakeFailed, Detail: err.Error()}
}

// finish freezes the run and completes its report: what did not answer in
// time is reported as such.
func (r *probeRun) finish() ProviderReport {
	r.mu.Lock()
	r.frozen = true
	rep := r.rep
	stage, capsSeen, started := r.stage, r.capsSeen, r.started
	r.mu.Unlock()
	rep.Provider = r.id
	if rep.Authorization == "" {
		rep.Authorization = "unknown"
	}
	if !started.IsZero() {
		rep.ElapsedMS = millis(r.clock.Now().Sub(started))
	}

	var why string
	select {
	case <-r.done:
	default:
		// The provider's deadline (or the overall one, or ctx) ended it.
		cause := context.Cause(r.ctx)
		why = fmt.Sprintf("doctor stopped waiting during the %s step: %v", stage, cause)
		if stage == "handshake" || rep.Handshake.Status == "" {
			st := HandshakeFailed
			if deadlineOf(r.ctx) != nil {
				st = HandshakeTimeout
			}
			rep.Handshake = Handshake{Status: st, Detail: why, DurationMS: rep.ElapsedMS}
		}
	}
	if !capsSeen {
		if why == "" {
			why = "not checked: " + context.Cause(r.ctx).Error()
		}
		c := providers.Capability{State: providers.Unknown, Reason: why,
			Fix: "run `interop-runtime doctor` again; if " + string(r.id) + " still does not answer, start its program by hand to see why it hangs"}
		rep.Capabilities = named(providers.Capabilities{Discovery: c, Sessions: c, SendMessage: c, Steer: c, Cancel: c,
			Events: c, Diff: c, Permissions: c, Model: c, Reasoning: c})
	}
	if rep.Handshake.Status != HandshakeOK && rep.Handshake.Status != HandshakeNotSupported && rep.Handshake.Fix == "" {
		rep.Handshake.Fix = firstFix(rep.Capabilities)
		if rep.Handshake.Fix == "" && rep.Program.Path != "" {
			rep.Handshake.Fix = fmt.Sprintf("start `%s` by hand in the runtime's environment to see the whole error, or reinstall it", rep.Program.Path)
		}
	}
	rep.Summary = summarize(rep)
	return rep
}

// firstFix is the first fix a capability offers, in report order.
func firstFix(caps []NamedCapability) string {
	for _, c := range caps {
		if c.Fix != "" && c.State != providers.Available {
			return c.Fix
		}
	}
	return ""
}

// summarize rates a provider: ready when sending is available after a good
// handshake and the provider does not report itself unauthorized,
// unavailable when nothing is available or degraded, degraded otherwise.
func summarize(rep ProviderReport) string {
	usable := false
	for _, c := range rep.Capabilities {
		if c.State == providers.Available || c.State == providers.Degraded {
			usable = true
		}
	}
	if !usable {
		return SummaryUnavailable
	}
	send, _ := rep.Capability("sendMessage")
	hsOK := rep.Handshake.Status == HandshakeOK || rep.Handshake.Status == HandshakeNotSupported
	if hsOK && send.State == providers.Available && rep.Authorization != "unauthorized" {
		return SummaryReady
	}
	return SummaryDegraded
}

// withVersionWarning is caps' limitations plus, for a built-in agent whose
// version is outside the range its catalog entry was tested with, a
// warning (an ACP adapter adds it itself; the native ones do not).
func withVersionWarning(caps providers.Capabilities) []string {
	out := caps.Limitations
	for _, s := range providers.BuiltinAgents() {
		if s.ID != caps.Provider {
			continue
		}
		w := s.VersionWarning(caps.ProviderVersion)
		if w == "" {
			return out
		}
		w = "warning: " + w
		for _, l := range out {
			if l == w {
				return out
			}
		}
		return append(append([]string(nil), out...), w)
	}
	return out
}
