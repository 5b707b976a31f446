package workflow

import (
	"errors"
	"fmt"
)

// Sentinel kinds. Every error the service returns for a caller mistake
// matches one of them with errors.Is, while its message stays the exact
// upstream text.
var (
	// ErrNotFound: a referenced work, evidence or handoff does not exist.
	ErrNotFound = errors.New("not found")
	// ErrInvalid: the input breaks a rule (blank text, size, enum, state).
	ErrInvalid = errors.New("invalid input")
	// ErrDisabled: the operation is switched off by configuration.
	ErrDisabled = errors.New("disabled")
	// ErrCancelled: the caller cancelled the operation before it finished;
	// nothing was recorded.
	ErrCancelled = errors.New("cancelled")
)

// userError carries an exact message and a kind.
type userError struct {
	kind error
	msg  string
}

func (e *userError) Error() string        { return e.msg }
func (e *userError) Is(target error) bool { return target == e.kind }

func notFound(format string, args ...any) error {
	return &userError{kind: ErrNotFound, msg: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) error {
	return &userError{kind: ErrInvalid, msg: fmt.Sprintf(format, args...)}
}

func disabled(msg string) error { return &userError{kind: ErrDisabled, msg: msg} }

func unknownWork(id string) error     { return notFound("Unknown work %s", id) }
func unknownHandoff(id string) error  { return notFound("Unknown handoff %s", id) }
func unknownEvidence(id string) error { return notFound("Unknown evidence %s", id) }

// wrapStore adds context to a storage failure (not a caller mistake).
func wrapStore(what string, err error) error { return fmt.Errorf("%s: %w", what, err) }
