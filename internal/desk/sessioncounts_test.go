package desk

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
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
