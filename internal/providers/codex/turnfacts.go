package codex

import (
	"encoding/json"
	"strings"

	"github.com/agent-interop/runtime/internal/providers"
)

// maxObservedTurns bounds the turns whose facts a thread keeps while they
// run (a turn's facts are dropped when it completes).
const maxObservedTurns = 16

// turnFacts is what the adapter observed of one running turn: its items
// (agent messages, tool calls, file changes) and its token usage.
type turnFacts struct {
	obs providers.TurnObservation
	// base is the thread's token total before the turn's first model
	// request (total minus last of the turn's first usage report); the
	// turn's usage is the latest total minus it, so a repeated report
	// never counts twice.
	base, total *breakdown
}

// breakdown is codex's TokenUsageBreakdown.
type breakdown struct {
	InputTokens           int64 `json:"inputTokens"`
	CachedInputTokens     int64 `json:"cachedInputTokens"`
	OutputTokens          int64 `json:"outputTokens"`
	ReasoningOutputTokens int64 `json:"reasoningOutputTokens"`
}

func (b breakdown) minus(o breakdown) breakdown {
	return breakdown{b.InputTokens - o.InputTokens, b.CachedInputTokens - o.CachedInputTokens,
		b.OutputTokens - o.OutputTokens, b.ReasoningOutputTokens - o.ReasoningOutputTokens}
}

// facts returns the turn's facts, starting them; caller holds a.mu.
func (th *thread) facts(turnID string) *turnFacts {
	if th.turnFacts == nil {
		th.turnFacts = map[string]*turnFacts{}
	}
	f := th.turnFacts[turnID]
	if f == nil {
		if len(th.turnFacts) >= maxObservedTurns {
			th.turnFacts = map[string]*turnFacts{}
		}
		f = &turnFacts{}
		th.turnFacts[turnID] = f
	}
	return f
}

// observeTurn records what an item/completed or thread/tokenUsage/updated
// notification says of its turn.
func (a *Adapter) observeTurn(method, threadID, turnID string, params json.RawMessage) {
	if threadID == "" || turnID == "" {
		return
	}
	switch method {
	case "item/completed":
		var p struct {
			Item struct {
				Type    string `json:"type"`
				Text    string `json:"text"`
				Changes []struct {
					Path string `json:"path"`
				} `json:"changes"`
			} `json:"item"`
		}
		if json.Unmarshal(params, &p) != nil {
			return
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		f := a.thread(threadID).facts(turnID)
		switch p.Item.Type {
		case "agentMessage":
			if strings.TrimSpace(p.Item.Text) != "" {
				f.obs.AssistantText = true
			}
		case "fileChange":
			f.obs.ToolCall = true
			for _, c := range p.Item.Changes {
				f.obs.AddChangedFile(c.Path)
			}
		case "commandExecution", "mcpToolCall", "dynamicToolCall", "collabAgentToolCall", "webSearch", "imageGeneration":
			f.obs.ToolCall = true
		}
	case "thread/tokenUsage/updated":
		var p struct {
			TokenUsage struct {
				Last  *breakdown `json:"last"`
				Total *breakdown `json:"total"`
			} `json:"tokenUsage"`
		}
		if json.Unmarshal(params, &p) != nil || p.TokenUsage.Total == nil || p.TokenUsage.Last == nil {
			return
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		f := a.thread(threadID).facts(turnID)
		if f.base == nil {
			b := p.TokenUsage.Total.minus(*p.TokenUsage.Last)
			f.base = &b
		}
		f.total = p.TokenUsage.Total
	}
}

// endTurn removes the turn's facts and derives its result from them and
// from turn/completed's status and error; caller holds a.mu.
func (th *thread) endTurn(turnID, status, errText string) *providers.TurnResult {
	f := th.turnFacts[turnID]
	delete(th.turnFacts, turnID)
	if f == nil {
		f = &turnFacts{}
	}
	if f.total != nil && f.base != nil {
		u := f.total.minus(*f.base)
		f.obs.Usage = &providers.Usage{
			InputTokens: providers.Tokens(u.InputTokens), OutputTokens: providers.Tokens(u.OutputTokens),
			CachedTokens: providers.Tokens(u.CachedInputTokens), ReasoningTokens: providers.Tokens(u.ReasoningOutputTokens),
		}
	}
	switch status {
	case "completed":
		return f.obs.End("", "")
	case "interrupted":
		return f.obs.End(providers.VerdictAborted, "")
	case "failed":
		if errText == "" {
			errText = "turn failed"
		}
		// Codex reports a Responses API length stop (an incomplete
		// response for max_output_tokens) as a failed turn.
		if strings.Contains(errText, "max_output_tokens") {
			return f.obs.End(providers.VerdictTruncated, errText)
		}
		return f.obs.End(providers.VerdictFailed, errText)
	}
	return nil
}
