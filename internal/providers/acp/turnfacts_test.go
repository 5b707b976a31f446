package acp

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
)

// TestTurnBookVerdicts derives each verdict from a prompt's session/update
// notifications and its answer, with the answer's usage and the turn's
// share of the session's cumulative cost.
func TestTurnBookVerdicts(t *testing.T) {
	chunk := `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}`
	cost := func(a string) string {
		return `{"sessionUpdate":"usage_update","used":10,"size":100,"cost":{"amount":` + a + `,"currency":"USD"}}`
	}
	usage := `"usage":{"inputTokens":12,"outputTokens":7,"cachedReadTokens":3,"totalTokens":22}`
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		name    string
		updates [][2]string // kind, update
		stop    string
		result  string
		rpcErr  string
		lost    bool
		want    *providers.TurnResult
	}{
		{"answered", [][2]string{{"agent_message_chunk", chunk}, {"usage_update", cost("0.75")}}, "end_turn", `{"stopReason":"end_turn",` + usage + `}`, "", false,
			&providers.TurnResult{Verdict: providers.VerdictAnswered, Usage: &providers.Usage{InputTokens: providers.Tokens(12), OutputTokens: providers.Tokens(7),
				CachedTokens: providers.Tokens(3), CostUSD: f(0.5)}}},
		{"empty, no usage reported", nil, "end_turn", `{"stopReason":"end_turn"}`, "", false, &providers.TurnResult{Verdict: providers.VerdictEmpty}},
		{"tool call only: no verdict", [][2]string{{"tool_call", `{"sessionUpdate":"tool_call","toolCallId":"c"}`}}, "end_turn", `{"stopReason":"end_turn"}`, "", false, nil},
		{"truncated", [][2]string{{"agent_message_chunk", chunk}}, "max_tokens", `{"stopReason":"max_tokens"}`, "", false,
			&providers.TurnResult{Verdict: providers.VerdictTruncated, Error: "stopReason: max_tokens"}},
		{"aborted", nil, "cancelled", `{"stopReason":"cancelled"}`, "", false, &providers.TurnResult{Verdict: providers.VerdictAborted}},
		{"failed", nil, "", ``, "Internal error: model said no", false, &providers.TurnResult{Verdict: providers.VerdictFailed, Error: "Internal error: model said no"}},
		{"output limit error", nil, "", ``, "API Error: exceeded the output token maximum", false,
			&providers.TurnResult{Verdict: providers.VerdictTruncated, Error: "API Error: exceeded the output token maximum"}},
		{"codex-acp output limit error", nil, "", ``, "Internal error", false,
			&providers.TurnResult{Verdict: providers.VerdictTruncated, Error: "Internal error"}},
		{"lost: unknown", [][2]string{{"agent_message_chunk", chunk}}, "", ``, "", true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newTurnBook()
			b.observe("s", "usage_update", json.RawMessage(cost("0.25")), "") // before the turn
			for _, u := range c.updates {
				b.observe("s", u[0], json.RawMessage(u[1]), "t1")
			}
			turn := &Turn{ID: "t1", SessionID: "s", StopReason: c.stop, Result: json.RawMessage(c.result)}
			switch c.name {
			case "output limit error":
				turn.Err = &RPCError{Code: -32603, Message: c.rpcErr, Data: json.RawMessage(`{"errorKind":"max_output_tokens"}`)}
			case "codex-acp output limit error": // codex-acp 0.16.0's words
				turn.Err = &RPCError{Code: -32603, Message: c.rpcErr, Data: json.RawMessage(
					`{"message":"stream disconnected before completion: Incomplete response returned, reason: max_output_tokens","codex_error_info":"other"}`)}
			}
			got := b.end(turn, c.rpcErr, c.lost, nil)
			if !reflect.DeepEqual(got, c.want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(c.want)
				t.Fatalf("turn = %s, want %s", g, w)
			}
		})
	}
}
