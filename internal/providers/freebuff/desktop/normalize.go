package desktop

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
	"github.com/agent-interop/runtime/internal/security"
)

// TurnEnd reports that a Desktop thread finished a turn.
type TurnEnd struct {
	ThreadID   string
	Outcome    string // lastTurnOutcome: "closed", "error", …
	FinishedAt int64  // lastTurnFinishedAt, Unix milliseconds
	Error      string
	// Turn is what the normalizer observed of the turn (nil when nothing
	// was: a turn that ended before this connection saw it run).
	Turn *providers.TurnResult
}

// normalizer turns Desktop SSE frames into progress events. The Desktop
// sends `data: <json>` frames of three kinds: {"type":"state","snapshot"},
// {"type":"thread","thread"} and {"type":"agent","threadId","seq","event"}
// whose inner event follows Codebuff's print-mode events (text,
// reasoning_delta, tool_call, tool_result, start, finish, error, …). Frames
// of other shapes that carry a top-level threadId are normalized by their
// type as 0.3.x did.
type normalizer struct {
	clock quartz.Clock

	mu     sync.Mutex
	origin string
	states map[string]*threadState
}

type threadState struct {
	turnState  string
	finishedAt int64
	reasoning  bool   // the last agent event was reasoning
	failed     bool   // the current turn already produced a failed event
	failedText string // that event's error
	agentSeq   int64  // the last agent frame seq seen from this origin
	// What the current turn showed: text, tool calls, the cost its finish
	// frame reported, and whether a stop was asked (stopping, or Stop).
	turn     providers.TurnObservation
	observed bool // a frame of the current turn was seen
	stopped  bool
}

// newTurn forgets the previous turn's observation.
func (st *threadState) newTurn() {
	st.turn, st.observed, st.stopped = providers.TurnObservation{}, false, false
}

// turnResult derives the verdict of a turn that ended with outcome: an
// error is failed, a stop (asked, or an outcome naming one) is aborted,
// otherwise answered or empty from the text and tool calls observed. The
// Desktop reports no token counts; only the finish frame's costUsd.
func (st *threadState) turnResult(outcome, errText string) *providers.TurnResult {
	if !st.observed && outcome != "error" {
		return nil
	}
	var v providers.Verdict
	switch strings.ToLower(outcome) {
	case "error":
		v = providers.VerdictFailed
	case "aborted", "cancelled", "canceled", "interrupted", "stopped":
		v, errText = providers.VerdictAborted, ""
	default:
		errText = ""
		if st.stopped {
			v = providers.VerdictAborted
		}
	}
	return st.turn.End(v, errText)
}

// markStopped records that a stop of id's running turn was asked (or,
// with false, refused); it reports whether a running turn was marked.
func (n *normalizer) markStopped(id string, stopped bool) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if st, ok := n.states[id]; ok && st.turnState == "running" {
		st.stopped = stopped
		return true
	}
	return false
}

// setOrigin is called on every (re)connect with the orchestrator's
// identity (base URL and launch id). The Desktop replays recent frames on
// connect; agent frames already seen from the same origin are skipped by
// their per-thread seq. A new origin (a restarted app numbers from 1 again)
// forgets the seen sequences.
func (n *normalizer) setOrigin(origin string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if origin == n.origin {
		return
	}
	n.origin = origin
	for _, st := range n.states {
		st.agentSeq = 0
	}
}

func newNormalizer(c quartz.Clock) *normalizer {
	return &normalizer{clock: c, states: map[string]*threadState{}}
}

func (n *normalizer) state(id string) (*threadState, bool) {
	s, ok := n.states[id]
	if !ok {
		s = &threadState{}
		n.states[id] = s
	}
	return s, ok
}

// frame normalizes one SSE frame into progress events and the turn ends it
// reports. Malformed frames yield nothing. Callbacks for the turn ends are
// the caller's business, outside the normalizer's lock.
func (n *normalizer) frame(eventName string, data []byte) ([]core.ProgressEvent, []TurnEnd) {
	v, err := core.DecodeJSON(data)
	if err != nil {
		return nil, nil
	}
	m := core.AsMap(v)
	if m == nil {
		return nil, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	var ends []TurnEnd
	evs := n.frameLocked(eventName, m, &ends)
	return evs, ends
}

func (n *normalizer) frameLocked(eventName string, m map[string]any, ends *[]TurnEnd) []core.ProgressEvent {
	typ := strings.ToLower(core.Str(m["type"]))
	if eventName != "" && eventName != "message" {
		typ = strings.ToLower(eventName)
	}
	switch typ {
	case "state":
		var out []core.ProgressEvent
		snap := core.AsMap(m["snapshot"])
		for _, t := range threadsOf(snap) {
			out = append(out, n.thread(t, ends)...)
		}
		return out
	case "thread":
		return n.thread(core.AsMap(m["thread"]), ends)
	case "agent":
		id := core.FirstStr(m, "threadId", "thread_id")
		if seq, ok := core.Num(m["seq"]); ok && security.ValidateID(id) == nil {
			st, _ := n.state(id)
			if seq <= st.agentSeq {
				return nil // replayed on reconnect
			}
			st.agentSeq = seq
		}
		return n.agent(id, core.AsMap(m["event"]))
	default:
		id := core.FirstStr(m, "threadId", "thread_id", "thread")
		if id == "" {
			return nil
		}
		return n.agent(id, m)
	}
}

// threadsOf collects the thread objects of a state snapshot.
func threadsOf(snap map[string]any) []map[string]any {
	var out []map[string]any
	add := func(list any) {
		arr, _ := list.([]any)
		for _, t := range arr {
			if tm := core.AsMap(t); tm != nil {
				out = append(out, tm)
			}
		}
	}
	add(snap["threads"])
	if p := core.AsMap(snap["project"]); p != nil {
		add(p["threads"])
	}
	if ps, ok := snap["projects"].([]any); ok {
		for _, p := range ps {
			add(core.AsMap(p)["threads"])
		}
	}
	return out
}

// thread turns a thread update into a turn_state event when the turn state
// changed, and reports a finished turn. A turn that ended in error puts the
// error on that turn_state event (so it shows as lastError); failed events
// come from the agent's own error frames only, because the Desktop's
// connect-time snapshot may arrive before the replayed frames of the same
// turn and must not duplicate them.
func (n *normalizer) thread(t map[string]any, ends *[]TurnEnd) []core.ProgressEvent {
	id := core.Str(t["id"])
	if t == nil || security.ValidateID(id) != nil {
		return nil
	}
	st, seen := n.state(id)
	ev := core.ProgressEvent{ThreadID: id, Timestamp: core.ISOTime(n.clock.Now()), Kind: core.KindTurnState}
	emit := false
	if state := core.Str(t["turnState"]); state != "" && state != st.turnState {
		st.turnState, ev.State, emit = state, state, true
		if state == "running" {
			st.failed = false
			st.newTurn()
			st.observed = true
		}
	}
	if stopping, _ := t["stopping"].(bool); stopping && st.turnState == "running" {
		st.stopped = true
	}
	finished, _ := core.Num(t["lastTurnFinishedAt"])
	if finished > st.finishedAt {
		outcome := core.Str(t["lastTurnOutcome"])
		errText := redactText(core.FirstStr(t, "lastError", "error"))
		if errText == "" && st.failed {
			errText = st.failedText
		}
		if outcome == "error" && errText == "" {
			errText = "The Freebuff turn ended with an error"
		}
		if seen && outcome == "error" && !st.failed {
			ev.Error, ev.State, emit = errText, st.turnState, true
		}
		turn := st.turnResult(outcome, errText)
		st.finishedAt, st.failed, st.failedText = finished, false, ""
		st.newTurn()
		*ends = append(*ends, TurnEnd{ThreadID: id, Outcome: outcome, FinishedAt: finished, Error: errText, Turn: turn})
	}
	if !emit {
		return nil
	}
	return []core.ProgressEvent{ev}
}

// agent normalizes one agent event of a thread.
func (n *normalizer) agent(id string, ev map[string]any) []core.ProgressEvent {
	if ev == nil || security.ValidateID(id) != nil {
		return nil
	}
	st, _ := n.state(id)
	typ := strings.ToLower(strings.NewReplacer(" ", "_", "-", "_").Replace(core.FirstStr(ev, "type", "kind", "event")))
	out := core.ProgressEvent{ThreadID: id, Timestamp: core.FirstStr(ev, "timestamp", "createdAt")}
	if out.Timestamp == "" {
		out.Timestamp = core.ISOTime(n.clock.Now())
	}
	if strings.Contains(typ, "reasoning") || strings.Contains(typ, "thinking") {
		// Reasoning text is never kept; a run of reasoning deltas becomes
		// one planning marker.
		if st.reasoning {
			return nil
		}
		st.reasoning = true
		out.Kind, out.Phase = core.KindUnknown, core.PhasePlanning
		return []core.ProgressEvent{out}
	}
	st.reasoning = false
	st.observed = true
	input := core.AsMap(ev["input"])
	if input == nil {
		input = core.AsMap(ev["args"])
	}
	switch typ {
	case "text", "assistant", "assistant_text", "assistant_update", "message":
		out.Kind = core.KindAssistantText
		out.Text = redactText(core.FirstStr(ev, "text", "delta", "content", "message"))
		if strings.TrimSpace(out.Text) != "" {
			st.turn.AssistantText = true
		}
	case "tool_call", "tool_start", "tool", "command":
		out.Kind = core.KindToolStart
		out.Tool = core.Cut(core.FirstStr(ev, "toolName", "tool", "name"), 200)
		out.Command = redactText(core.FirstStr(input, "command", "cmd"))
		if out.Command == "" {
			out.Command = redactText(core.Str(ev["command"]))
		}
		out.Files = filesOf(input, ev)
		out.Phase = toolPhase(out.Tool, out.Command)
		st.turn.ToolCall = true
	case "tool_result", "tool_output":
		out.Kind = core.KindToolOutput
		out.Tool = core.Cut(core.FirstStr(ev, "toolName", "tool", "name"), 200)
		out.Text = redactText(textOf(firstNonNil(ev["output"], ev["result"], ev["text"])))
		out.Phase = toolPhase(out.Tool, "")
	case "file", "file_change":
		out.Kind = core.KindFileChange
		out.Files = filesOf(input, ev)
		out.Phase = core.PhaseEditingFiles
	case "start", "running", "turn_running", "turn_state", "state":
		out.Kind = core.KindTurnState
		out.State = core.FirstStr(ev, "state", "turnState", "status")
		if out.State == "" && typ != "turn_state" && typ != "state" {
			out.State = "running"
		}
	case "finish", "done", "complete", "completed":
		out.Kind, out.Phase = core.KindCompleted, core.PhaseCompleted
		if n, ok := core.AsMap(ev["metrics"])["costUsd"].(json.Number); ok {
			cost, err := n.Float64()
			if err != nil || cost < 0 {
				break
			}
			// The only usage the Desktop reports: no token counts (its
			// context.usedTokens is the context's size, not the turn's).
			st.turn.Usage = &providers.Usage{CostUSD: &cost}
		}
	case "error", "failed":
		st.failed = true
		out.Kind, out.Phase = core.KindFailed, core.PhaseFailed
		out.Error = redactText(errorText(ev))
		if out.Error == "" {
			out.Error = "The Freebuff turn failed"
		}
		st.failedText = out.Error
	case "subagent_start":
		out.Kind = core.KindToolStart
		out.Tool = core.Cut("subagent:"+core.FirstStr(ev, "agentType", "agentId", "name"), 200)
	case "subagent_finish":
		out.Kind = core.KindToolOutput
		out.Tool = core.Cut("subagent:"+core.FirstStr(ev, "agentType", "agentId", "name"), 200)
	default:
		out.Kind = core.KindUnknown
		out.Raw = security.SanitizeFreebuff(ev)
		if t := textOf(ev["text"]); t != "" {
			out.Text = redactText(t)
		}
	}
	return []core.ProgressEvent{out}
}

func firstNonNil(vs ...any) any {
	for _, v := range vs {
		if v != nil {
			return v
		}
	}
	return nil
}

// textOf renders a string or a JSON value as text.
func textOf(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	default:
		b, err := json.Marshal(security.SanitizeFreebuff(t))
		if err != nil {
			return ""
		}
		return string(b)
	}
}

func errorText(ev map[string]any) string {
	switch e := ev["error"].(type) {
	case string:
		return e
	case map[string]any:
		return core.FirstStr(e, "message", "kind")
	}
	return core.FirstStr(ev, "message", "text")
}

// redactText redacts and cuts a text field.
func redactText(s string) string {
	if s == "" {
		return ""
	}
	return core.Cut(security.RedactString(s), maxTextChars)
}

// filesOf collects file paths from a tool input or an event.
func filesOf(maps ...map[string]any) []string {
	var out []string
	add := func(v any) {
		switch t := v.(type) {
		case string:
			if t != "" && len(out) < maxFiles {
				out = append(out, core.Cut(t, maxFileChars))
			}
		case []any:
			for _, x := range t {
				if s, ok := x.(string); ok && s != "" && len(out) < maxFiles {
					out = append(out, core.Cut(s, maxFileChars))
				}
			}
		}
	}
	for _, m := range maps {
		if m == nil {
			continue
		}
		for _, k := range []string{"path", "file", "filePath", "paths", "files"} {
			add(m[k])
		}
	}
	return out
}

// toolPhase maps a Codebuff tool name to a progress phase.
func toolPhase(tool, command string) string {
	t := strings.ToLower(tool)
	switch {
	case strings.Contains(t, "read") || strings.Contains(t, "search") || strings.Contains(t, "find") ||
		strings.Contains(t, "glob") || strings.Contains(t, "list") || strings.Contains(t, "grep"):
		return core.PhaseReadingFiles
	case strings.Contains(t, "write") || strings.Contains(t, "edit") || strings.Contains(t, "replace") || strings.Contains(t, "patch"):
		return core.PhaseEditingFiles
	case strings.Contains(t, "terminal") || t == "shell" || t == "bash" || command != "":
		return core.PhaseRunningTests
	case strings.Contains(t, "plan") || strings.Contains(t, "think"):
		return core.PhasePlanning
	case strings.Contains(t, "review"):
		return core.PhaseReviewing
	case strings.Contains(t, "ask") || strings.Contains(t, "approval") || strings.Contains(t, "input"):
		return core.PhaseWaitingInput
	}
	return ""
}

// finishedAt returns the last observed lastTurnFinishedAt of a thread and
// whether the thread was observed at all.
func (n *normalizer) finishedAt(threadID string) (int64, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if st, ok := n.states[threadID]; ok {
		return st.finishedAt, true
	}
	return 0, false
}
