package opencode

import "encoding/json"

// This file is the shape of the /global/event messages the hub reads.

// globalEvent is one /global/event message.
type globalEvent struct {
	Directory string          `json:"directory"`
	Payload   json.RawMessage `json:"payload"`
}

// eventPayload holds the fields used to attribute and follow an event.
type eventPayload struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionID"`
	Info      *struct {
		SessionID string `json:"sessionID"`
	} `json:"info"`
	Properties struct {
		SessionID string `json:"sessionID"`
		Info      *struct {
			ID        string          `json:"id"`
			SessionID string          `json:"sessionID"`
			Role      string          `json:"role"`
			ParentID  string          `json:"parentID"`
			Finish    string          `json:"finish"`
			Directory string          `json:"directory"`
			Error     json.RawMessage `json:"error"`
			Time      struct {
				Completed int64 `json:"completed"`
			} `json:"time"`
			Tokens *ocTokens `json:"tokens"`
			Cost   *float64  `json:"cost"`
		} `json:"info"`
		Part *struct {
			SessionID string   `json:"sessionID"`
			MessageID string   `json:"messageID"`
			Type      string   `json:"type"`
			Text      string   `json:"text"`
			Files     []string `json:"files"`
		} `json:"part"`
		Status *struct {
			Type string `json:"type"`
		} `json:"status"`
		Error     json.RawMessage `json:"error"`
		ID        string          `json:"id"`        // permission.asked
		RequestID string          `json:"requestID"` // permission.replied
	} `json:"properties"`
}

// sessionOf attributes an event to a session (upstream AI-06): sessionID,
// then properties.sessionID, info.sessionID, properties.info.sessionID,
// properties.part.sessionID.
func (p *eventPayload) sessionOf() string {
	switch {
	case p.SessionID != "":
		return p.SessionID
	case p.Properties.SessionID != "":
		return p.Properties.SessionID
	case p.Info != nil && p.Info.SessionID != "":
		return p.Info.SessionID
	case p.Properties.Info != nil && p.Properties.Info.SessionID != "":
		return p.Properties.Info.SessionID
	case p.Properties.Part != nil && p.Properties.Part.SessionID != "":
		return p.Properties.Part.SessionID
	}
	return ""
}
