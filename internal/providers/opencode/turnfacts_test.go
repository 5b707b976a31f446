package opencode

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
)

// TestTurnFactsVerdicts derives each verdict from the stored messages of a
// turn as OpenCode returns them, with the tokens and cost summed over the
// turn's assistant messages.
func TestTurnFactsVerdicts(t *testing.T) {
	msg := func(id, finish, errJSON, parts string, tokens string) string {
		if errJSON == "" {
			errJSON = "null"
		}
		return `{"info":{"id":"` + id + `","role":"assistant","parentID":"u1","finish":"` + finish + `","error":` + errJSON +
			`,"tokens":` + tokens + `,"cost":0.5},"parts":[` + parts + `]}`
	}
	tok := `{"input":10,"output":4,"reasoning":1,"cache":{"read":2,"write":0}}`
	cases := []struct {
		name string
		msgs string
		want *providers.TurnResult
	}{
		{"answered after a tool step, usage summed", `[` +
			msg("a1", "tool-calls", "", `{"type":"tool","tool":"write"},{"type":"patch","files":["/w/a.go"]}`, tok) + `,` +
			msg("a2", "stop", "", `{"type":"text","text":"done"}`, tok) + `]`,
			&providers.TurnResult{Verdict: providers.VerdictAnswered, ChangedFiles: []string{"/w/a.go"}, Usage: &providers.Usage{
				InputTokens: providers.Tokens(20), OutputTokens: providers.Tokens(8), ReasoningTokens: providers.Tokens(2), CachedTokens: providers.Tokens(4), CostUSD: ptr(1.0)}}},
		{"empty", `[` + msg("a1", "stop", "", `{"type":"text","text":"  "}`, tok) + `]`,
			&providers.TurnResult{Verdict: providers.VerdictEmpty, Usage: &providers.Usage{
				InputTokens: providers.Tokens(10), OutputTokens: providers.Tokens(4), ReasoningTokens: providers.Tokens(1), CachedTokens: providers.Tokens(2), CostUSD: ptr(0.5)}}},
		{"truncated by finish", `[` + msg("a1", "length", "", `{"type":"text","text":"cut"}`, `null`) + `]`,
			&providers.TurnResult{Verdict: providers.VerdictTruncated, Usage: &providers.Usage{CostUSD: ptr(0.5)}}},
		{"failed", `[` + msg("a1", "", `{"name":"APIError","data":{"message":"bad request"}}`, ``, `null`) + `]`,
			&providers.TurnResult{Verdict: providers.VerdictFailed, Error: "APIError: bad request", Usage: &providers.Usage{CostUSD: ptr(0.5)}}},
		{"zero counts and cost are unreported", `[` + strings.ReplaceAll(msg("a1", "", `{"name":"APIError","data":{"message":"bad request"}}`, ``,
			`{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}}`), `"cost":0.5`, `"cost":0`) + `]`,
			&providers.TurnResult{Verdict: providers.VerdictFailed, Error: "APIError: bad request"}},
		{"aborted", `[` + msg("a1", "", `{"name":"MessageAbortedError","data":{"message":"aborted"}}`, ``, `null`) + `]`,
			&providers.TurnResult{Verdict: providers.VerdictAborted, Usage: &providers.Usage{CostUSD: ptr(0.5)}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var msgs []ocTurnMessage
			if err := json.Unmarshal([]byte(c.msgs), &msgs); err != nil {
				t.Fatal(err)
			}
			last := msgs[len(msgs)-1]
			got := factsFromMessages(msgs, "u1").result(last.Info.Finish, last.Info.Error)
			if !reflect.DeepEqual(got, c.want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(c.want)
				t.Fatalf("turn = %s, want %s", g, w)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
