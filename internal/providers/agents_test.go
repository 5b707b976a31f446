package providers

import (
	"strings"
	"testing"
)

func TestVersionWarning(t *testing.T) {
	s := AgentSpec{TestedMin: "0.16.0", TestedMax: "0.17.2"}
	for _, c := range []struct{ v, want string }{
		{"0.16.0", ""}, {"0.17.2", ""}, {"v0.17.0-beta", ""}, {"", ""}, {"garbage", ""},
		{"0.15.9", "older"}, {"0.17.3", "newer"}, {"1.0.0", "newer"},
	} {
		got := s.VersionWarning(c.v)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("VersionWarning(%q) = %q, want %q", c.v, got, c.want)
		}
	}
	if got := (AgentSpec{}).VersionWarning("9.9.9"); got != "" {
		t.Errorf("no range: %q", got)
	}
}

func TestBuiltinCatalog(t *testing.T) {
	seen := map[ID]bool{}
	for _, s := range BuiltinAgents() {
		if !ValidID(string(s.ID)) || seen[s.ID] || len(s.Command) == 0 || s.InstallHint == "" || s.AuthHow == "" {
			t.Errorf("bad entry %+v", s)
		}
		seen[s.ID] = true
	}
	for _, id := range []ID{Freebuff, OpenCode, Codex, ClaudeCode, Cursor} {
		if !seen[id] {
			t.Errorf("the catalog lost %s", id)
		}
	}
	if _, err := ParseID("Bad_Id"); err == nil {
		t.Error("a malformed id parsed")
	}
}

func TestParseAgentsFileUnknownProtocol(t *testing.T) {
	good, bad := ParseAgentsFile("a.yaml", []byte("agents:\n  - id: x\n    name: X\n    protocol: grpc\n    command: [x]\n"), nil)
	if len(good) != 0 || len(bad) != 1 || bad[0].Line != 4 || bad[0].Field != "protocol" || bad[0].ID != "x" || bad[0].Fix == "" {
		t.Fatalf("good %v bad %+v", good, bad)
	}
}

func TestValidID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"codex", true},
		{"claude-code", true},
		{"a", true},
		{"gemini-2-5", true},
		{"0", true},
		{strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), false},
		{"", false},
		{"-", false},
		{"-codex", false},
		{"codex-", false},
		{"claude--code", false},
		{"Codex", false},
		{"co_dex", false},
		{"co dex", false},
		{"codex\n", false},
		{"é", false},
	} {
		if got := ValidID(tc.id); got != tc.want {
			t.Errorf("ValidID(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}
