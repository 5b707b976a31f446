package workflow

import "strings"

// Handoff states.
const (
	HandoffCreated    = "created"
	HandoffAccepted   = "accepted"
	HandoffApplied    = "applied"
	HandoffVerified   = "verified"
	HandoffCompleted  = "completed"
	HandoffBlocked    = "blocked"
	HandoffSuperseded = "superseded"
)

// handoffNext is the transition table (docs/store.md). The forward path is
// created → accepted → applied → verified → completed, one step at a time;
// blocked and superseded are reachable from every non-terminal state; a
// blocked handoff resumes by being accepted again; completed and superseded
// are terminal. Setting the current status again is not a transition.
func handoffNext(from string) []string {
	switch from {
	case HandoffCreated:
		return []string{HandoffAccepted, HandoffBlocked, HandoffSuperseded}
	case HandoffAccepted:
		return []string{HandoffApplied, HandoffBlocked, HandoffSuperseded}
	case HandoffApplied:
		return []string{HandoffVerified, HandoffBlocked, HandoffSuperseded}
	case HandoffVerified:
		return []string{HandoffCompleted, HandoffBlocked, HandoffSuperseded}
	case HandoffBlocked:
		return []string{HandoffAccepted, HandoffSuperseded}
	}
	return nil // completed, superseded
}

// checkTransition returns nil when from → to is allowed, otherwise the
// upstream error prefix followed by the allowed next states.
func checkTransition(from, to string) error {
	next := handoffNext(from)
	for _, n := range next {
		if n == to {
			return nil
		}
	}
	if len(next) == 0 {
		return invalid("Invalid handoff transition %s -> %s; %s is terminal", from, to, from)
	}
	return invalid("Invalid handoff transition %s -> %s; allowed next states: %s", from, to, strings.Join(next, ", "))
}

func validHandoffStatus(s string) error {
	switch s {
	case HandoffCreated, HandoffAccepted, HandoffApplied, HandoffVerified, HandoffCompleted, HandoffBlocked, HandoffSuperseded:
		return nil
	}
	return invalid("Invalid handoff status %q; expected one of created, accepted, applied, verified, completed, blocked, superseded", s)
}
