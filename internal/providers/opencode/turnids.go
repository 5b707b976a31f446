package opencode

import "strings"

// This file is which turn an event belongs to: the assistant messages of
// each session and the user message (turn) each answers.

// rememberAssistantLocked notes id as an assistant message of session sid
// answering parent. The caller holds turnMu.
func (h *hub) rememberAssistantLocked(sid, id, parent string) {
	if id == "" {
		return
	}
	if parent != "" {
		if len(h.turnOf) > 4*maxAssistantMemory*maxPendingPerSess {
			h.turnOf = map[string]string{}
		}
		h.turnOf[id] = parent
	}
	if h.isAssistantLocked(sid, id) {
		return
	}
	ids := append(h.assist[sid], id)
	if len(ids) > maxAssistantMemory {
		ids = ids[len(ids)-maxAssistantMemory:]
	}
	h.assist[sid] = ids
}

// turnOfLocked names the turn (the user message id) an event belongs to,
// when the event says: a user message, an assistant message (its parent),
// or a part of either. The caller holds turnMu.
func (h *hub) turnOfLocked(p *eventPayload) string {
	props := &p.Properties
	if info := props.Info; info != nil && strings.HasPrefix(info.ID, "msg") {
		if info.Role == "user" {
			return info.ID
		}
		if info.ParentID != "" {
			return info.ParentID
		}
	}
	if part := props.Part; part != nil && part.MessageID != "" {
		if t, ok := h.turnOf[part.MessageID]; ok {
			return t
		}
		if !h.isAssistantLocked(p.sessionOf(), part.MessageID) {
			return part.MessageID // a part of the user message itself
		}
	}
	return ""
}

func (h *hub) isAssistantLocked(sid, id string) bool {
	for _, x := range h.assist[sid] {
		if x == id {
			return true
		}
	}
	return false
}
