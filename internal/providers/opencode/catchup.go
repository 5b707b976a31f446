package opencode

import (
	"encoding/json"
	"net/http"

	"github.com/agent-interop/runtime/internal/clockctx"
	"github.com/agent-interop/runtime/internal/providers"
)

// This file is the catch-up of followed prompts from a session's stored
// messages: for outcomes whose events were missed (the stream was down,
// or the prompt's own events were seen before it was attached), and for
// replies adopted from another process.

// ocTurnMessage is one entry of GET /session/:id/message, as reconcile
// reads it.
type ocTurnMessage struct {
	Info struct {
		ID       string          `json:"id"`
		Role     string          `json:"role"`
		ParentID string          `json:"parentID"`
		Finish   string          `json:"finish"`
		Error    json.RawMessage `json:"error"`
		Time     struct {
			Created   int64 `json:"created"`
			Completed int64 `json:"completed"`
		} `json:"time"`
		Tokens *ocTokens `json:"tokens"`
		Cost   *float64  `json:"cost"`
	} `json:"info"`
	Parts []struct {
		Type  string   `json:"type"`
		Text  string   `json:"text"`
		Files []string `json:"files"`
	} `json:"parts"`
}

// followedLocked lists the sessions with unsettled prompts. The caller
// holds turnMu.
func (h *hub) followedLocked() []string {
	var sids []string
	for sid, list := range h.pending {
		for _, ps := range list {
			if !ps.resolved {
				sids = append(sids, sid)
				break
			}
		}
	}
	return sids
}

// unresolvedLocked reports whether a followed prompt of sid has no outcome
// yet. The caller holds turnMu.
func (h *hub) unresolvedLocked(sid string) bool {
	for _, ps := range h.pending[sid] {
		if !ps.resolved {
			return true
		}
	}
	return false
}

// reconcileLocked starts catching up the given sessions from their stored
// messages, at most one catch-up per session at a time; a request made
// while one runs makes one more run after it. The caller holds turnMu.
func (h *hub) reconcileLocked(sids ...string) {
	for _, sid := range sids {
		if h.closing {
			continue
		}
		if h.catchingUp[sid] {
			h.catchUpAgain[sid] = true
			continue
		}
		h.catchingUp[sid] = true
		h.wg.Add(1)
		go h.reconcile(sid)
	}
}

// reconcile settles the session's followed prompts from its stored
// messages.
func (h *hub) reconcile(sid string) {
	defer h.wg.Done()
	ctx, cancel := clockctx.WithTimeout(h.base, h.a.clock, h.a.cfg.RequestTimeout, "opencode", "reconcile")
	defer cancel()
	var msgs []ocTurnMessage
	dir, err := h.a.sessionDir(ctx, sid)
	if err == nil {
		_, err = h.a.read(ctx, request{method: http.MethodGet, path: sessionPath(sid, "/message"), query: dirQuery(dir), out: &msgs})
	}
	h.turnMu.Lock()
	delete(h.catchingUp, sid)
	var reports []report
	if err == nil { // on error the events will tell, or the receipt stays queued
		reports = h.settleFromMessagesLocked(sid, msgs)
	}
	if h.catchUpAgain[sid] {
		delete(h.catchUpAgain, sid)
		if h.unresolvedLocked(sid) {
			h.reconcileLocked(sid)
		}
	}
	h.pollAdoptedLocked(sid)
	h.turnMu.Unlock()
	h.maybeStop()
	h.deliver(reports)
}

func (h *hub) settleFromMessagesLocked(sid string, msgs []ocTurnMessage) []report {
	var out []report
	attached := map[string]bool{}
	for _, ps := range h.pending[sid] {
		if ps.msgID != "" {
			attached[ps.msgID] = true
		}
	}
	for _, ps := range append([]*pendingSend(nil), h.pending[sid]...) {
		if ps.resolved {
			continue
		}
		if ps.msgID == "" {
			for _, m := range msgs {
				if m.Info.Role != "user" || attached[m.Info.ID] {
					continue
				}
				for _, p := range m.Parts {
					if p.Type == "text" && p.Text == ps.text {
						ps.msgID = m.Info.ID
						attached[m.Info.ID] = true
						break
					}
				}
				if ps.msgID != "" {
					break
				}
			}
			if ps.msgID == "" {
				continue
			}
		}
		var last *ocTurnMessage
		for i := range msgs {
			m := &msgs[i]
			if m.Info.Role != "assistant" || m.Info.ParentID != ps.msgID {
				continue
			}
			if len(m.Info.Error) > 0 && string(m.Info.Error) != "null" {
				ps.turn = factsFromMessages(msgs, ps.msgID).result(m.Info.Finish, m.Info.Error)
				out = h.resolveLocked(sid, ps, providers.StatusRejected, errorReason(m.Info.Error), out)
				last = nil
				break
			}
			last = m
		}
		if !ps.resolved && last != nil && last.Info.Time.Completed > 0 && last.Info.Finish != "" && last.Info.Finish != "tool-calls" {
			ps.turn = factsFromMessages(msgs, ps.msgID).result(last.Info.Finish, nil)
			out = h.resolveLocked(sid, ps, providers.StatusCompleted, "", out)
		}
	}
	return out
}

// pollAdoptedLocked reads sid's stored messages again after adoptedPoll
// while a reply it adopted has no outcome, so that outcome is settled even
// if none of its events reached this process. The caller holds turnMu.
func (h *hub) pollAdoptedLocked(sid string) {
	adopted := false
	for _, ps := range h.pending[sid] {
		adopted = adopted || (ps.adopted && !ps.resolved && !ps.lost)
	}
	if !adopted || h.closing || h.polling[sid] {
		return
	}
	h.polling[sid] = true
	h.a.clock.AfterFunc(adoptedPoll, func() {
		h.turnMu.Lock()
		defer h.turnMu.Unlock()
		delete(h.polling, sid)
		h.reconcileLocked(sid)
	}, "adopted-poll")
}
