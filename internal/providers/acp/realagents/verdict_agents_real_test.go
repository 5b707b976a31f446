package realagents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
)

// TestRealACPAgentVerdictsAndUsage drives Qwen Code and codex-acp through
// one turn of each verdict the fake model can cause (answered, empty, a
// cut answer resumed and one cut every time, failed, and a turn cancelled
// while the model holds its answer: aborted) and checks the verdict the
// ACP adapter derives, or, where the agent cannot report one, what it
// reports instead (docs/delivery.md), and that neither reports usage.
func TestRealACPAgentVerdictsAndUsage(t *testing.T) {
	for _, c := range agentCases() {
		if c.id != "qwen" && c.id != "codex-acp" {
			continue
		}
		t.Run(string(c.id), func(t *testing.T) {
			h := &turnHost{}
			fm := fakemodel.New(t)
			env := c.env(t, fm)
			if c.id == "codex-acp" {
				// A model Codex has metadata for: on "echo" Codex warns
				// "Model metadata for `echo` not found" in every turn,
				// and codex-acp forwards that warning as assistant text
				// (TestRealCodexACPWarningIsOutput).
				codexModel(t, env, fm, "gpt-5.4-mini")
			}
			a, ws := realAgent(t, c, h, env)
			logRequestsOnFailure(t, fm)
			usage := fakemodel.Usage{Input: 120, Output: 30, Cached: 20, Reasoning: 7}
			fm.SetDefault(fakemodel.Text("Hello from fake model."))
			gate := make(chan struct{})
			t.Cleanup(func() { close(gate) })
			fm.On(fakemodel.Contains("HOLDME"), fakemodel.Text("late").WithGate(gate))
			// Qwen joins a prompt whose turn failed to the next one's user
			// message: the rules of later turns come first.
			fm.On(fakemodel.Contains("BADREQ"), fakemodel.Fail(400, "the fake model refuses this request"))
			fm.On(fakemodel.Contains("CUTALWAYS"), fakemodel.Truncated("This is cut").WithUsage(usage))
			fm.On(fakemodel.Contains("CUTOFF"), fakemodel.Truncated("This is cut").WithUsage(usage))
			fm.On(fakemodel.Contains("NOTHING"), fakemodel.Empty().WithUsage(usage))
			fm.On(fakemodel.Contains("ANSWER"), fakemodel.Text("Here is the answer.").WithUsage(usage))
			s, err := a.CreateSession(ctxT(t, 90*time.Second), providers.CreateOptions{CWD: ws})
			if err != nil {
				t.Fatal(err)
			}
			events := subscribe(t, a, s.NativeID)
			// What each program makes of the fake model's answers, as
			// observed: Qwen Code fails a turn on an empty model answer
			// itself ("Model stream ended with empty response text") and
			// resumes a cut answer by itself ("Output token limit hit.
			// Resume directly"), whose resumption here is answered.
			want := map[string]providers.Verdict{
				"ANSWER please": providers.VerdictAnswered, "NOTHING please": providers.VerdictEmpty,
				"CUTOFF please": providers.VerdictTruncated, "BADREQ please": providers.VerdictFailed,
				"CUTALWAYS please": providers.VerdictTruncated,
			}
			if c.id == "qwen" {
				want["NOTHING please"], want["CUTOFF please"] = providers.VerdictFailed, providers.VerdictAnswered
				// Qwen Code 0.24.4 retries a cut answer with a higher
				// limit, then asks to resume 3 times
				// (MAX_OUTPUT_RECOVERY_ATTEMPTS); when every answer is
				// cut it still ends the turn with stopReason end_turn
				// (its ACP agent sends max_tokens only for its session
				// token limit), so the adapter sees an answer:
				// truncated cannot be observed through Qwen Code.
				want["CUTALWAYS please"] = providers.VerdictAnswered
			}
			for _, tc := range []struct {
				text    string
				verdict providers.Verdict
			}{
				{"ANSWER please", want["ANSWER please"]},
				{"NOTHING please", want["NOTHING please"]},
				{"CUTOFF please", want["CUTOFF please"]},
				// Every resumption of this one is cut too (Qwen's
				// "Output token limit hit" prompts; the rule comes
				// after CUTOFF's turn, whose resumption is answered).
				{"CUTALWAYS please", want["CUTALWAYS please"]},
				{"BADREQ please", want["BADREQ please"]},
			} {
				if tc.text == "CUTALWAYS please" {
					fm.On(fakemodel.Contains("Output token limit hit"), fakemodel.Truncated("This is cut").WithUsage(usage))
				}
				from, resumed := events.len(), resumes(fm)
				r, err := a.Send(ctxT(t, 60*time.Second), s.NativeID, tc.text, providers.SendOptions{})
				if err != nil {
					t.Fatal(err)
				}
				o := h.await(t, r.Ref)
				turn, _ := json.Marshal(o.Turn)
				t.Logf("%s: status %s (%s), turn %s", tc.text, o.Status, o.Reason, turn)
				if n := resumes(fm) - resumed; tc.text == "CUTALWAYS please" && c.id == "qwen" && n != 3 {
					t.Errorf("%s: Qwen Code asked to resume %d times, want 3 (every answer cut)", tc.text, n)
				}
				if o.Turn == nil || o.Turn.Verdict != tc.verdict {
					t.Errorf("%s: turn %s, want %s; its updates: %s", tc.text, turn, tc.verdict, events.since(from))
					continue
				}
				// Neither program reports usage over ACP (no usage in the
				// prompt's answer, no usage_update) although the fake model
				// reported it: unknown, never 0.
				if o.Turn.Usage != nil {
					t.Errorf("%s: usage %s reported; this version reported none before (check it against the fake model's %+v)",
						tc.text, mustJSON(o.Turn.Usage), usage)
				}
			}
			// A turn cancelled while the model holds its answer: aborted.
			r, err := a.Send(ctxT(t, 60*time.Second), s.NativeID, "HOLDME please", providers.SendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fm.Await(ctxT(t, 90*time.Second), func(r fakemodel.Request) bool {
				return !r.Side && strings.Contains(r.LastUser, "HOLDME")
			}); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Cancel(context.Background(), s.NativeID); err != nil {
				t.Fatal(err)
			}
			o := h.await(t, r.Ref)
			turn, _ := json.Marshal(o.Turn)
			t.Logf("HOLDME + cancel: status %s (%s), turn %s", o.Status, o.Reason, turn)
			if o.Turn == nil || o.Turn.Verdict != providers.VerdictAborted {
				t.Errorf("cancelled turn %s, want aborted", turn)
			}
		})
	}
}

// codexModel points codex-acp's config.toml in env at model.
func codexModel(t *testing.T, env *realpeers.Env, fm *fakemodel.Server, model string) {
	t.Helper()
	cfg := strings.Replace(realpeers.CodexConfig(fm.BaseURL()), `model = "echo"`, fmt.Sprintf("model = %q", model), 1)
	if err := os.WriteFile(filepath.Join(env.Get("CODEX_HOME"), "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRealCodexACPWarningIsOutput shows why an empty turn of codex-acp on a
// model Codex has no metadata for reads answered: codex-acp 0.16.0 sends
// Codex's warning ("Model metadata for `echo` not found…") as an
// agent_message_chunk, the same update as the model's words, so the
// adapter cannot tell it from an answer (docs/compatibility.md).
func TestRealCodexACPWarningIsOutput(t *testing.T) {
	c := caseOf(t, "codex-acp")
	h := &turnHost{}
	fm := fakemodel.New(t)
	a, ws := realAgent(t, c, h, c.env(t, fm))
	fm.SetDefault(fakemodel.Empty())
	s, err := a.CreateSession(ctxT(t, 90*time.Second), providers.CreateOptions{CWD: ws})
	if err != nil {
		t.Fatal(err)
	}
	events := subscribe(t, a, s.NativeID)
	r, err := a.Send(ctxT(t, 60*time.Second), s.NativeID, "NOTHING please", providers.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := h.await(t, r.Ref)
	turn, _ := json.Marshal(o.Turn)
	text := events.text("agent_message_chunk")
	t.Logf("NOTHING please on echo: status %s, turn %s, assistant text %q", o.Status, turn, text)
	const warning = "Model metadata for `echo` not found"
	if before, after, ok := strings.Cut(text, warning); !ok || strings.TrimSpace(before) != "" || strings.Contains(after, "\n") {
		t.Errorf("assistant text %q, want only Codex's metadata warning", text)
	}
	if o.Turn == nil || o.Turn.Verdict != providers.VerdictAnswered {
		t.Errorf("turn %s, want answered (the warning is the only assistant text); if empty now, codex-acp no longer sends it as output: update docs/compatibility.md", turn)
	}
}

// resumes counts the requests asking the model to resume a cut answer
// (Qwen Code's and Claude Code's "Output token limit hit" prompt).
func resumes(fm *fakemodel.Server) int {
	n := 0
	for _, r := range fm.Requests() {
		if strings.HasPrefix(r.LastUser, "Output token limit hit") {
			n++
		}
	}
	return n
}
