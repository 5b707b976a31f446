package opencode

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// TestLostServerSettlesEveryPromptOnceThenLateResultsAreEvidence: a lost
// server settles both prompts in flight delivery_unknown in one place (the
// kit's tracker), nothing is resent, and the hub follows nothing more. A
// result seen after that is still reported, saying it came after the loss:
// the ledger takes it as evidence (delivery_unknown → completed or rejected;
// internal/delivery TestProviderLossMovesQueuedToDeliveryUnknownAndEvidenceResolves).
// A second sighting of a settled result reports nothing: that state is final.
func TestLostServerSettlesEveryPromptOnceThenLateResultsAreEvidence(t *testing.T) {
	f := newFakeServer(t)
	f.session("ses_a", "/tmp/a")
	var posts atomic.Int32
	f.handle("POST /session/ses_a/prompt_async", func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.WriteHeader(204)
	})
	host := newHost()
	a := New(Config{ServerURL: f.URL, DisableScan: true, DisableAutoStart: true}, host)
	defer a.Close()
	ctx := ctxT(t, wait.Process)
	if _, err := a.Subscribe(ctx, "ses_a"); err != nil { // keeps the stream open after the loss
		t.Fatal(err)
	}
	first, err := a.Send(ctx, "ses_a", "first prompt", providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := a.Send(ctx, "ses_a", "second prompt", providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}

	const why = "the OpenCode server this runtime started (pid 1) exited (killed)"
	a.hub.lose(why) // what managedExited and a refused stream do
	for _, rc := range []providers.Receipt{first, second} {
		o := host.wait(t, rc.Ref, wait.Process)
		if o.status != providers.StatusDeliveryUnknown || o.reason != why+"; "+unsettledTurn {
			t.Fatalf("%s after the loss: %+v", rc.Ref, o)
		}
	}
	if inFlight := a.hub.ops.Load().InFlight(); len(inFlight) != 0 || a.hub.following() {
		t.Fatalf("still in flight after the loss: %v", inFlight)
	}

	reply := func(id, parent string, errObj any) map[string]any {
		info := map[string]any{"id": id, "role": "assistant", "sessionID": "ses_a", "parentID": parent,
			"finish": "stop", "time": map[string]any{"created": 1, "completed": 2}}
		if errObj != nil {
			info["error"] = errObj
		}
		return map[string]any{"type": "message.updated", "properties": map[string]any{"sessionID": "ses_a", "info": info}}
	}
	f.push("/tmp/a", reply("msg_r1", first.NativeTurnID, nil))
	f.push("/tmp/a", reply("msg_r1", first.NativeTurnID, nil)) // seen again: settled already
	f.push("/tmp/a", reply("msg_r2", second.NativeTurnID, map[string]any{"name": "APIError", "data": map[string]any{"message": "quota"}}))
	wait.For(t, "the late results", wait.Process, func() bool { return host.count(second.Ref) == 2 })

	host.mu.Lock()
	got := append([]outcome(nil), host.outcomes...)
	host.mu.Unlock()
	want := []struct {
		ref    string
		status providers.ReceiptStatus
		reason string
	}{
		{first.Ref, providers.StatusDeliveryUnknown, why},
		{second.Ref, providers.StatusDeliveryUnknown, why},
		{first.Ref, providers.StatusCompleted, "observed after"},
		{second.Ref, providers.StatusRejected, "APIError: quota; the result was observed after"},
	}
	if len(got) != len(want) {
		t.Fatalf("outcomes %+v, want %d", got, len(want))
	}
	for i, w := range want {
		if got[i].ref != w.ref || got[i].status != w.status || !strings.Contains(got[i].reason, w.reason) || !strings.Contains(got[i].reason, why) {
			t.Errorf("outcome %d = %+v, want %s %s with %q and the loss reason", i, got[i], w.ref, w.status, w.reason)
		}
	}
	if n := posts.Load(); n != 2 {
		t.Fatalf("%d prompts posted, want 2 (nothing resent)", n)
	}
}
