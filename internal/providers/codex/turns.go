package codex

import (
	"context"
	"fmt"
	"strings"

	"github.com/agent-interop/runtime/internal/providers"
)

var (
	_ providers.TurnLookup       = (*Adapter)(nil)
	_ providers.LivenessReporter = (*Adapter)(nil)
)

// Liveness implements providers.LivenessReporter from what this adapter
// holds: an approval request not answered yet, a turn running on a live
// connection, the connection lost, or the thread idle since it was last
// heard of.
func (a *Adapter) Liveness(threadID string) providers.Liveness {
	a.mu.Lock()
	defer a.mu.Unlock()
	th := a.threads[threadID]
	for _, p := range a.perms {
		if p.req.NativeID == threadID && !p.replied && !p.gen.dead {
			at := p.req.RequestedAt
			return providers.Liveness{State: providers.LiveWaitingOnApproval, ObservedAt: &at,
				Reason: "approval request " + p.req.RequestID + " waits for respond_to_permission"}
		}
	}
	if th == nil {
		return providers.Liveness{State: providers.LiveUnknown}
	}
	seen := th.seen
	switch {
	case th.activeTurn != "" && th.turnGen != nil && !th.turnGen.dead:
		return providers.Liveness{State: providers.LiveWorking, ObservedAt: &seen, Reason: "turn " + th.activeTurn + " is running"}
	case a.gen == nil && a.last != nil && a.last.dead && !a.last.closing:
		at := a.last.diedAt
		return providers.Liveness{State: providers.LiveDead, ObservedAt: &at, Reason: a.last.why}
	case seen.IsZero():
		return providers.Liveness{State: providers.LiveUnknown}
	}
	return providers.Liveness{State: providers.LiveIdle, ObservedAt: &seen}
}

// historyTurn is one turn of thread/read with includeTurns.
type historyTurn struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
	StartedAt *int64 `json:"startedAt"`
	Items     []struct {
		Type     string `json:"type"`
		ClientID string `json:"clientId"`
		Content  []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"items"`
}

// LookupTurn implements providers.TurnLookup with thread/read
// (includeTurns): the turn is found by its id when the previous process
// recorded one, else by the clientUserMessageId Send passed (the operation
// id), else by the prompt's text hash among turns started after the send.
// A completed turn is completed; a failed or interrupted one rejected; one
// still marked in progress ran on an app-server that is gone (codex keeps
// no turn running without its process), so its result is not observed.
func (a *Adapter) LookupTurn(ctx context.Context, q providers.TurnQuery) (providers.TurnRecord, error) {
	rec := providers.TurnRecord{Source: "codex thread/read"}
	g, err := a.ensure(ctx)
	if err != nil {
		return rec, err
	}
	var res struct {
		Thread struct {
			Turns []historyTurn `json:"turns"`
		} `json:"thread"`
	}
	if err := a.call(ctx, g, "thread/read", map[string]any{"threadId": q.NativeID, "includeTurns": true}, &res); err != nil {
		if isUnknownThread(err) {
			return rec, nil
		}
		return rec, fmt.Errorf("thread/read %s: %w", q.NativeID, err)
	}
	t := findTurn(res.Thread.Turns, q)
	if t == nil {
		return rec, nil
	}
	rec.Found, rec.NativeTurnID = true, t.ID
	a.mu.Lock()
	running := false
	if th := a.threads[q.NativeID]; th != nil && th.activeTurn == t.ID && th.turnGen != nil && !th.turnGen.dead {
		running = true
	}
	a.mu.Unlock()
	switch t.Status {
	case "completed":
		rec.Status, rec.Reason = providers.StatusCompleted, "turn "+t.ID+" completed"
	case "failed":
		rec.Status, rec.Reason = providers.StatusRejected, "turn failed"
		if t.Error != nil && t.Error.Message != "" {
			rec.Reason = t.Error.Message
		}
	case "interrupted":
		rec.Status, rec.Reason = providers.StatusRejected, "turn interrupted"
	default:
		if running {
			rec.Following, rec.Ref = true, t.ID
			rec.Reason = "turn " + t.ID + " runs on this runtime's app-server"
			break
		}
		rec.Reason = fmt.Sprintf("turn %s is recorded as %s, and the runtime process whose app-server ran it is gone, so its result is not observed", t.ID, t.Status)
	}
	return rec, nil
}

func findTurn(turns []historyTurn, q providers.TurnQuery) *historyTurn {
	for i := range turns {
		if id := turns[i].ID; id != "" && (id == q.NativeTurnID || id == q.Ref) {
			return &turns[i]
		}
	}
	for i := range turns {
		for _, it := range turns[i].Items {
			if it.Type == "userMessage" && q.CorrelationID != "" && it.ClientID == q.CorrelationID {
				return &turns[i]
			}
		}
	}
	if q.TextSHA256 == "" {
		return nil
	}
	after := q.SentAfter.Unix() - 2
	for i := range turns {
		t := &turns[i]
		if t.StartedAt != nil && *t.StartedAt < after {
			continue
		}
		for _, it := range t.Items {
			if it.Type != "userMessage" {
				continue
			}
			var text strings.Builder
			for _, c := range it.Content {
				if c.Type == "text" {
					text.WriteString(c.Text)
				}
			}
			if q.Matches(text.String()) {
				return t
			}
		}
	}
	return nil
}
