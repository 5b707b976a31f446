package bench

import (
	"strings"
	"testing"
)

func TestHandoffGate(t *testing.T) {
	label := "tiktoken-go o200k_base (offline estimate, not native provider usage)"
	ok := TaskResult{Task: "a", Steps: 3, Bytes: 100, Tokens: 30}
	tests := []struct {
		name  string
		tasks []TaskResult
		label string
		want  string // substring of the first failure; "" passes
	}{
		{"clean", []TaskResult{ok}, label, ""},
		{"duplicate send", []TaskResult{{Task: "b", Bytes: 1, Tokens: 1, DuplicateProviderSends: 1}}, label, "1 duplicate provider sends"},
		{"duplicate delivery", []TaskResult{{Task: "b", Bytes: 1, Tokens: 1, DuplicateDeliveries: 2}}, label, "2 duplicate deliveries"},
		{"duplicate event read", []TaskResult{{Task: "b", Bytes: 1, Tokens: 1, DuplicateEventReads: 1}}, label, "1 duplicate event reads"},
		{"error", []TaskResult{{Task: "b", Error: "boom"}}, label, "b failed: boom"},
		{"no payload", []TaskResult{{Task: "b"}}, label, "b:"},
		{"skipped outside CI", []TaskResult{{Task: "b", Skipped: "codex not installed"}}, label, ""},
		{"bad tokenizer label", []TaskResult{ok}, "cl100k", "tokenizer label"},
	}
	t.Setenv("CI", "")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := (&HandoffReport{Tasks: tt.tasks, Tokenizer: tt.label}).Gate()
			switch {
			case tt.want == "" && len(g) != 0:
				t.Fatalf("gate failed: %v", g)
			case tt.want != "" && (len(g) == 0 || !strings.Contains(g[0], tt.want)):
				t.Fatalf("gate = %v, want a failure containing %q", g, tt.want)
			}
		})
	}
	t.Setenv("CI", "true")
	if g := (&HandoffReport{Tasks: []TaskResult{{Task: "b", Skipped: "codex not installed"}}, Tokenizer: label}).Gate(); len(g) != 1 || !strings.Contains(g[0], "skipped in CI") {
		t.Fatalf("a skip in CI = %v", g)
	}
}
