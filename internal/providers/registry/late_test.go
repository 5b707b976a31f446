package registry

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry/registrytest"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// TestSlowProviderIsReportedLate: listing every provider, a provider that
// has not answered at the soft deadline (on the injected clock) is
// reported late while the others' sessions are answered; its listing goes
// on in the background and the next page gets its sessions without asking
// it again.
func TestSlowProviderIsReportedLate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	defer cancel()
	clock := testclock.At(t, time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC))
	trap := clock.Trap().NewTimer("registry", "soft deadline")
	defer trap.Close()

	oc := &registrytest.Adapter{Provider: providers.OpenCode}
	oc.SetSessions([]providers.Session{oc.Session("ses_1", "fast")}, nil)
	release := make(chan struct{})
	cx := &registrytest.Adapter{Provider: providers.Codex}
	cx.ListFunc = func(ctx context.Context) ([]providers.Session, error) {
		select {
		case <-release:
			return []providers.Session{cx.Session("thr_1", "slow")}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	r, err := New(teststore.Open(t), []providers.Adapter{oc, cx}, Options{Clock: clock, SoftDeadline: 800 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	type answer struct {
		page SessionPage
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		p, err := r.ListSessionPage(ctx, SessionQuery{})
		done <- answer{p, err}
	}()
	call, err := trap.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if call.Duration != 800*time.Millisecond {
		t.Fatalf("soft deadline %s, want 800ms", call.Duration)
	}
	call.MustRelease(ctx)
	trap.Close() // the later pages' timers are not trapped
	// The fast provider answers before the deadline passes (on a loaded
	// machine its goroutine may not have run yet when the timer is armed).
	wait.For(t, "opencode's listing ends", wait.InProcess, func() bool {
		if oc.CallCount("list") < 1 {
			return false
		}
		return flightDone(r, providers.OpenCode, true)
	})
	clock.Advance(800 * time.Millisecond).MustWait(ctx)
	var first answer
	select {
	case first = <-done:
	case <-ctx.Done():
		t.Fatal("the listing still waits for the slow provider past the soft deadline")
	}
	if first.err != nil || len(first.page.Sessions) != 1 || first.page.Sessions[0].ID != "opencode:ses_1" {
		t.Fatalf("first page = %+v, %v; want OpenCode's session", first.page, first.err)
	}
	if len(first.page.ProviderErrors) != 1 || first.page.ProviderErrors[0].Provider != providers.Codex ||
		!strings.HasPrefix(first.page.ProviderErrors[0].Error, "late: codex has not answered within 800ms") {
		t.Fatalf("provider errors = %+v, want codex reported late", first.page.ProviderErrors)
	}

	// Codex answers after the page; the next page has its session and
	// codex was asked once.
	close(release)
	wait.For(t, "codex's background listing ends", wait.InProcess, func() bool {
		return flightDone(r, providers.Codex, false)
	})
	second, err := r.ListSessionPage(ctx, SessionQuery{})
	if err != nil || len(second.ProviderErrors) != 0 {
		t.Fatalf("second page = %+v, %v", second, err)
	}
	var ids []string
	for _, s := range second.Sessions {
		ids = append(ids, s.ID)
	}
	if strings.Join(ids, ",") != "opencode:ses_1,codex:thr_1" {
		t.Fatalf("second page sessions = %v", ids)
	}
	if n := cx.CallCount("list"); n != 1 {
		t.Fatalf("codex listed %d times, want once (the late answer is kept)", n)
	}
	// The one after lists codex afresh.
	if _, err := r.ListSessionPage(ctx, SessionQuery{}); err != nil || cx.CallCount("list") != 2 {
		t.Fatalf("third page: %v, codex listed %d times, want 2", err, cx.CallCount("list"))
	}
}

// TestOneProviderWaitsPastTheSoftDeadline: a listing of one provider
// waits for it (up to the adapter timeout): there is no other provider's
// answer to give.
func TestOneProviderWaitsPastTheSoftDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	defer cancel()
	clock := testclock.At(t, time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC))
	started := make(chan struct{})
	release := make(chan struct{})
	cx := &registrytest.Adapter{Provider: providers.Codex}
	cx.ListFunc = func(ctx context.Context) ([]providers.Session, error) {
		close(started)
		<-release
		return []providers.Session{cx.Session("thr_1", "slow")}, nil
	}
	r, err := New(teststore.Open(t), []providers.Adapter{cx}, Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done := make(chan SessionPage, 1)
	go func() {
		p, _ := r.ListSessionPage(ctx, SessionQuery{Provider: "codex"})
		done <- p
	}()
	<-started
	clock.Advance(5 * time.Second).MustWait(ctx)
	select {
	case p := <-done:
		t.Fatalf("answered before codex: %+v", p)
	default:
	}
	close(release)
	p := <-done
	if len(p.Sessions) != 1 || len(p.ProviderErrors) != 0 {
		t.Fatalf("page = %+v", p)
	}
}

// TestCloseCancelsBackgroundListings: Close cancels a listing left running
// in the background and waits for it.
func TestCloseCancelsBackgroundListings(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	defer cancel()
	clock := testclock.At(t, time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC))
	trap := clock.Trap().NewTimer("registry", "soft deadline")
	defer trap.Close()
	oc := &registrytest.Adapter{Provider: providers.OpenCode}
	cancelled := make(chan error, 1)
	cx := &registrytest.Adapter{Provider: providers.Codex}
	cx.ListFunc = func(ctx context.Context) ([]providers.Session, error) {
		<-ctx.Done()
		cancelled <- ctx.Err()
		return nil, ctx.Err()
	}
	r, err := New(teststore.Open(t), []providers.Adapter{oc, cx}, Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = r.ListSessionPage(ctx, SessionQuery{})
	}()
	trap.MustWait(ctx).MustRelease(ctx)
	clock.Advance(DefaultSoftDeadline).MustWait(ctx)
	<-done
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-cancelled:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("background listing ended with %v, want canceled", err)
		}
	default:
		t.Fatal("Close returned before the background listing ended")
	}
}

// TestJoiningListingWaitsOnlyForWhatIsLeftOfTheDeadline: a listing that
// joins a flight started earlier waits for the rest of that flight's soft
// deadline, not a whole one of its own; one that joins a flight already
// past its deadline answers at once with the provider late.
func TestJoiningListingWaitsOnlyForWhatIsLeftOfTheDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	defer cancel()
	clock := testclock.At(t, time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC))
	trap := clock.Trap().NewTimer("registry", "soft deadline")
	defer trap.Close()
	release := make(chan struct{})
	defer close(release)
	cx := &registrytest.Adapter{Provider: providers.Codex}
	cx.ListFunc = blockUntil(release)
	// Only codex: a fast provider's listing would end and start afresh
	// with each page, and the page waits a whole deadline for a new one.
	r, err := New(teststore.Open(t), []providers.Adapter{cx}, Options{Clock: clock, SoftDeadline: 800 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	list := func() <-chan SessionPage { return listAsync(ctx, t, r) }
	late := func(p SessionPage) bool {
		for _, pe := range p.ProviderErrors {
			if pe.Provider == providers.Codex && strings.HasPrefix(pe.Error, "late: ") {
				return true
			}
		}
		return false
	}

	first := list()
	call, err := trap.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if call.Duration != 800*time.Millisecond {
		t.Fatalf("first listing waits %s, want 800ms", call.Duration)
	}
	call.MustRelease(ctx)
	clock.Advance(500 * time.Millisecond).MustWait(ctx)

	second := list()
	call, err = trap.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if call.Duration != 300*time.Millisecond {
		t.Fatalf("a listing joining a flight 500ms old waits %s, want the 300ms left", call.Duration)
	}
	call.MustRelease(ctx)
	clock.Advance(300 * time.Millisecond).MustWait(ctx)
	for i, ch := range []<-chan SessionPage{first, second} {
		select {
		case p := <-ch:
			if !late(p) {
				t.Fatalf("listing %d = %+v, want codex late", i+1, p)
			}
		case <-ctx.Done():
			t.Fatalf("listing %d still waits past the flight's deadline", i+1)
		}
	}

	// Past the deadline: the next listing arms no timer and answers at once.
	trap.Close()
	third, err := r.ListSessionPage(ctx, SessionQuery{})
	if err != nil || !late(third) {
		t.Fatalf("third listing = %+v, %v; want codex late at once", third, err)
	}
	// The flight's goroutine may not have reached codex yet on a loaded
	// machine (the deadlines passed on the fake clock): wait for its call.
	wait.For(t, "the flight's call of codex's listing", wait.InProcess, func() bool { return cx.CallCount("list") > 0 })
	if n := cx.CallCount("list"); n != 1 {
		t.Fatalf("codex listed %d times, want once (every listing joined the flight)", n)
	}
}

// TestListAheadAnswersTheFirstListing: listings started ahead (after
// initialize) are kept, so the first page takes their answers without
// asking the providers again; the page after lists afresh.
func TestListAheadAnswersTheFirstListing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	defer cancel()
	clock := testclock.At(t, time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC))
	cx := &registrytest.Adapter{Provider: providers.Codex}
	cx.SetSessions([]providers.Session{cx.Session("thr_1", "ahead")}, nil)
	r, err := New(teststore.Open(t), []providers.Adapter{cx}, Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.ListAhead(ctx)
	wait.For(t, "the listing started ahead ends", wait.InProcess, func() bool {
		return flightDone(r, providers.Codex, false)
	})
	p, err := r.ListSessionPage(ctx, SessionQuery{})
	if err != nil || len(p.Sessions) != 1 || p.Sessions[0].ID != "codex:thr_1" || len(p.ProviderErrors) != 0 {
		t.Fatalf("first page = %+v, %v; want the session listed ahead", p, err)
	}
	if n := cx.CallCount("list"); n != 1 {
		t.Fatalf("codex listed %d times, want once", n)
	}
	if _, err := r.ListSessionPage(ctx, SessionQuery{}); err != nil || cx.CallCount("list") != 2 {
		t.Fatalf("second page: %v, codex listed %d times, want 2", err, cx.CallCount("list"))
	}
}

// flightDone reports whether p's listing flight has ended; ifNone is the
// answer when r holds no flight of p.
func flightDone(r *Registry, p providers.ID, ifNone bool) bool {
	r.mu.Lock()
	f := r.flights[p]
	r.mu.Unlock()
	if f == nil {
		return ifNone
	}
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}
