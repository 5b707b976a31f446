package acp

import (
	"errors"
	"fmt"

	"github.com/agent-interop/runtime/internal/providers"
)

// SessionLostError says the agent answered session/load or
// session/resume that it no longer has a session (sessionLost): the
// operation that needed it open was refused, nothing was sent for it, and
// the way on is a fresh session. It wraps providers.ErrSessionLost with
// the agent's words, so the registry's resume refusal and allowFresh see
// it, and it is a NotFound for the events hub (a lost session's stream is
// not reopened in a loop).
type SessionLostError struct {
	Provider providers.ID
	NativeID string
	// Op is what needed the session: "resume", "send", "watch events",
	// "read the diff", ...
	Op string
	// Reason is the agent's words (message and data.message).
	Reason string
	// RPC is the agent's answer.
	RPC *RPCError
}

func (e *SessionLostError) Error() string {
	return fmt.Sprintf("%s %s session %s: the agent no longer has session %s (%s); nothing was sent to it. "+
		"To go on, call resume_session with allowFresh: true, which opens a fresh session in its recorded workspace (without the lost session's history)",
		e.Op, e.Provider, e.NativeID, e.NativeID, e.Reason)
}

// Unwrap is providers.ErrSessionLost with the agent's words.
func (e *SessionLostError) Unwrap() error { return providers.SessionLost(e.Reason) }

// NotFound tells the events hub the session's stream cannot be opened.
func (e *SessionLostError) NotFound() bool { return true }

// lostAs restates err, when it says the session is lost, as the refusal of
// op (a *providers.RejectedError wrapping a *SessionLostError: nothing
// was delivered, never an unknown outcome); other errors are returned
// as they are.
func lostAs(op string, err error) error {
	var le *SessionLostError
	if err == nil || !errors.As(err, &le) {
		return err
	}
	again := *le
	again.Op = op
	return &providers.RejectedError{Reason: again.Error(), Detail: le.RPC, Err: &again}
}
