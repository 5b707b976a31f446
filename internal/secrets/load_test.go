package secrets

import "testing"

func TestRuleSetLoadsAndCompiles(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	n := r.Rules()
	if n[sourceGitleaks] < 200 {
		t.Fatalf("gitleaks rules loaded: %d, want the whole %s set (>= 200)", n[sourceGitleaks], GitleaksVersion)
	}
	if n[sourceInterop] < 40 {
		t.Fatalf("project rules: %d", n[sourceInterop])
	}
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	t.Logf("rules: %v", n)
}
