package acp

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"

	"github.com/agent-interop/runtime/internal/providers"
)

// maxFollowedTurns bounds the turns whose facts the book keeps at once (a
// turn's facts are dropped when its outcome is reported).
const maxFollowedTurns = 256

// turnBook gathers what the adapter observes of each running prompt from
// its session/update notifications: assistant output (agent_message_chunk),
// tool calls, and the session's cumulative cost (usage_update); the
// prompt's answer adds its stop reason and its usage.
type turnBook struct {
	mu    sync.Mutex
	turns map[string]*acpTurnFacts
	// cost is each session's latest cumulative cost in USD (usage_update),
	// the base a turn's cost is measured from.
	cost map[string]float64
}

type acpTurnFacts struct {
	obs providers.TurnObservation
	// costBase is the session's cumulative cost before the turn; costNow
	// the latest the turn saw (nil: no usage_update with a USD cost).
	costBase, costNow *float64
}

func newTurnBook() *turnBook {
	return &turnBook{turns: map[string]*acpTurnFacts{}, cost: map[string]float64{}}
}

// observe records one session/update of the turn it arrived in.
func (b *turnBook) observe(sessionID, kind string, update json.RawMessage, turn string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var f *acpTurnFacts
	if turn != "" {
		f = b.turns[turn]
		if f == nil {
			if len(b.turns) >= maxFollowedTurns {
				b.turns = map[string]*acpTurnFacts{}
			}
			f = &acpTurnFacts{}
			if c, ok := b.cost[sessionID]; ok {
				f.costBase = &c
			}
			b.turns[turn] = f
		}
	}
	switch kind {
	case "agent_message_chunk":
		var u struct {
			Content struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		if f != nil && json.Unmarshal(update, &u) == nil && (u.Content.Type != "text" || strings.TrimSpace(u.Content.Text) != "") {
			f.obs.AssistantText = true
		}
	case "tool_call":
		if f != nil {
			f.obs.ToolCall = true
		}
	case "usage_update":
		var u struct {
			Cost *struct {
				Amount   float64 `json:"amount"`
				Currency string  `json:"currency"`
			} `json:"cost"`
		}
		if json.Unmarshal(update, &u) != nil || u.Cost == nil || !strings.EqualFold(u.Cost.Currency, "USD") {
			return
		}
		if f != nil {
			c := u.Cost.Amount
			f.costNow = &c
		}
		if _, ok := b.cost[sessionID]; !ok && len(b.cost) >= maxFollowedTurns {
			b.cost = map[string]float64{}
		}
		b.cost[sessionID] = u.Cost.Amount
	}
}

// end removes the turn's facts and derives its result from them, the
// prompt's stop reason and usage, or the error it ended with; changed are
// the files its completed tool calls wrote. nil when the outcome is not
// known (the connection was lost).
func (b *turnBook) end(t *Turn, rpcErr string, lost bool, changed []string) *providers.TurnResult {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	f := b.turns[t.ID]
	delete(b.turns, t.ID)
	b.mu.Unlock()
	if lost {
		return nil
	}
	if f == nil {
		f = &acpTurnFacts{}
	}
	for _, p := range changed {
		f.obs.AddChangedFile(p)
	}
	var res struct {
		Usage *struct {
			InputTokens      *int64 `json:"inputTokens"`
			OutputTokens     *int64 `json:"outputTokens"`
			ThoughtTokens    *int64 `json:"thoughtTokens"`
			CachedReadTokens *int64 `json:"cachedReadTokens"`
		} `json:"usage"`
	}
	_ = json.Unmarshal(t.Result, &res)
	u := &providers.Usage{}
	if res.Usage != nil {
		u.InputTokens, u.OutputTokens = res.Usage.InputTokens, res.Usage.OutputTokens
		u.ReasoningTokens, u.CachedTokens = res.Usage.ThoughtTokens, res.Usage.CachedReadTokens
	}
	if f.costNow != nil {
		c := *f.costNow
		if f.costBase != nil {
			c -= *f.costBase
		}
		u.CostUSD = &c
	}
	f.obs.Usage = u
	if rpcErr != "" {
		// claude-agent-acp ends a turn whose every resumption hit the
		// output limit with an error of errorKind max_output_tokens;
		// codex-acp with Codex's own "Incomplete response returned,
		// reason: max_output_tokens" as the error's message.
		var re *RPCError
		if errors.As(t.Err, &re) {
			var d struct {
				ErrorKind string `json:"errorKind"`
				Message   string `json:"message"`
			}
			if json.Unmarshal(re.Data, &d) == nil && (d.ErrorKind == "max_output_tokens" ||
				strings.Contains(d.Message, "reason: max_output_tokens")) {
				return f.obs.End(providers.VerdictTruncated, rpcErr)
			}
		}
		return f.obs.End(providers.VerdictFailed, rpcErr)
	}
	switch t.StopReason {
	case "end_turn":
		return f.obs.End("", "")
	case "max_tokens", "max_turn_requests":
		return f.obs.End(providers.VerdictTruncated, "stopReason: "+t.StopReason)
	case "cancelled":
		return f.obs.End(providers.VerdictAborted, "")
	case "refusal":
		return f.obs.End(providers.VerdictFailed, "the agent refused the prompt (stopReason: refusal)")
	}
	return f.obs.End("", "") // an unknown stop reason: judged by what was observed
}
