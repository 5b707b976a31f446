package handlers

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/events"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/providers/registry/registrytest"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// TestReadSessionEventsWaitEndsOnTheVerdict: a read_session_events call
// waiting on a session whose turn is running ends when the turn's outcome
// is recorded, with the interop.operation event that carries the verdict
// (and usage): a caller waits for the verdict without polling receipts.
func TestReadSessionEventsWaitEndsOnTheVerdict(t *testing.T) {
	for _, tc := range []struct {
		name string
		turn providers.TurnResult
		want string // the event's turn, as JSON
	}{
		{"answered", providers.TurnResult{Verdict: providers.VerdictAnswered, Usage: &providers.Usage{InputTokens: providers.Tokens(12)}},
			`{"verdict":"answered","usage":{"input":12}}`},
		{"aborted", providers.TurnResult{Verdict: providers.VerdictAborted}, `{"verdict":"aborted"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := teststore.Open(t)
			f := &registrytest.Adapter{Provider: providers.Codex}
			f.SubscribeFunc = func(ctx context.Context, _ string) (<-chan providers.NativeEvent, error) {
				ch := make(chan providers.NativeEvent)
				go func() { <-ctx.Done(); close(ch) }()
				return ch, nil
			}
			f.SetSessions([]providers.Session{f.Session("t1", "")}, nil)
			f.SendFunc = func(context.Context, string, string, providers.SendOptions) (providers.Receipt, error) {
				return providers.Receipt{Accepted: true, Status: providers.StatusQueued, Ref: "turn_1", NativeTurnID: "turn_1"}, nil
			}
			reg, err := registry.New(st, []providers.Adapter{f}, registry.Options{})
			if err != nil {
				t.Fatal(err)
			}
			hub := events.NewHub(events.NewLog(st, events.LogOptions{}), events.HubOptions{Open: reg.Subscribe, Liveness: reg.Liveness})
			t.Cleanup(func() { hub.Close() })
			relay := registry.NewHost()
			del := delivery.New(st, reg, delivery.Options{Reports: relay, Events: hub})
			t.Cleanup(func() { del.Close() })
			tools := SessionTools{Registry: reg, Delivery: del, Events: hub}
			read := func(after int64, timeoutMs int) *catalogs.ReadSessionEventsOutput {
				in, err := catalogs.DecodeReadSessionEvents(json.RawMessage(`{"provider":"codex","nativeId":"t1","afterSequence":` +
					strconv.FormatInt(after, 10) + `,"timeoutMs":` + strconv.Itoa(timeoutMs) + `}`))
				if err != nil {
					t.Error(err)
					return nil
				}
				out, err := tools.ReadSessionEvents(ctx, in)
				if err != nil {
					t.Error(err)
					return nil
				}
				return out
			}
			in, err := catalogs.DecodeSendSessionMessage(json.RawMessage(`{"provider":"codex","nativeId":"t1","text":"hi"}`))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tools.SendSessionMessage(ctx, in); err != nil {
				t.Fatal(err)
			}
			first := read(0, 0)
			if first == nil {
				t.FailNow()
			}
			done := make(chan *catalogs.ReadSessionEventsOutput, 1)
			go func() { done <- read(first.Next, 30000) }()
			select {
			case out := <-done:
				t.Fatalf("the wait ended before the turn did: %s", mustJSON(t, out))
			default:
			}
			relay.ReportOutcome(providers.Codex, "t1", "turn_1", providers.Outcome{Status: providers.StatusCompleted, Turn: &tc.turn})
			if err := del.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			out := wait.Recv(t, "the waiting read", wait.InProcess, done)
			if out == nil || out.WaitEnded != nil || len(out.Events) == 0 {
				t.Fatalf("waiting read: %s, want the turn's event", mustJSON(t, out))
			}
			var got []string
			for _, ev := range out.Events {
				raw, _ := json.Marshal(ev.Data)
				var d struct {
					Turn json.RawMessage `json:"turn"`
				}
				if ev.Type == delivery.EventOperation && json.Unmarshal(raw, &d) == nil && len(d.Turn) > 0 {
					got = append(got, string(d.Turn))
				}
			}
			if strings.Join(got, ",") != tc.want {
				t.Errorf("turns in the events ending the wait: %v, want %s (events %s)", got, tc.want, mustJSON(t, out.Events))
			}
		})
	}
}
