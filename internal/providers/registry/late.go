package registry

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agent-interop/runtime/internal/clockctx"
	"github.com/agent-interop/runtime/internal/providers"
)

// DefaultSoftDeadline is how long a listing of every provider waits for
// the slowest one before it answers without it (issue 21: the first
// list_agent_sessions within a second while a provider program starts).
const DefaultSoftDeadline = 800 * time.Millisecond

// DefaultStartGrace is how long a listing of every provider waits when
// every provider it still waits for is starting its program: a program
// start takes seconds (node, then the agent's handshake), far past the
// soft deadline, so waiting the deadline out for it only delays the
// others' answer (issue 21: the first listing with the real programs
// installed answered at the soft deadline, every time).
const DefaultStartGrace = 250 * time.Millisecond

// lateResultTTL is how long the answer of a provider that was reported
// late waits for the next listing; an older one is listed afresh.
const lateResultTTL = time.Minute

// LateError reports a provider that had not answered when a listing of
// every provider reached its soft deadline. Its listing goes on in the
// background (bounded by the adapter timeout); the next listing gets its
// sessions.
type LateError struct {
	Provider providers.ID
	After    time.Duration
	// Starting: the provider was starting its program (the listing did
	// not wait its soft deadline out for it).
	Starting bool
}

func (e *LateError) Error() string {
	if e.Starting {
		return fmt.Sprintf("late: %s is still starting (its program or its server; no answer within %s); its listing continues in the background, call list_agent_sessions again for its sessions", e.Provider, e.After)
	}
	return fmt.Sprintf("late: %s has not answered within %s; its listing continues in the background, call list_agent_sessions again for its sessions", e.Provider, e.After)
}

// flight is one adapter's ListSessions call, shared by the listings that
// wait for it and outliving a listing that stopped waiting.
type flight struct {
	done     chan struct{}
	started  time.Time           // on the registry's clock
	sessions []providers.Session // read after done is closed
	err      error
	late     bool      // a listing stopped waiting: keep the answer for the next one (under r.mu)
	endedAt  time.Time // (under r.mu)
}

// listFlight joins the provider's listing under way, takes the answer of
// one that ended after a listing had given up on it (if recent), or
// starts a new one. The call runs detached from ctx's cancellation (it
// may outlive the listing that started it), bounded by the adapter
// timeout and cancelled when the registry closes.
//
// keep marks the flight's answer to be kept for the next listing (as a
// late one's is), for a listing started ahead of any caller.
func (r *Registry) listFlight(ctx context.Context, id providers.ID, a providers.Adapter, keep bool) *flight {
	r.mu.Lock()
	defer r.mu.Unlock()
	if f := r.flights[id]; f != nil {
		select {
		case <-f.done:
			if keep {
				return f
			}
			delete(r.flights, id)
			if r.clock.Since(f.endedAt) <= lateResultTTL {
				return f
			}
		default:
			f.late = f.late || keep
			return f
		}
	}
	f := &flight{done: make(chan struct{}), started: r.clock.Now(), late: keep}
	r.flights[id] = f
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		cctx, cancel := clockctx.WithTimeout(context.WithoutCancel(ctx), r.clock, r.timeout, "registry", "adapter call")
		defer cancel()
		stop := context.AfterFunc(r.closing, cancel)
		defer stop()
		ss, err := a.ListSessions(cctx)
		r.mu.Lock()
		f.sessions, f.err, f.endedAt = ss, err, r.clock.Now()
		late := f.late
		if !f.late && r.flights[id] == f {
			delete(r.flights, id)
		}
		r.mu.Unlock()
		close(f.done)
		r.logger.Debug("provider listing ended", "provider", string(id), "ms", float64(f.endedAt.Sub(f.started).Microseconds())/1000, "late", late, "sessions", len(ss), "err", err)
	}()
	return f
}

// awaitFlights waits for every flight, or until the soft deadline (on the
// registry's clock; 0 waits for all) passes or ctx ends. It returns each
// provider's sessions (a copy: the caller may change them) and error; a
// flight still under way at the deadline is marked late and reported
// with a LateError.
//
// The soft deadline counts from each flight's start, not from this
// listing: a listing that joins a flight started earlier (by an earlier
// listing, or ahead at start-up) waits only for what is left of its
// deadline, and not at all for one already past it, so a listing right
// after a late one answers at once instead of waiting a whole deadline
// again. (One timer serves the listing: flights still within their
// deadline are waited for until the newest one's ends.)
func (r *Registry) awaitFlights(ctx context.Context, ids []providers.ID, flights []*flight, soft time.Duration) ([][]providers.Session, []error) {
	sessions := make([][]providers.Session, len(flights))
	errs := make([]error, len(flights))
	var expired <-chan time.Time
	overdue := make([]bool, len(flights)) // past its own deadline when the listing began
	now := r.clock.Now()
	var newest time.Time // the newest flight still under way (and within its deadline)
	if soft > 0 {
		for i, f := range flights {
			if f == nil || f.ended() {
				continue
			}
			overdue[i] = !f.started.Add(soft).After(now)
			if !overdue[i] && f.started.After(newest) {
				newest = f.started
			}
		}
		if !newest.IsZero() {
			t := r.clock.NewTimer(min(soft, newest.Add(soft).Sub(now)), "registry", "soft deadline")
			defer t.Stop()
			expired = t.C
		}
	}
	// Early, when every provider still under way is starting its program
	// and has been for the start grace. The grace counts from each
	// flight's start as the soft deadline does: a listing joining starts
	// an earlier listing (or the start-up) began more than the grace ago
	// does not wait it out again, and the end of any flight (a provider
	// not installed, say, listed afresh) is a moment to check again.
	var early <-chan time.Time
	var stopped error // why the listing stopped waiting
	graceful := expired != nil && r.grace > 0 && r.grace < soft && r.anyStarts(ids, flights)
	var anyEnded chan struct{}
	if graceful {
		if left := newest.Add(r.grace).Sub(now); left > 0 {
			t := r.clock.NewTimer(left, "registry", "start grace")
			defer t.Stop()
			early = t.C
		}
		anyEnded = make(chan struct{}, len(flights))
		quit := make(chan struct{})
		defer close(quit)
		for _, f := range flights {
			if f == nil || f.ended() {
				continue
			}
			go func() {
				select {
				case <-f.done:
					anyEnded <- struct{}{}
				case <-quit:
				}
			}()
		}
	}
	for i, f := range flights {
		if f == nil {
			continue
		}
		for stopped == nil && !overdue[i] && !f.ended() {
			if graceful && r.allStartingPastGrace(ids, flights) {
				stopped = &LateError{After: r.grace, Starting: true}
				break
			}
			select {
			case <-f.done:
			case <-anyEnded:
			case <-expired:
				stopped = &LateError{After: soft}
			case <-early:
				early = nil
			case <-ctx.Done():
				stopped = ctx.Err()
			}
		}
		if f.ended() {
			sessions[i], errs[i] = slices.Clone(f.sessions), f.err
			continue
		}
		why := stopped
		if overdue[i] {
			why = &LateError{After: soft}
		}
		if le, ok := why.(*LateError); ok {
			r.mu.Lock()
			f.late = true
			r.mu.Unlock()
			errs[i] = &LateError{Provider: ids[i], After: le.After, Starting: le.Starting}
		} else {
			errs[i] = fmt.Errorf("list %s sessions: %w", ids[i], why)
		}
	}
	r.logger.Debug("provider listings awaited", "ms", float64(r.clock.Since(now).Microseconds())/1000, "stopped", stopReason(stopped, errs))
	return sessions, errs
}

// stopReason says why a listing stopped waiting, for its debug record.
func stopReason(stopped error, errs []error) string {
	var le *LateError
	switch {
	case errors.As(stopped, &le) && le.Starting:
		return "start grace"
	case errors.As(stopped, &le):
		return "soft deadline"
	case stopped != nil:
		return stopped.Error()
	case slices.ContainsFunc(errs, func(err error) bool { return errors.As(err, &le) }):
		return "listings already past the soft deadline"
	}
	return "every listing ended"
}

// starter is the adapter's start reporter, nil when it has none.
func (r *Registry) starter(id providers.ID) providers.StartReporter {
	if a := r.adapters[id]; a != nil {
		return a.Roles().Starting
	}
	return nil
}

// anyStarts reports whether an adapter of the listing can report a start.
func (r *Registry) anyStarts(ids []providers.ID, flights []*flight) bool {
	for i, f := range flights {
		if f != nil && r.starter(ids[i]) != nil {
			return true
		}
	}
	return false
}

// allStartingPastGrace reports whether every flight still under way is
// its adapter's program start and began at least the start grace ago
// (and at least one is under way).
func (r *Registry) allStartingPastGrace(ids []providers.ID, flights []*flight) bool {
	now := r.clock.Now()
	some := false
	for i, f := range flights {
		if f == nil || f.ended() {
			continue
		}
		s := r.starter(ids[i])
		if s == nil || !s.Starting() || f.started.Add(r.grace).After(now) {
			return false
		}
		some = true
	}
	return some
}

// ended reports whether the flight's call has returned.
func (f *flight) ended() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

// ListAhead starts every configured provider's session listing in the
// background (start-up work after initialize): the program is found,
// started and asked while the client has not asked yet, and the first
// list_agent_sessions joins those listings or takes their answers (kept
// for lateResultTTL). It returns at once; Close cancels the listings.
func (r *Registry) ListAhead(ctx context.Context) {
	for _, id := range r.order {
		a := r.adapters[id]
		if a == nil {
			continue
		}
		r.listFlight(ctx, id, a, true)
	}
}

// closeFlights cancels the listings under way and waits for them.
func (r *Registry) closeFlights() {
	r.stopFlights()
	r.bg.Wait()
}
