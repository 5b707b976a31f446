package secrets

import (
	"strings"
	"testing"
)

// TestDocumentedExamplesOnly: a documented example credential is left
// alone, and a key of the same shape that is not the documented value is
// still redacted.
func TestDocumentedExamplesOnly(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for value, source := range DocumentedExamples() {
		if source == "" {
			t.Errorf("%s: no source", value)
		}
		line := "secret = \"" + value + "\"\n"
		if got := r.String(line); got != line {
			t.Errorf("documented example %q (%s) changed: %q", value, source, got)
		}
		// Same shape, one character different: a real key.
		other := value[:len(value)-3] + "XYZ"
		if got := r.String("secret = \"" + other + "\"\n"); strings.Contains(got, other) {
			t.Errorf("same shape as %q kept: %q", value, got)
		}
	}
}
