package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
)

var (
	_ providers.TurnLookup       = (*Adapter)(nil)
	_ providers.LivenessReporter = (*Adapter)(nil)
)

// agentDeath is how the last agent process ended.
type agentDeath struct {
	at       time.Time
	reason   string
	sessions map[string]bool // sessions it had open
}

// observe is the client's Observe hook: tool calls for diffs, and the
// replay of a session being looked up.
func (a *Adapter) observe(sessionID, kind string, update json.RawMessage, turn string) {
	a.diffs.observe(sessionID, kind, update, turn, a.cfg.Clock.Now())
	a.turnFacts.observe(sessionID, kind, update, turn)
	a.replayMu.Lock()
	r := a.replays[sessionID]
	a.replayMu.Unlock()
	if r != nil {
		r.add(kind, update)
	}
}

// agentEnded records the end of an agent process and says why it ended.
func (a *Adapter) agentEnded(c *Client) string {
	open := map[string]bool{}
	for _, v := range c.Sessions() {
		open[v.ID] = true
	}
	reason := fmt.Sprintf("%s (pid %d) exited", a.label(), c.PID())
	if err := c.conn.Err(); err != nil {
		reason += ": " + err.Error()
	}
	a.mu.Lock()
	closed := a.closed
	if !closed {
		a.death = &agentDeath{at: a.cfg.Clock.Now(), reason: reason, sessions: open}
	}
	a.mu.Unlock()
	return reason
}

// Liveness implements providers.LivenessReporter from the running agent:
// a permission request held for the session, a prompt in flight, the agent
// process gone, or the session open and idle.
func (a *Adapter) Liveness(sessionID string) providers.Liveness {
	a.mu.Lock()
	c, death := a.client, a.death
	a.mu.Unlock()
	alive := c != nil
	if alive {
		select {
		case <-c.Done():
			alive = false
		default:
		}
	}
	if !alive {
		if death != nil && death.sessions[sessionID] {
			at := death.at
			return providers.Liveness{State: providers.LiveDead, ObservedAt: &at, Reason: death.reason}
		}
		return providers.Liveness{State: providers.LiveUnknown}
	}
	for _, p := range c.Pending() {
		if p.NativeID == sessionID {
			at := p.RequestedAt
			return providers.Liveness{State: providers.LiveWaitingOnApproval, ObservedAt: &at,
				Reason: "request " + p.RequestID + " waits for respond_to_permission"}
		}
	}
	v, ok := c.Session(sessionID)
	if !ok {
		if death != nil && death.sessions[sessionID] {
			at := death.at
			return providers.Liveness{State: providers.LiveDead, ObservedAt: &at, Reason: death.reason + "; the session is not open in the agent started since"}
		}
		return providers.Liveness{State: providers.LiveUnknown}
	}
	at := v.UpdatedAt
	if at.IsZero() {
		at = v.OpenedAt
	}
	if v.Busy {
		return providers.Liveness{State: providers.LiveWorking, ObservedAt: &at, Reason: "a prompt is running"}
	}
	return providers.Liveness{State: providers.LiveIdle, ObservedAt: &at}
}

// replay collects the user messages (and whether a reply followed each)
// of a session/load's history replay.
type replay struct {
	mu      sync.Mutex
	prompts []replayedPrompt
	inUser  bool
}

type replayedPrompt struct {
	text    strings.Builder
	replied bool // agent messages, thoughts or tool calls followed it
}

func (r *replay) add(kind string, update json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch kind {
	case "user_message_chunk":
		var u struct {
			Content struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		_ = json.Unmarshal(update, &u)
		if !r.inUser {
			r.prompts = append(r.prompts, replayedPrompt{})
			r.inUser = true
		}
		if u.Content.Type == "text" {
			r.prompts[len(r.prompts)-1].text.WriteString(u.Content.Text)
		}
	case "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update":
		r.inUser = false
		if n := len(r.prompts); n > 0 {
			r.prompts[n-1].replied = true
		}
	default:
		r.inUser = false
	}
}

// LookupTurn implements providers.TurnLookup with session/load: the agent
// replays the session's history, and the prompt is found by its text hash.
// ACP's replay carries no stop reason, so a found prompt is never recorded
// completed from it: the record says the prompt reached the agent (and
// whether a reply followed), and the operation stays delivery_unknown.
func (a *Adapter) LookupTurn(ctx context.Context, q providers.TurnQuery) (providers.TurnRecord, error) {
	rec := providers.TurnRecord{Source: string(a.cfg.Provider) + " session/load history replay"}
	c, err := a.Client(ctx)
	if err != nil {
		return rec, err
	}
	init := c.Init()
	if !init.AgentCapabilities.LoadSession {
		return rec, &providers.UnsupportedError{Provider: a.cfg.Provider, Operation: "history lookup",
			Reason: "the agent does not advertise session/load, so its history cannot be replayed"}
	}
	if _, open := c.Session(q.NativeID); open {
		if t := c.Running(q.NativeID); t != nil && (t.ID == q.Ref || t.ID == q.NativeTurnID) {
			rec.Found, rec.Following, rec.Ref, rec.NativeTurnID = true, true, t.ID, t.ID
			rec.Reason = "the prompt runs in this runtime's agent"
			return rec, nil
		}
		return rec, errors.New("the session is already open in this runtime's agent, so its history is not replayed again")
	}
	r := &replay{}
	a.replayMu.Lock()
	a.replays[q.NativeID] = r
	a.replayMu.Unlock()
	defer func() {
		a.replayMu.Lock()
		delete(a.replays, q.NativeID)
		a.replayMu.Unlock()
	}()
	if err := a.open(ctx, c, q.NativeID); err != nil {
		var ns *providers.NotSentError
		if errors.As(err, &ns) {
			return rec, ns.Err
		}
		return rec, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.prompts) - 1; i >= 0; i-- {
		p := &r.prompts[i]
		if q.Matches(p.text.String()) {
			rec.Found = true
			if p.replied {
				rec.Reason = "the replay shows the prompt and a reply, but ACP history carries no stop reason, so whether the turn completed is not known"
			} else {
				rec.Reason = "the replay shows the prompt without a reply"
			}
			return rec, nil
		}
	}
	return rec, nil
}
