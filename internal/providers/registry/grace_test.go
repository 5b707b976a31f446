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

// TestStartingProvidersAreReportedLateAtTheGrace: listing every provider,
// when every provider still under way is starting its program, the page
// answers at the start grace (on the injected clock) and reports them
// late as starting; when one of them is not starting, the page waits the
// soft deadline as before.
func TestStartingProvidersAreReportedLateAtTheGrace(t *testing.T) {
	for _, tt := range []struct {
		name string
		// otherStarting: whether the second slow provider is starting.
		otherStarting bool
		wantAfter     time.Duration // when the page answers
	}{
		{"every slow provider is starting", true, 250 * time.Millisecond},
		{"one slow provider is not starting", false, 800 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
			defer cancel()
			clock := testclock.At(t, time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC))
			trap := clock.Trap().NewTimer("registry", "start grace")
			defer trap.Close()

			oc := &registrytest.Adapter{Provider: providers.OpenCode}
			oc.SetSessions([]providers.Session{oc.Session("ses_1", "fast")}, nil)
			release := make(chan struct{})
			slow := func(a *registrytest.Adapter, starting bool) {
				a.StartingFunc = func() bool { return starting }
				a.ListFunc = blockUntil(release)
			}
			cx := &registrytest.Adapter{Provider: providers.Codex}
			slow(cx, true)
			cc := &registrytest.Adapter{Provider: providers.ClaudeCode}
			slow(cc, tt.otherStarting)
			r, err := New(teststore.Open(t), []providers.Adapter{oc, cx, cc}, Options{Clock: clock, SoftDeadline: 800 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer close(release)

			done := listAsync(ctx, t, r)
			call, err := trap.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if call.Duration != DefaultStartGrace {
				t.Fatalf("start grace %s, want %s", call.Duration, DefaultStartGrace)
			}
			call.MustRelease(ctx)
			wait.For(t, "opencode's listing ends", wait.InProcess, func() bool {
				return oc.CallCount("list") >= 1 && flightDone(r, providers.OpenCode, true)
			})
			clock.Advance(DefaultStartGrace).MustWait(ctx)
			if tt.wantAfter > DefaultStartGrace {
				select {
				case p := <-done:
					t.Fatalf("answered at the grace although claude-code is not starting: %+v", p.ProviderErrors)
				default:
				}
				clock.Advance(tt.wantAfter - DefaultStartGrace).MustWait(ctx)
			}
			var page SessionPage
			select {
			case page = <-done:
			case <-ctx.Done():
				t.Fatal("no answer")
			}
			if len(page.Sessions) != 1 || page.Sessions[0].ID != "opencode:ses_1" {
				t.Fatalf("sessions = %+v, want OpenCode's", page.Sessions)
			}
			late := map[providers.ID]string{}
			for _, pe := range page.ProviderErrors {
				late[pe.Provider] = pe.Error
			}
			for _, id := range []providers.ID{providers.Codex, providers.ClaudeCode} {
				msg := late[id]
				if !strings.HasPrefix(msg, "late: ") {
					t.Fatalf("%s: error %q, want late", id, msg)
				}
				if starting := strings.Contains(msg, "is still starting"); starting != (tt.wantAfter == DefaultStartGrace) {
					t.Fatalf("%s: %q", id, msg)
				}
			}
		})
	}
}

// TestJoiningListingWaitsOnlyForWhatIsLeftOfTheGrace: the start grace
// counts from the listings' start as the soft deadline does, so a page
// joining starts begun 100ms earlier waits the 150ms left, and a page
// after the grace answers at once with every starting provider late.
func TestJoiningListingWaitsOnlyForWhatIsLeftOfTheGrace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	defer cancel()
	clock := testclock.At(t, time.Date(2026, 12, 3, 2, 0, 0, 0, time.UTC))
	trap := clock.Trap().NewTimer("registry", "start grace")
	defer trap.Close()
	release := make(chan struct{})
	defer close(release)
	cx := &registrytest.Adapter{Provider: providers.Codex}
	cx.StartingFunc = func() bool { return true }
	cx.ListFunc = blockUntil(release)
	r, err := New(teststore.Open(t), []providers.Adapter{cx}, Options{Clock: clock, SoftDeadline: 800 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	list := func() <-chan SessionPage { return listAsync(ctx, t, r) }
	starting := func(p SessionPage) bool {
		return len(p.ProviderErrors) == 1 && p.ProviderErrors[0].Provider == providers.Codex &&
			strings.HasPrefix(p.ProviderErrors[0].Error, "late: codex is still starting")
	}
	waitGrace := func(want time.Duration) {
		t.Helper()
		call, err := trap.Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if call.Duration != want {
			t.Fatalf("start grace %s, want %s", call.Duration, want)
		}
		call.MustRelease(ctx)
	}

	first := list()
	waitGrace(DefaultStartGrace)
	clock.Advance(100 * time.Millisecond).MustWait(ctx)
	second := list()
	waitGrace(DefaultStartGrace - 100*time.Millisecond)
	clock.Advance(DefaultStartGrace - 100*time.Millisecond).MustWait(ctx)
	for i, ch := range []<-chan SessionPage{first, second} {
		select {
		case p := <-ch:
			if !starting(p) {
				t.Fatalf("listing %d = %+v, want codex late as starting", i+1, p.ProviderErrors)
			}
		case <-ctx.Done():
			t.Fatalf("listing %d still waits past the grace", i+1)
		}
	}

	// Past the grace: no timer, an answer at once, the start still reported.
	trap.Close()
	third, err := r.ListSessionPage(ctx, SessionQuery{})
	if err != nil || !starting(third) {
		t.Fatalf("third listing = %+v, %v; want codex late as starting at once", third.ProviderErrors, err)
	}
	if n := cx.CallCount("list"); n > 1 {
		t.Fatalf("codex listed %d times, want once (every listing joined the start)", n)
	}
}

// TestAFreshFlightDoesNotRestartTheGrace: a page after the grace lists a
// provider that failed afresh (its failure is not kept); when that
// listing ends, every provider still under way is a start past its
// grace, so the page answers then, not a whole grace later.
func TestAFreshFlightDoesNotRestartTheGrace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	defer cancel()
	clock := testclock.At(t, time.Date(2026, 12, 3, 2, 30, 0, 0, time.UTC))
	trap := clock.Trap().NewTimer("registry", "start grace")
	defer trap.Close()
	release := make(chan struct{})
	defer close(release)
	cx := &registrytest.Adapter{Provider: providers.Codex}
	cx.StartingFunc = func() bool { return true }
	cx.ListFunc = blockUntil(release)
	oc := &registrytest.Adapter{Provider: providers.OpenCode}
	oc.SetSessions(nil, errors.New("opencode: not found"))
	r, err := New(teststore.Open(t), []providers.Adapter{oc, cx}, Options{Clock: clock, SoftDeadline: 800 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	check := func(p SessionPage) {
		t.Helper()
		got := map[providers.ID]string{}
		for _, pe := range p.ProviderErrors {
			got[pe.Provider] = pe.Error
		}
		if !strings.HasPrefix(got[providers.Codex], "late: codex is still starting") || !strings.Contains(got[providers.OpenCode], "not found") {
			t.Fatalf("provider errors = %v, want codex starting and opencode not found", got)
		}
	}

	done := listAsync(ctx, t, r)
	call, err := trap.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	call.MustRelease(ctx)
	clock.Advance(DefaultStartGrace).MustWait(ctx)
	check(wait.Recv(t, "the first page", wait.InProcess, done))

	// No clock advance: the page answers once opencode's fresh listing ends.
	trap.Close()
	second, err := r.ListSessionPage(ctx, SessionQuery{})
	if err != nil {
		t.Fatal(err)
	}
	check(second)
	if n := oc.CallCount("list"); n != 2 {
		t.Fatalf("opencode listed %d times, want twice (its failure is listed afresh)", n)
	}
}
