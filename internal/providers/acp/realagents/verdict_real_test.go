package realagents_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// turnHost records each outcome's turn facts.
type turnHost struct {
	mu  sync.Mutex
	out map[string]providers.Outcome
}

func (h *turnHost) ReportOutcome(_ providers.ID, _, ref string, o providers.Outcome) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.out == nil {
		h.out = map[string]providers.Outcome{}
	}
	h.out[ref] = o
}

func (h *turnHost) await(t *testing.T, ref string) providers.Outcome {
	t.Helper()
	var o providers.Outcome
	wait.For(t, "the outcome of "+ref, wait.Process, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		var ok bool
		o, ok = h.out[ref]
		return ok
	})
	return o
}

// TestRealClaudeTurnVerdictsAndUsage drives claude-agent-acp through one
// turn of each verdict the fake model can cause and checks the verdict
// and usage the ACP adapter derives from the prompt's stop reason, its
// updates and its answer's usage.
func TestRealClaudeTurnVerdictsAndUsage(t *testing.T) {
	c := caseOf(t, providers.ClaudeCode)
	h := &turnHost{}
	fm := fakemodel.New(t)
	a, ws := realAgent(t, c, h, c.env(t, fm))
	logRequestsOnFailure(t, fm)

	usage := fakemodel.Usage{Input: 120, Output: 30, Cached: 20}
	fm.SetDefault(fakemodel.Text("Hello from fake model."))
	// Claude Code folds a prompt whose turn left no assistant message
	// into the next one's user message, so a later turn's request also
	// carries the earlier words: the rules of later turns come first.
	fm.On(fakemodel.Contains("SLOWREPLY"), fakemodel.Text("late").WithDelay(5*time.Minute))
	fm.On(fakemodel.Contains("NOTHING"), fakemodel.Empty().WithUsage(usage))
	fm.On(fakemodel.Contains("BADREQ"), fakemodel.Fail(400, "the fake model refuses this request"))
	// Claude Code resumes a length-limited answer by itself ("Output
	// token limit hit. Resume directly…"); only when every resumption is
	// cut too does the turn end on the limit.
	fm.On(fakemodel.Contains("Output token limit hit"), fakemodel.Truncated("This is cut").WithUsage(usage))
	fm.On(fakemodel.Contains("CUTOFF"), fakemodel.Truncated("This is cut").WithUsage(usage))
	fm.On(fakemodel.Contains("ANSWER"), fakemodel.Text("Here is the answer.").WithUsage(usage))
	s, err := a.CreateSession(ctxT(t, 90*time.Second), providers.CreateOptions{CWD: ws})
	if err != nil {
		t.Fatal(err)
	}
	sid := s.NativeID
	// Claude Code's input count excludes the cache reads (Anthropic's
	// input_tokens); the fake model reports input 120 with 20 cached.
	want := providers.Usage{InputTokens: providers.Tokens(usage.Input - usage.Cached), OutputTokens: providers.Tokens(usage.Output),
		CachedTokens: providers.Tokens(usage.Cached)}
	for _, tc := range []struct {
		text    string
		verdict providers.Verdict
		usage   bool
	}{
		{"ANSWER please", providers.VerdictAnswered, true},
		{"CUTOFF please", providers.VerdictTruncated, false},
		{"BADREQ please", providers.VerdictFailed, false},
		{"NOTHING please", providers.VerdictEmpty, true},
	} {
		before := modelCalls(fm)
		r, err := a.Send(ctxT(t, 60*time.Second), sid, tc.text, providers.SendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		o := h.await(t, r.Ref)
		turn, _ := json.Marshal(o.Turn)
		t.Logf("%s: status %s (%s), turn %s", tc.text, o.Status, o.Reason, turn)
		if o.Turn == nil || o.Turn.Verdict != tc.verdict {
			t.Errorf("%s: turn %s, want %s", tc.text, turn, tc.verdict)
			continue
		}
		if tc.usage {
			// Claude Code asks the model again after an empty answer:
			// the turn's usage is the sum of its model requests.
			n := int64(modelCalls(fm) - before)
			w := providers.Usage{}
			for range n {
				w.Add(&want)
			}
			got := *o.Turn.Usage
			got.CostUSD = nil // Claude Code prices the fake model by its own table
			if g, w := mustJSON(got), mustJSON(w); g != w {
				t.Errorf("%s: usage %s, want %s (%d model requests)", tc.text, g, w, n)
			}
		}
	}
	r, err := a.Send(ctxT(t, 60*time.Second), sid, "SLOWREPLY please", providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t, 90*time.Second)
	if _, err := fm.Await(ctx, func(r fakemodel.Request) bool { return strings.Contains(r.LastUser, "SLOWREPLY") }); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Cancel(context.Background(), sid); err != nil {
		t.Fatal(err)
	}
	o := h.await(t, r.Ref)
	turn, _ := json.Marshal(o.Turn)
	t.Logf("SLOWREPLY + cancel: status %s (%s), turn %s", o.Status, o.Reason, turn)
	if o.Turn == nil || o.Turn.Verdict != providers.VerdictAborted {
		t.Errorf("cancelled turn %s, want aborted", turn)
	}
}

// modelCalls counts the Anthropic Messages requests the fake model got.
func modelCalls(fm *fakemodel.Server) int {
	n := 0
	for _, r := range fm.Requests() {
		if r.API == fakemodel.Messages && !r.Side {
			n++
		}
	}
	return n
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
