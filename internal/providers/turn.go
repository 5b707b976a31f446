package providers

import (
	"fmt"
	"strings"
)

// Verdict says how a finished turn ended, from what the adapter observed
// (spec/records.yaml turnVerdict). A receipt's status says that the turn
// ended; the verdict says how.
type Verdict string

// Turn verdicts.
const (
	// VerdictAnswered: a final assistant message was observed. Never given
	// without it.
	VerdictAnswered Verdict = "answered"
	// VerdictEmpty: the turn ended with no assistant output and no tool call.
	VerdictEmpty Verdict = "empty"
	// VerdictFailed: the model or the provider reported an error
	// (TurnResult.Error carries it).
	VerdictFailed Verdict = "failed"
	// VerdictAborted: the turn was cancelled or interrupted.
	VerdictAborted Verdict = "aborted"
	// VerdictTruncated: the provider reported a length or token stop.
	VerdictTruncated Verdict = "truncated"
)

// Verdicts returns every verdict, in the spec's order.
func Verdicts() []Verdict {
	return []Verdict{VerdictAnswered, VerdictEmpty, VerdictFailed, VerdictAborted, VerdictTruncated}
}

// ParseVerdict returns s as a Verdict, or an error naming the known ones.
func ParseVerdict(s string) (Verdict, error) {
	for _, v := range Verdicts() {
		if string(v) == s {
			return v, nil
		}
	}
	names := make([]string, 0, 5)
	for _, v := range Verdicts() {
		names = append(names, string(v))
	}
	return "", fmt.Errorf("unknown verdict %q: one of %s", s, strings.Join(names, ", "))
}

// Usage is what a provider reported a turn cost. A nil field was not
// reported (unknown), never zero.
type Usage struct {
	InputTokens     *int64   `json:"input,omitempty"`
	OutputTokens    *int64   `json:"output,omitempty"`
	CachedTokens    *int64   `json:"cached,omitempty"`
	ReasoningTokens *int64   `json:"reasoning,omitempty"`
	CostUSD         *float64 `json:"costUsd,omitempty"`
}

// Known reports whether the provider reported any figure.
func (u *Usage) Known() bool {
	return u != nil && (u.InputTokens != nil || u.OutputTokens != nil || u.CachedTokens != nil ||
		u.ReasoningTokens != nil || u.CostUSD != nil)
}

// Text renders the reported figures ("in 120 · out 30 · $0.0100"); ""
// when none was reported.
func (u *Usage) Text() string {
	if !u.Known() {
		return ""
	}
	var parts []string
	for _, f := range []struct {
		name string
		v    *int64
	}{{"in", u.InputTokens}, {"out", u.OutputTokens}, {"cached", u.CachedTokens}, {"reasoning", u.ReasoningTokens}} {
		if f.v != nil {
			parts = append(parts, fmt.Sprintf("%s %d", f.name, *f.v))
		}
	}
	if u.CostUSD != nil {
		parts = append(parts, fmt.Sprintf("$%.4f", *u.CostUSD))
	}
	return strings.Join(parts, " · ")
}

// Add adds o's reported figures to u's; a figure stays unknown only while
// neither reported it.
func (u *Usage) Add(o *Usage) {
	if o == nil {
		return
	}
	addInt := func(dst **int64, v *int64) {
		if v == nil {
			return
		}
		if *dst == nil {
			*dst = new(int64)
		}
		**dst += *v
	}
	addInt(&u.InputTokens, o.InputTokens)
	addInt(&u.OutputTokens, o.OutputTokens)
	addInt(&u.CachedTokens, o.CachedTokens)
	addInt(&u.ReasoningTokens, o.ReasoningTokens)
	if o.CostUSD != nil {
		if u.CostUSD == nil {
			u.CostUSD = new(float64)
		}
		*u.CostUSD += *o.CostUSD
	}
}

// Tokens returns a pointer to n, for a figure the provider reported.
func Tokens(n int64) *int64 { return &n }

// TurnResult is what an adapter observed of one finished turn.
type TurnResult struct {
	Verdict Verdict `json:"verdict,omitempty"`
	// Error is the model's or provider's error of a failed turn.
	Error string `json:"error,omitempty"`
	// Usage is nil when the provider reported nothing.
	Usage *Usage `json:"usage,omitempty"`
	// ChangedFiles are the files the turn wrote, as the provider named them.
	ChangedFiles []string `json:"changedFiles,omitempty"`
}

// TurnObservation gathers what an adapter sees of a turn while it runs and
// derives the verdict when it ends. The zero value is ready; it is not safe
// for concurrent use (an adapter holds it under its own lock).
type TurnObservation struct {
	// AssistantText is set once assistant output was observed.
	AssistantText bool
	// ToolCall is set once a tool call was observed.
	ToolCall bool
	// Usage is the latest usage the provider reported for the turn.
	Usage *Usage
	// ChangedFiles are the files the turn wrote, in first-seen order.
	ChangedFiles []string
}

// AddChangedFile records a file the turn wrote (once).
func (t *TurnObservation) AddChangedFile(path string) {
	if path == "" {
		return
	}
	for _, p := range t.ChangedFiles {
		if p == path {
			return
		}
	}
	t.ChangedFiles = append(t.ChangedFiles, path)
}

// End derives the turn's result once it ended: a failure, an abort or a
// truncation as the provider reported it; otherwise answered when
// assistant output was observed, empty when neither output nor a tool call
// was, and nil (no verdict) for a turn of tool calls alone that ended
// without a final message — answered needs the message observed.
func (t *TurnObservation) End(v Verdict, errText string) *TurnResult {
	switch v {
	case "":
		switch {
		case t.AssistantText:
			v = VerdictAnswered
		case !t.ToolCall:
			v = VerdictEmpty
		}
	}
	r := &TurnResult{Verdict: v, Error: errText, ChangedFiles: t.ChangedFiles}
	if t.Usage.Known() {
		r.Usage = t.Usage
	}
	if v == "" && r.Usage == nil && len(r.ChangedFiles) == 0 {
		return nil
	}
	return r
}
