package codex_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
)

// TestRealCodexTurnVerdictsAndUsage drives the real codex app-server
// through one turn of each verdict the fake model can cause and checks
// the verdict, error and usage stored with each send: the usage equals
// what the fake model reported.
func TestRealCodexTurnVerdictsAndUsage(t *testing.T) {
	fm := fakemodel.New(t)
	usage := fakemodel.Usage{Input: 120, Output: 30, Cached: 20, Reasoning: 7}
	fm.On(fakemodel.Contains("ANSWER"), fakemodel.Text("Here is the answer.").WithUsage(usage))
	fm.On(fakemodel.Contains("NOTHING"), fakemodel.Empty().WithUsage(usage))
	fm.On(fakemodel.Contains("CUTOFF"), fakemodel.Truncated("This is cut").WithUsage(usage))
	fm.On(fakemodel.Contains("BADREQ"), fakemodel.Fail(400, "the fake model refuses this request"))
	fm.On(fakemodel.Contains("SLOWREPLY"), fakemodel.Text("too late").WithDelay(time.Minute))
	s, _ := realStack(t, fm, nil, nil)
	ctx := ctxFor(t, 240*time.Second)
	sess, err := s.reg.CreateSession(ctx, "codex", providers.CreateOptions{CWD: s.project})
	if err != nil {
		t.Fatal(err)
	}
	want := providers.Usage{InputTokens: providers.Tokens(usage.Input), OutputTokens: providers.Tokens(usage.Output),
		CachedTokens: providers.Tokens(usage.Cached), ReasoningTokens: providers.Tokens(usage.Reasoning)}
	send := func(text string) delivery.Operation {
		t.Helper()
		res, err := s.del.Send(ctx, delivery.SendRequest{Provider: "codex", NativeID: sess.NativeID, Text: text})
		if err != nil {
			t.Fatal(err)
		}
		return waitOp(t, s, res.Operation.ID)
	}
	for _, c := range []struct {
		text    string
		verdict providers.Verdict
		usage   bool
		errHas  string
	}{
		{"ANSWER please", providers.VerdictAnswered, true, ""},
		{"NOTHING please", providers.VerdictEmpty, true, ""},
		{"CUTOFF please", providers.VerdictTruncated, true, "max_output_tokens"},
		{"BADREQ please", providers.VerdictFailed, false, "the fake model refuses this request"},
	} {
		op := send(c.text)
		turn, _ := json.Marshal(op.Turn)
		t.Logf("%s: status %s, turn %s", c.text, op.Status, turn)
		if op.Turn == nil || op.Turn.Verdict != c.verdict || !strings.Contains(op.Turn.Error, c.errHas) {
			t.Errorf("%s: verdict = %s, want %s with error containing %q", c.text, turn, c.verdict, c.errHas)
			continue
		}
		if c.usage && (op.Turn.Usage == nil || !usageEqual(*op.Turn.Usage, want)) {
			t.Errorf("%s: usage = %s, want what the fake model reported (%+v)", c.text, turn, usage)
		}
	}
	// Aborted: interrupted while the model is still answering.
	res, err := s.del.Send(ctx, delivery.SendRequest{Provider: "codex", NativeID: sess.NativeID, Text: "SLOWREPLY please"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fm.Await(ctx, func(r fakemodel.Request) bool { return strings.Contains(r.LastUser, "SLOWREPLY") }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.del.Cancel(ctx, delivery.CancelRequest{Provider: "codex", NativeID: sess.NativeID}); err != nil {
		t.Fatal(err)
	}
	op := waitOp(t, s, res.Operation.ID)
	turn, _ := json.Marshal(op.Turn)
	t.Logf("SLOWREPLY + cancel: status %s, turn %s", op.Status, turn)
	if op.Turn == nil || op.Turn.Verdict != providers.VerdictAborted {
		t.Errorf("interrupted turn: %s, want aborted", turn)
	}
}

func usageEqual(a, b providers.Usage) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
