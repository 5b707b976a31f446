package security

import (
	"errors"

	"github.com/agent-interop/runtime/catalogs/limits"
)

// ErrInvalidID is returned for an identifier that is not a safe id.
var ErrInvalidID = errors.New("Invalid identifier")

// SafeIDPattern is the rule every provider-facing identifier (thread,
// project key, chat id) must follow before it is used in a path or URL;
// ValidateID checks it without a regular expression. Its length is the
// spec's id kind (catalogs/limits.KindID): the characters are ASCII, so
// bytes and characters agree.
const SafeIDPattern = `^[A-Za-z0-9._:-]{1,200}$`

func safeIDChars(id string) bool {
	if len(id) == 0 || len(id) > limits.KindID {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// ValidateID returns [ErrInvalidID] unless id matches [SafeIDPattern] and is
// not made of dots only (".", "..", "..." would name directories when the id
// is used as a path component).
func ValidateID(id string) error {
	if !safeIDChars(id) {
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
