package freebuff

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/internal/security"
)

// Limits on tool input (the spec's, catalogs/limits), in characters.
const (
	MaxMessageChars = limits.SendThreadMessageTextMaxLen
	MaxModelChars   = limits.SetThreadModelModelMaxLen
)

// validateThreadID checks a thread id.
func validateThreadID(id string) error {
	if err := security.ValidateID(id); err != nil {
		return err
	}
	return nil
}

// validateText checks a message.
func validateText(text string) error {
	if strings.TrimSpace(text) == "" {
		return &InputError{Field: "text", Msg: "Message text must not be blank"}
	}
	if n := len([]rune(text)); n > MaxMessageChars {
		return &InputError{Field: "text", Msg: fmt.Sprintf("Message must be 1 to %d characters; received %d", MaxMessageChars, n)}
	}
	return nil
}

// validateModel checks a model id (0.3.x: over 200 characters is "Invalid model").
func validateModel(model string) error {
	if strings.TrimSpace(model) == "" {
		return &InputError{Field: "model", Msg: "Model must not be blank"}
	}
	if utf8.RuneCountInString(model) > MaxModelChars {
		return &InputError{Field: "model", Msg: "Invalid model"}
	}
	for _, r := range model {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return &InputError{Field: "model", Msg: "Invalid model"}
		}
	}
	return nil
}

// efforts are the reasoning efforts accepted by set_thread_reasoning (the
// OpenRouter effort levels Freebuff's models use); null clears the effort.
var efforts = []string{"none", "minimal", "low", "medium", "high", "xhigh"}

// normalizeEffort validates an effort and returns its canonical form.
func normalizeEffort(effort *string) (*string, error) {
	if effort == nil {
		return nil, nil
	}
	e := strings.ToLower(strings.TrimSpace(*effort))
	for _, ok := range efforts {
		if e == ok {
			return &e, nil
		}
	}
	return nil, &InputError{Field: "effort", Msg: fmt.Sprintf("Invalid reasoning effort %q; use one of %s, or null to clear it", *effort, strings.Join(efforts, ", "))}
}
