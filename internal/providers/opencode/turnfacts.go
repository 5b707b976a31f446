package opencode

import (
	"encoding/json"
	"strings"

	"github.com/agent-interop/runtime/internal/providers"
)

// This file derives a turn's verdict, usage and changed files from what
// OpenCode shows of the assistant messages answering the prompt: their
// parts (text, tool calls, patches), their finish reason and error, and
// the tokens and cost each message reports.

// ocTokens is an assistant message's token count.
type ocTokens struct {
	Input     *int64 `json:"input"`
	Output    *int64 `json:"output"`
	Reasoning *int64 `json:"reasoning"`
	Cache     *struct {
		Read *int64 `json:"read"`
	} `json:"cache"`
}

func (t *ocTokens) zero() bool {
	isZero := func(p *int64) bool { return p == nil || *p == 0 }
	return isZero(t.Input) && isZero(t.Output) && isZero(t.Reasoning) && (t.Cache == nil || isZero(t.Cache.Read))
}

// ocPart is the part of a message the turn facts read.
type ocPart struct {
	Type  string   `json:"type"`
	Text  string   `json:"text"`
	Files []string `json:"files"` // patch
}

// turnFacts is what was observed of one followed prompt's turn.
type turnFacts struct {
	obs providers.TurnObservation
	// usage is each assistant message's latest report (a message is
	// updated many times; the turn's usage is the sum over messages).
	usage map[string]*providers.Usage
}

// noteMessage records an assistant message's reported tokens and cost.
func (f *turnFacts) noteMessage(id string, tokens *ocTokens, cost *float64) {
	// OpenCode creates an assistant message with every count at 0 and
	// fills them when a step finishes, and prices a model it has no price
	// for at 0: a zero is "not reported", never a figure.
	if cost != nil && *cost == 0 {
		cost = nil
	}
	if tokens != nil && tokens.zero() {
		tokens = nil
	}
	if id == "" || (tokens == nil && cost == nil) {
		return
	}
	u := &providers.Usage{CostUSD: cost}
	if tokens != nil {
		u.InputTokens, u.OutputTokens, u.ReasoningTokens = tokens.Input, tokens.Output, tokens.Reasoning
		if tokens.Cache != nil {
			u.CachedTokens = tokens.Cache.Read
		}
	}
	if f.usage == nil {
		f.usage = map[string]*providers.Usage{}
	}
	if len(f.usage) < maxAssistantMemory {
		f.usage[id] = u
	}
}

// notePart records an assistant part: text is output, a tool call is a
// tool call, a patch names the files the turn wrote.
func (f *turnFacts) notePart(p ocPart) {
	switch p.Type {
	case "text":
		if strings.TrimSpace(p.Text) != "" {
			f.obs.AssistantText = true
		}
	case "tool":
		f.obs.ToolCall = true
	case "patch":
		for _, file := range p.Files {
			f.obs.AddChangedFile(file)
		}
	}
}

// result derives the turn's result when it ended with the given final
// assistant message's finish reason and error.
func (f *turnFacts) result(finish string, errRaw json.RawMessage) *providers.TurnResult {
	var total providers.Usage
	for _, u := range f.usage {
		total.Add(u)
	}
	f.obs.Usage = &total
	if len(errRaw) > 0 && string(errRaw) != "null" {
		name, _, _ := describeError(errRaw)
		switch name {
		case "MessageAbortedError":
			return f.obs.End(providers.VerdictAborted, "")
		case "MessageOutputLengthError":
			return f.obs.End(providers.VerdictTruncated, errorReason(errRaw))
		}
		return f.obs.End(providers.VerdictFailed, errorReason(errRaw))
	}
	if finish == "length" {
		return f.obs.End(providers.VerdictTruncated, "")
	}
	return f.obs.End("", "")
}

// factsFromMessages rebuilds a turn's facts from the session's stored
// messages (the reconcile path, when the turn's events were missed).
func factsFromMessages(msgs []ocTurnMessage, userMsgID string) *turnFacts {
	f := &turnFacts{}
	for i := range msgs {
		m := &msgs[i]
		if m.Info.Role != "assistant" || m.Info.ParentID != userMsgID {
			continue
		}
		f.noteMessage(m.Info.ID, m.Info.Tokens, m.Info.Cost)
		for _, p := range m.Parts {
			f.notePart(ocPart{Type: p.Type, Text: p.Text, Files: p.Files})
		}
	}
	return f
}
