package desk

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

// TestSessionsCountPerLiveness: the sessions page counts its sessions per
// liveness in the store, and every count is the number of rows the page
// shows in that state (the store's inference, row by row), on SQLite and
// PostgreSQL; a session that changes moves the counts on the live stream.
func TestSessionsCountPerLiveness(t *testing.T) {
	pgtest.EachDialect(t, func(t *testing.T, location string) {
		f := newFixtureAt(t, location)
		ctx := context.Background()
		stopped := f.now.Add(-time.Minute)
		f.addOwner("rt_alive", f.now, nil)
		f.addOwner("rt_stopped", f.now.Add(-2*time.Minute), &stopped)
		events := func(native string, types ...string) {
			t.Helper()
			var evs []providers.NativeEvent
			for _, typ := range types {
				data := `{}`
				if st, ok := strings.CutPrefix(typ, eventOperation+":"); ok {
					typ, data = eventOperation, `{"status":"`+st+`"}`
				}
				evs = append(evs, providers.NativeEvent{NativeID: native, Timestamp: f.now, Type: typ, Data: json.RawMessage(data)})
			}
			if _, err := f.h.read.events.Append(ctx, "codex", native, 1, evs); err != nil {
				t.Fatal(err)
			}
		}
		many := func(n int, typ string) []string {
			out := make([]string, n)
			for i := range out {
				out[i] = typ
			}
			return out
		}
		seed := []struct {
			native string
			want   string
			seed   func(native string)
		}{
			{"c-working", LiveWorking, func(n string) {
				f.addOwnedOperation("op-w", n, "send", operation.StatusQueued, f.now, "rt_alive")
			}},
			{"c-orphan", LiveUnknown, func(n string) {
				f.addOwnedOperation("op-o", n, "send", operation.StatusQueued, f.now, "rt_stopped")
			}},
			{"c-asks", LiveWaitingOnApproval, func(n string) { events(n, "turn/started", "permission.asked") }},
			{"c-asks-then-status", LiveWaitingOnApproval, func(n string) {
				events(n, "item/fileChange/requestApproval", "thread/status/changed", eventOperation+":queued")
			}},
			{"c-answered", LiveIdle, func(n string) {
				events(n, "permission.asked", eventOperation+":completed")
			}},
			{"c-turn-ended", LiveIdle, func(n string) { events(n, "turn/started", "turn/completed") }},
			{"c-settled-op", LiveIdle, func(n string) {
				f.addOperation("op-s", n, "send", operation.StatusCompleted, f.now)
			}},
			{"c-restarted", LiveUnknown, func(n string) {
				f.addOperation("op-r", n, "send", operation.StatusCompleted, f.now)
				events(n, "turn/completed", providers.EventProviderRestarted)
			}},
			{"c-nothing", LiveUnknown, func(string) {}},
			// An approval older than the newest livenessEvents is out of
			// what the inference reads.
			{"c-old-ask", LiveUnknown, func(n string) {
				events(n, append([]string{"permission.asked"}, many(livenessEvents, "session.status")...)...)
			}},
		}
		want := map[string]int{}
		for _, s := range seed {
			f.addSession(s.native)
			s.seed(s.native)
			want[s.want]++
		}
		_, body := f.get("/desk/sessions", bearer...)
		rows := map[string]int{}
		for _, m := range regexp.MustCompile(`data-liveness="([a-z_]+)"`).FindAllStringSubmatch(body, -1) {
			rows[m[1]]++
		}
		for _, s := range seed {
			if !strings.Contains(body, `data-native-id="`+s.native+`"`) {
				t.Fatalf("%s not listed", s.native)
			}
		}
		count := func(body, state string) string {
			m := regexp.MustCompile(`data-count="` + state + `">([0-9,]+)<`).FindStringSubmatch(body)
			if m == nil {
				t.Fatalf("no count of %s: %.3000s", state, body)
			}
			return m[1]
		}
		if got := count(body, "all"); got != "10" {
			t.Errorf("all: %s, want 10", got)
		}
		for _, st := range livenessStates {
			if got, w := count(body, st), strings.TrimSpace(strings.Repeat(" ", 0)+itoa(want[st])); got != w || rows[st] != want[st] {
				t.Errorf("%s: counted %s, rows %d, want %s", st, got, rows[st], w)
			}
		}

		// The live stream: a session starts to wait on an approval.
		s := f.stream(liveURL(t, body), bearer...)
		s.next(t, streamWait) // the greeting
		events("c-turn-ended", "permission.asked")
		f.poll()
		for {
			ev := s.next(t, streamWait)
			if strings.Contains(ev.data, `id="session-counts"`) {
				if got := count(ev.data, LiveWaitingOnApproval); got != itoa(want[LiveWaitingOnApproval]+1) {
					t.Fatalf("waiting after the change: %s", got)
				}
				if got := count(ev.data, LiveIdle); got != itoa(want[LiveIdle]-1) {
					t.Fatalf("idle after the change: %s", got)
				}
				break
			}
		}
	})
}

func itoa(n int) string { return groupDigits(n) }

// TestSessionCountsFollowTheRuntimesLiveness: under serve --http the rows
// of the sessions that runtime drives show its own liveness (dead
// included), and the counts per liveness are computed by the same rule:
// each count is the number of rows showing that state, open operation or
// not. When the runtime's answer changes (nothing written to the store),
// the stream's next look sends the changed row and the counts together.
// On both dialects.
func TestSessionCountsFollowTheRuntimesLiveness(t *testing.T) {
	pgtest.EachDialect(t, func(t *testing.T, location string) {
		var mu sync.Mutex
		runtime := map[string]Liveness{}
		set := func(native, state string) {
			mu.Lock()
			defer mu.Unlock()
			runtime[native] = Liveness{State: state, Reason: "the fake runtime says so"}
		}
		f := newFixtureAt(t, location, func(o *Options) {
			o.Owner = "rt_self"
			o.Heartbeat = time.Second
			o.Liveness = func(provider, nativeID string) (Liveness, bool) {
				mu.Lock()
				defer mu.Unlock()
				l, ok := runtime[nativeID]
				return l, ok
			}
		})
		f.addOwner("rt_self", f.now, nil)
		f.addOwner("rt_alive", f.now, nil)
		seed := []struct {
			native, owner string
			status        operation.Status
			runtime, want string
		}{
			{"d-dead", "rt_self", operation.StatusCompleted, LiveDead, LiveDead},
			{"d-working", "rt_self", operation.StatusCompleted, LiveWorking, LiveWorking},
			{"d-asks", "rt_self", operation.StatusCompleted, LiveWaitingOnApproval, LiveWaitingOnApproval},
			{"d-runtime-unknown", "rt_self", operation.StatusCompleted, LiveUnknown, LiveIdle},
			{"d-open", "rt_self", operation.StatusQueued, LiveIdle, LiveIdle},
			{"not-driven", "rt_alive", operation.StatusCompleted, LiveDead, LiveIdle},
			{"nothing", "", "", LiveDead, LiveUnknown},
		}
		want := map[string]int{}
		for i, s := range seed {
			f.addSession(s.native)
			if s.status != "" {
				f.addOwnedOperation(fmt.Sprintf("op_%d", i), s.native, "send", s.status, f.now, s.owner)
			}
			set(s.native, s.runtime)
			want[s.want]++
		}
		check := func(what, body string, want map[string]int) {
			t.Helper()
			rows := map[string]int{}
			for _, m := range regexp.MustCompile(`data-liveness="([a-z_]+)"`).FindAllStringSubmatch(body, -1) {
				rows[m[1]]++
			}
			for _, st := range livenessStates {
				m := regexp.MustCompile(`data-count="` + st + `">([0-9,]+)<`).FindStringSubmatch(body)
				if m == nil {
					t.Fatalf("%s: no count of %s: %.3000s", what, st, body)
				}
				if m[1] != itoa(want[st]) || rows[st] != want[st] {
					t.Errorf("%s: %s counted %s, rows %d, want %d", what, st, m[1], rows[st], want[st])
				}
			}
		}
		_, body := f.get("/desk/sessions", bearer...)
		check("the page", body, want)
		if strings.Contains(body, "counted in the store") {
			t.Errorf("the page still hedges its counts: %.3000s", body)
		}

		// The runtime says d-dead is idle now: no store write, the
		// stream's heartbeat looks again.
		s := f.stream(liveURL(t, body), bearer...)
		s.next(t, streamWait) // the greeting
		set("d-dead", LiveIdle)
		want[LiveDead]--
		want[LiveIdle]++
		f.advance(time.Second)
		ev := s.next(t, streamWait)
		i := strings.Index(ev.data, `data-native-id="d-dead"`)
		if i < 0 || !strings.Contains(ev.data[i:], `data-liveness="idle"`) || !strings.Contains(ev.data, `id="session-counts"`) {
			t.Fatalf("the change did not send the row and the counts together: %+v", ev)
		}
		for _, st := range livenessStates {
			m := regexp.MustCompile(`data-count="` + st + `">([0-9,]+)<`).FindStringSubmatch(ev.data)
			if m == nil || m[1] != itoa(want[st]) {
				t.Errorf("after the change: %s counted %v, want %d", st, m, want[st])
			}
		}
	})
}
