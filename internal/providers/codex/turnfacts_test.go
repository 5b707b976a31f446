package codex

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
)

// TestTurnVerdictFromObservedItems derives each verdict from the item and
// token-usage notifications codex sends and turn/completed's status.
func TestTurnVerdictFromObservedItems(t *testing.T) {
	usage := func(lastIn, totalIn int64) string {
		return `{"threadId":"th","turnId":"tu","tokenUsage":{"last":{"inputTokens":` + itoa(lastIn) + `,"cachedInputTokens":1,"outputTokens":5,"reasoningOutputTokens":2,"totalTokens":0},` +
			`"total":{"inputTokens":` + itoa(totalIn) + `,"cachedInputTokens":3,"outputTokens":15,"reasoningOutputTokens":4,"totalTokens":0}}}`
	}
	cases := []struct {
		name    string
		msgs    [][2]string // method, params
		status  string
		errText string
		want    *providers.TurnResult
	}{
		{"answered with usage", [][2]string{
			{"item/completed", `{"threadId":"th","turnId":"tu","item":{"type":"agentMessage","id":"i","text":"hi"}}`},
			{"thread/tokenUsage/updated", usage(10, 110)},
			{"thread/tokenUsage/updated", usage(10, 110)}, // a repeated report counts once
		}, "completed", "", &providers.TurnResult{Verdict: providers.VerdictAnswered, Usage: &providers.Usage{
			InputTokens: providers.Tokens(10), CachedTokens: providers.Tokens(1), OutputTokens: providers.Tokens(5), ReasoningTokens: providers.Tokens(2)}}},
		{"empty", nil, "completed", "", &providers.TurnResult{Verdict: providers.VerdictEmpty}},
		{"tool calls without a final message give no verdict", [][2]string{
			{"item/completed", `{"threadId":"th","turnId":"tu","item":{"type":"fileChange","id":"i","changes":[{"path":"a.go"},{"path":"a.go"}]}}`},
		}, "completed", "", &providers.TurnResult{ChangedFiles: []string{"a.go"}}},
		{"failed", nil, "failed", "unexpected status 400", &providers.TurnResult{Verdict: providers.VerdictFailed, Error: "unexpected status 400"}},
		{"truncated", nil, "failed", "Incomplete response returned, reason: max_output_tokens", &providers.TurnResult{Verdict: providers.VerdictTruncated, Error: "Incomplete response returned, reason: max_output_tokens"}},
		{"aborted", [][2]string{
			{"item/completed", `{"threadId":"th","turnId":"tu","item":{"type":"agentMessage","id":"i","text":"partial"}}`},
		}, "interrupted", "", &providers.TurnResult{Verdict: providers.VerdictAborted}},
		{"unknown end state", nil, "inProgress", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := New(Config{})
			defer a.Close()
			for _, m := range c.msgs {
				a.observeTurn(m[0], "th", "tu", json.RawMessage(m[1]))
			}
			a.mu.Lock()
			got := a.thread("th").endTurn("tu", c.status, c.errText)
			a.mu.Unlock()
			if !reflect.DeepEqual(got, c.want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(c.want)
				t.Fatalf("turn = %s, want %s", g, w)
			}
		})
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }
