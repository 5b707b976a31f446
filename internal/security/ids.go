package security

import (
	"errors"
	"regexp"
)

// ErrInvalidID is returned for an identifier that does not match [SafeIDPattern].
var ErrInvalidID = errors.New("Invalid identifier")

// SafeIDPattern is the pattern every provider-facing identifier (thread,
// project key, chat id) must match before it is used in a path or URL.
var SafeIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,200}$`)

// ValidateID returns [ErrInvalidID] unless id matches [SafeIDPattern] and is
// not made of dots only (".", "..", "..." would name directories when the id
// is used as a path component).
func ValidateID(id string) error {
	if !SafeIDPattern.MatchString(id) {
		return ErrInvalidID
	}
	dots := true
	for i := 0; i < len(id); i++ {
		if id[i] != '.' {
			dots = false
			break
		}
	}
	if dots {
		return ErrInvalidID
	}
	return nil
}
