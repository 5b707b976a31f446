package opencode

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
)

// TestRealTurnVerdictsAndUsage drives the real opencode server through one
// turn of each verdict the fake model can cause and checks the verdict,
// error and usage the adapter reports with each outcome: the tokens equal
// what the fake model reported (OpenCode counts input without the cached
// tokens, and output without the reasoning ones).
func TestRealTurnVerdictsAndUsage(t *testing.T) {
	a, host, _, fm := realAdapter(t)
	ctx := ctxT(t, 4*turnTimeout)
	s, err := a.CreateSession(ctx, providers.CreateOptions{CWD: projectDir(t, false), Title: "verdicts"})
	if err != nil {
		t.Fatal(err)
	}
	usage := fakemodel.Usage{Input: 120, Output: 30, Cached: 20, Reasoning: 7}
	answer, empty, cut, bad, slow := unique(t, "ANSWER"), unique(t, "NOTHING"), unique(t, "CUTOFF"), unique(t, "BADREQ"), unique(t, "SLOWREPLY")
	fm.On(fakemodel.Exact(answer), fakemodel.Text("Here is the answer.").WithUsage(usage))
	fm.On(fakemodel.Exact(empty), fakemodel.Empty().WithUsage(usage))
	fm.On(fakemodel.Exact(cut), fakemodel.Truncated("This is cut").WithUsage(usage))
	fm.On(fakemodel.Exact(bad), fakemodel.Fail(400, "the fake model refuses this request"))
	fm.On(fakemodel.Exact(slow), fakemodel.Text("too late").WithDelay(5*time.Minute))
	want := providers.Usage{InputTokens: providers.Tokens(usage.Input - usage.Cached), OutputTokens: providers.Tokens(usage.Output - usage.Reasoning),
		CachedTokens: providers.Tokens(usage.Cached), ReasoningTokens: providers.Tokens(usage.Reasoning)}
	for _, c := range []struct {
		text    string
		verdict providers.Verdict
		usage   bool
		errHas  string
	}{
		{answer, providers.VerdictAnswered, true, ""},
		{empty, providers.VerdictEmpty, true, ""},
		{cut, providers.VerdictTruncated, true, ""},
		{bad, providers.VerdictFailed, false, "the fake model refuses this request"},
	} {
		rc, err := a.Send(ctx, s.NativeID, c.text, providers.SendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		o := host.wait(t, rc.Ref, turnTimeout)
		turn, _ := json.Marshal(o.turn)
		t.Logf("%s: status %s, turn %s", c.text, o.status, turn)
		if o.turn == nil || o.turn.Verdict != c.verdict || !strings.Contains(o.turn.Error, c.errHas) {
			t.Errorf("%s: turn = %s, want %s with error containing %q", c.text, turn, c.verdict, c.errHas)
			continue
		}
		if !c.usage && o.turn.Usage != nil {
			t.Errorf("%s: usage %s reported for a turn the model never answered", c.text, turn)
		}
		if c.usage {
			got := *o.turn.Usage
			got.CostUSD = nil // the fake model's price is unknown to OpenCode (0)
			if g, w := mustJSON(got), mustJSON(want); g != w {
				t.Errorf("%s: usage %s, want %s", c.text, g, w)
			}
		}
	}
	rc, err := a.Send(ctx, s.NativeID, slow, providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fm.Await(ctx, func(r fakemodel.Request) bool { return r.LastUser == slow }); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Cancel(ctx, s.NativeID); err != nil {
		t.Fatal(err)
	}
	o := host.wait(t, rc.Ref, turnTimeout)
	turn, _ := json.Marshal(o.turn)
	t.Logf("%s + cancel: status %s, turn %s", slow, o.status, turn)
	if o.turn == nil || o.turn.Verdict != providers.VerdictAborted {
		t.Errorf("aborted turn = %s", turn)
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
