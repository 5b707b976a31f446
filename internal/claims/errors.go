package claims

import (
	"fmt"
	"time"
)

// ConflictError refuses a claim that overlaps an active claim of another
// session. Its message contains "conflicts with active claim <id> held by
// <session>" (the 0.3.x substring plus the holder).
type ConflictError struct {
	Kind     Kind
	Resource string
	Mode     Mode
	Held     Claim
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("Claim on %s %s (%s) conflicts with active claim %s held by %s (%s %s, %s, expires %s)",
		e.Kind, e.Resource, e.Mode, e.Held.ID, e.Held.SessionID,
		e.Held.Kind, e.Held.Resource, e.Held.Mode, e.Held.ExpiresAt.Format(time.RFC3339))
}

// OwnershipError refuses a release by a session that does not own the
// claim. Its message contains "belongs to <owner>".
type OwnershipError struct {
	ClaimID string
	Owner   string
	Caller  string
}

func (e *OwnershipError) Error() string {
	return fmt.Sprintf("Claim %s belongs to %s, not %s", e.ClaimID, e.Owner, e.Caller)
}

// NotFoundError names an unknown claim or work item ("Unknown claim <id>",
// "Unknown work <id>").
type NotFoundError struct {
	What string // "claim" or "work"
	ID   string
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("Unknown %s %s", e.What, e.ID) }

// InvalidError is an argument the service refuses before touching the
// store. Its message names the field and the rule.
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

func invalidf(format string, args ...any) error {
	return &InvalidError{Msg: fmt.Sprintf(format, args...)}
}
