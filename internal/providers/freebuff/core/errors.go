package core

import (
	"errors"
	"fmt"

	"github.com/agent-interop/runtime/internal/providers"
)

// Read-only reasons with the 0.3.x texts.
const (
	ReasonDesktopUnverified = "Freebuff Desktop writes are unavailable: no verified launch authorization contract"
	ReasonUnavailable       = "Freebuff is unavailable or read-only"
)

// NotFoundError names an unknown thread or project.
type NotFoundError struct {
	Kind string // "thread" or "project"
	ID   string
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("Unknown Freebuff %s %s", e.Kind, e.ID) }

// ReadOnlyError says why a write cannot be attempted. It is returned
// wrapped in a *providers.NotSentError.
type ReadOnlyError struct{ Reason string }

func (e *ReadOnlyError) Error() string { return e.Reason }

// UnavailableError says Freebuff (Desktop or CLI) could not be reached for a
// read, and what was checked.
type UnavailableError struct{ Reason string }

func (e *UnavailableError) Error() string { return e.Reason }

// InputError is a rejected tool argument; it names the field and the rule.
type InputError struct {
	Field string
	Msg   string
}

func (e *InputError) Error() string { return e.Msg }

// NotSent marks err as certainly not delivered.
func NotSent(err error) error {
	var ns *providers.NotSentError
	if errors.As(err, &ns) {
		return err
	}
	return &providers.NotSentError{Err: err}
}
