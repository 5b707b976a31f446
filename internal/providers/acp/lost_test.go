package acp

import (
	"encoding/json"
	"testing"
)

// TestSessionLost: an agent's answer to session/load or session/resume
// means "I no longer have the session" when it is ACP's
// resource_not_found (-32002, whatever its words), or an invalid-params
// answer (-32602) whose message or data.message says the session is not
// found or unknown; any other answer (another -32602, another code saying
// "not found") is not, and the reason keeps the agent's words.
func TestSessionLost(t *testing.T) {
	data := func(msg string) json.RawMessage { b, _ := json.Marshal(map[string]string{"message": msg}); return b }
	tests := []struct {
		name       string
		err        RPCError
		lost       bool
		wantReason string
	}{
		{name: "qwen resource_not_found", err: RPCError{Code: CodeNotFound, Message: "Resource not found: session:abc", Data: json.RawMessage(`{"uri":"session:abc"}`)},
			lost: true, wantReason: "Resource not found: session:abc"},
		{name: "bare resource_not_found", err: RPCError{Code: CodeNotFound, Message: "Resource not found"}, lost: true, wantReason: "Resource not found"},
		{name: "cursor session not found", err: RPCError{Code: CodeInvalidParams, Message: "Invalid params", Data: data(`Session "nope" not found`)},
			lost: true, wantReason: `Invalid params: Session "nope" not found`},
		{name: "unknown session in the message", err: RPCError{Code: CodeInvalidParams, Message: "Unknown session nope"}, lost: true, wantReason: "Unknown session nope"},
		{name: "invalid params about the cwd", err: RPCError{Code: CodeInvalidParams, Message: "Invalid params", Data: data("cwd must be an absolute path")}},
		{name: "invalid params with no words", err: RPCError{Code: CodeInvalidParams, Message: "Invalid params"}},
		{name: "invalid params about a missing field", err: RPCError{Code: CodeInvalidParams, Message: "Invalid params", Data: data("sessionId: Required")}},
		{name: "internal error saying not found", err: RPCError{Code: CodeInternalError, Message: "Session not found"}},
		{name: "auth required", err: RPCError{Code: CodeAuthRequired, Message: "Authentication required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason, lost := sessionLost(&tt.err)
			if lost != tt.lost || reason != tt.wantReason {
				t.Fatalf("sessionLost(%+v) = %q, %v; want %q, %v", tt.err, reason, lost, tt.wantReason, tt.lost)
			}
		})
	}
}
