package adapters

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff"
)

func envOf(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
}

func TestNewBuildsTheCatalogInRegistryOrder(t *testing.T) {
	set := New(Config{LookupEnv: envOf(map[string]string{EnvAgentsFile: filepath.Join(t.TempDir(), "none.yaml")}), FreebuffProcDir: "-"})
	var ids []providers.ID
	for _, a := range set.All {
		ids = append(ids, a.ID())
	}
	if want := providers.Order(); !slices.Equal(ids, want) {
		t.Fatalf("adapters = %v, want %v", ids, want)
	}
	for _, id := range []providers.ID{providers.Freebuff, providers.OpenCode, providers.Codex, providers.ClaudeCode, providers.Cursor,
		"gemini", "qwen", "copilot", "goose", "kimi", "opencode-acp", "codex-acp"} {
		if !slices.Contains(ids, id) {
			t.Errorf("the catalog has no %s", id)
		}
	}
	fb, ok := set.All[0].(*freebuff.Adapter)
	if !ok || fb.Service() != set.Freebuff {
		t.Fatalf("the Freebuff adapter does not serve the Set's Freebuff service")
	}
	if err := set.Freebuff.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestAgentsFile: a good entry becomes an adapter after the built-in ones;
// each bad entry is an unavailable provider naming the file, line, field,
// rule and fix, and never stops the others.
func TestAgentsFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "agents.yaml")
	body := `agents:
  - id: my-agent
    name: My Agent
    protocol: acp
    command: [/bin/true, --acp]
    env: {SOME_KEY: value}
  - id: speaks-http
    name: Other
    protocol: http
    command: [x]
  - id: no-command
    name: No Command
    protocol: acp
  - id: cursor
    name: Mine
    protocol: acp
    command: [x]
  - id: my-agent
    name: Again
    protocol: acp
    command: [x]
  - id: Bad_Id
    name: Bad
    protocol: acp
    command: [x]
`
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	set := New(Config{LookupEnv: envOf(map[string]string{EnvAgentsFile: file}), FreebuffProcDir: "-"})
	defer set.Freebuff.Close()
	byID := map[providers.ID]providers.Adapter{}
	for _, a := range set.All {
		byID[a.ID()] = a
	}
	if byID["my-agent"] == nil {
		t.Fatalf("the good entry is not an adapter: %v", set.Problems)
	}
	want := []struct {
		id          providers.ID
		line        string
		field, rule string
	}{
		{"speaks-http", ":9:", "protocol", `"http" is not a protocol`},
		{"no-command", ":11:", "command", "is required"},
		{providers.AgentsFileProblemsID, ":14:", "id", "already used by the built-in agent cursor"},
		{providers.AgentsFileProblemsID, ":18:", "id", "already declared at line 2"},
		{providers.AgentsFileProblemsID, ":22:", "id", "must be lower-case letters"},
	}
	for _, w := range want {
		a := byID[w.id]
		if a == nil {
			t.Fatalf("%s is not listed", w.id)
		}
		caps := a.Capabilities(context.Background())
		reason := caps.SendMessage.Reason
		if caps.SendMessage.State != providers.Unavailable || !strings.Contains(reason, file+w.line) ||
			!strings.Contains(reason, w.field+": ") || !strings.Contains(reason, w.rule) || caps.SendMessage.Fix == "" {
			t.Errorf("%s: state %s reason %q fix %q; want %s%s %s: %s", w.id, caps.SendMessage.State, reason, caps.SendMessage.Fix, file, w.line, w.field, w.rule)
		}
		if _, err := a.CreateSession(context.Background(), providers.CreateOptions{}); err == nil {
			t.Errorf("%s: a session was created", w.id)
		}
	}
	if len(set.Problems) != 5 {
		t.Fatalf("problems = %v", set.Problems)
	}
	// KnownIDs (the desk's filter) lists the same ids without building
	// an adapter: the catalog, then the file's, a bad entry under its id.
	ids := KnownIDs(envOf(map[string]string{EnvAgentsFile: file}))
	var registry []string
	for _, a := range set.All {
		if a.ID() != providers.AgentsFileProblemsID {
			registry = append(registry, string(a.ID()))
		}
	}
	if strings.Join(ids, ",") != strings.Join(registry, ",") || ids[len(ids)-3] != "my-agent" {
		t.Fatalf("KnownIDs = %q, registry %q", ids, registry)
	}
}

func TestAgentsFileMalformed(t *testing.T) {
	for name, body := range map[string]string{
		"not yaml":   "agents: [\n  - id: x\n",
		"no list":    "agents: {id: x}\n",
		"bad fields": "agents:\n  - id: x\n    name: X\n    protocol: acp\n    command: [x]\n    comand: [y]\n",
	} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "agents.yaml")
			if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			set := New(Config{LookupEnv: envOf(map[string]string{EnvAgentsFile: file}), FreebuffProcDir: "-"})
			defer set.Freebuff.Close()
			if len(set.Problems) != 1 || set.Problems[0].Fix == "" || set.Problems[0].File != file {
				t.Fatalf("problems = %+v", set.Problems)
			}
			last := set.All[len(set.All)-1]
			if last.ID() != providers.AgentsFileProblemsID || len(set.All) != len(providers.Order())+1 {
				t.Fatalf("the built-in agents are not all kept, or the problem is not listed: %d adapters", len(set.All))
			}
		})
	}
}
