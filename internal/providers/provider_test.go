package providers

import "testing"

// TestOrderIsTheCallersOwn holds Order to the built-in agents' order and
// to a fresh slice per call: a caller that appends to or changes its copy
// changes no later answer.
func TestOrderIsTheCallersOwn(t *testing.T) {
	agents := BuiltinAgents()
	got := Order()
	if len(got) != len(agents) {
		t.Fatalf("Order() has %d ids, BuiltinAgents %d", len(got), len(agents))
	}
	for i, a := range agents {
		if got[i] != a.ID {
			t.Fatalf("Order()[%d] = %q, want %q", i, got[i], a.ID)
		}
	}
	got[0] = "changed"
	_ = append(got[:1], "appended")
	if again := Order(); again[0] != agents[0].ID || (len(again) > 1 && again[1] != agents[1].ID) {
		t.Fatalf("a caller's change reached the next Order(): %v", again)
	}
}
