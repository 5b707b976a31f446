package workflow

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agent-interop/runtime/catalogs/limits"
)

// The limits of tool arguments come from the spec (catalogs/limits), one
// constant per argument, so this package never refuses what a tool's
// schema allows; a caller that bypasses the generated decoders (the CLI,
// an import) gets the same bounds. Lengths count characters. The limits
// below bound what the runtime itself builds, not an argument.
const (
	// maxEvidenceSession and maxEvidenceWork bound the session and work an
	// evidence record names: the runtime records evidence for a work and
	// a session some tool named.
	maxEvidenceSession = limits.KindSession
	maxEvidenceWork    = limits.KindID
	// maxSummary bounds an evidence summary the runtime writes.
	maxSummary     = 4000
	maxEvidenceRaw = 1 << 20 // canonical data bytes per evidence record
	previewChars   = 200
)

// text trims s and checks it is not blank and not longer than max
// characters. field names the argument in the error.
func requiredText(field, s string, max int) (string, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return "", invalid("%s must not be blank", field)
	}
	if utf8.RuneCountInString(t) > max {
		return "", invalid("%s exceeds %d characters", field, max)
	}
	return t, nil
}

// optionalText is requiredText for an optional argument: nil or blank
// yields nil.
func optionalText(field string, s *string, max int) (*string, error) {
	if s == nil || strings.TrimSpace(*s) == "" {
		return nil, nil
	}
	t, err := requiredText(field, *s, max)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// textList trims every entry, drops blank ones and bounds the list.
// A nil list becomes an empty one.
func textList(field string, in []string, maxItems, maxLen int) ([]string, error) {
	if len(in) > maxItems {
		return nil, invalid("%s accepts at most %d entries; received %d", field, maxItems, len(in))
	}
	out := make([]string, 0, len(in))
	for i, s := range in {
		t := strings.TrimSpace(s)
		if t == "" {
			continue
		}
		if utf8.RuneCountInString(t) > maxLen {
			return nil, invalid("%s[%d] exceeds %d characters", field, i, maxLen)
		}
		out = append(out, t)
	}
	return out, nil
}

// idList checks a list of record IDs: bounded, no blanks, duplicates
// removed (first occurrence kept).
func idList(field string, in []string, maxItems, maxLen int) ([]string, error) {
	if len(in) > maxItems {
		return nil, invalid("%s accepts at most %d entries; received %d", field, maxItems, len(in))
	}
	seen := make(map[string]bool, len(in))
	out := make([]string, 0, len(in))
	for i, s := range in {
		t := strings.TrimSpace(s)
		if t == "" {
			return nil, invalid("%s[%d] must not be blank", field, i)
		}
		if utf8.RuneCountInString(t) > maxLen {
			return nil, invalid("%s[%d] exceeds %d characters", field, i, maxLen)
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

// preview returns the first n characters of s.
func preview(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

func itoa(i int) string { return strconv.Itoa(i) }
