package clientsetup

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"
)

// TestRerunKeepsUserKeys: re-running setup over an existing entry keeps
// every key we do not own (env variables such as INTEROP_DB, timeouts,
// per-tool settings, a disabled flag, other headers), in every client
// format, and reports the keys it changed.
func TestRerunKeepsUserKeys(t *testing.T) {
	for _, tc := range []struct {
		name   string
		client Client
		entry  Entry
		old    string
		// want are dotted paths inside our entry and their values after
		// the merge; gone must be absent.
		want        map[string]any
		gone        []string
		wantChanges []string
		keepText    []string // text (comments) that must survive
	}{
		{
			name: "claude stdio", client: Claude, entry: stdioEntry,
			old:         `{"mcpServers":{"agent-interop":{"type":"stdio","command":"/old","args":["serve"],"env":{"INTEROP_DB":"/srv/team.db"},"timeout":60000,"alwaysAllow":["list_work_items"]}}}`,
			want:        map[string]any{"command": "/opt/bin/interop-runtime", "env.INTEROP_DB": "/srv/team.db", "env.INTEROP_READ_ONLY": "1", "timeout": 60000.0, "alwaysAllow": []any{"list_work_items"}},
			wantChanges: []string{"changed command", "changed args", "added env.INTEROP_READ_ONLY"},
		},
		{
			name: "claude stdio to http drops the stdio keys only", client: Claude, entry: Entry{HTTP: true},
			old:         `{"mcpServers":{"agent-interop":{"type":"stdio","command":"/old","args":["serve"],"env":{"INTEROP_DB":"/srv/team.db"},"timeout":60000}}}`,
			want:        map[string]any{"type": "http", "url": DefaultURL, "timeout": 60000.0},
			gone:        []string{"command", "args", "env"},
			wantChanges: []string{"removed args", "removed command", "removed env", "changed type", "added url", "added headers"},
		},
		{
			name: "cursor http keeps other headers", client: Cursor, entry: Entry{HTTP: true},
			old:         `{"mcpServers":{"agentInterop":{"url":"http://127.0.0.1:1/mcp","headers":{"X-Team":"blue","Authorization":"Bearer old"}}}}`,
			want:        map[string]any{"url": DefaultURL, "headers.X-Team": "blue", "headers.Authorization": "Bearer ${env:" + TokenEnv + "}"},
			wantChanges: []string{"changed url", "changed headers.Authorization"},
		},
		{
			name: "cursor not read-only drops only our variable", client: Cursor, entry: Entry{Command: "/opt/bin/interop-runtime"},
			old:         `{"mcpServers":{"agentInterop":{"command":"/opt/bin/interop-runtime","args":["serve"],"env":{"INTEROP_DB":"/srv/x.db","INTEROP_READ_ONLY":"1"}}}}`,
			want:        map[string]any{"env.INTEROP_DB": "/srv/x.db"},
			gone:        []string{"env.INTEROP_READ_ONLY"},
			wantChanges: []string{"removed env.INTEROP_READ_ONLY"},
		},
		{
			name: "opencode jsonc keeps comments and a disabled flag", client: OpenCode, entry: stdioEntry,
			old: `{
  // servers I use
  "mcp": {
    "agent-interop": {
      "type": "local",
      "command": ["/old", "serve"], // old path
      "environment": {"INTEROP_DB": "postgres://team@db/interop",},
      "enabled": false,
      "timeout": 9000,
    },
  },
}
`,
			want:        map[string]any{"command": []any{"/opt/bin/interop-runtime", "serve", "--profile", "core"}, "environment.INTEROP_DB": "postgres://team@db/interop", "environment.INTEROP_READ_ONLY": "1", "enabled": false, "timeout": 9000.0},
			wantChanges: []string{"changed command", "added environment.INTEROP_READ_ONLY"},
			keepText:    []string{"// servers I use", "// old path"},
		},
		{
			name: "codex keeps env table, timeouts, tools and enabled", client: Codex, entry: stdioEntry,
			old: `model = "o3"
# our entry
[mcp_servers.agent_interop]
command = "/old"
args = ["serve"]
tool_timeout_sec = 120
enabled = false

[mcp_servers.agent_interop.env]
INTEROP_DB = "postgres://team@db/interop"

[mcp_servers.agent_interop.tools.send_message]
approval_mode = "prompt"
`,
			want:        map[string]any{"command": "/opt/bin/interop-runtime", "env.INTEROP_DB": "postgres://team@db/interop", "env.INTEROP_READ_ONLY": "1", "tool_timeout_sec": 120.0, "enabled": false, "tools.send_message.approval_mode": "prompt", "default_tools_approval_mode": "approve"},
			wantChanges: []string{"changed command", "changed args", "added env.INTEROP_READ_ONLY", "added default_tools_approval_mode"},
			keepText:    []string{"# our entry", `model = "o3"`},
		},
		{
			name: "codex dotted keys in the parent table", client: Codex, entry: Entry{HTTP: true},
			old: `[mcp_servers]
agent_interop.command = "/old"
agent_interop.startup_timeout_sec = 30
`,
			want:        map[string]any{"url": DefaultURL, "bearer_token_env_var": TokenEnv, "startup_timeout_sec": 30.0},
			gone:        []string{"command"},
			wantChanges: []string{"removed command", "added url", "added bearer_token_env_var", "added default_tools_approval_mode", "added enabled"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, err := TargetFor(tc.client, Paths{Home: "/home/ann"}, false)
			if err != nil {
				t.Fatal(err)
			}
			got, chg, err := merge(target, tc.entry, []byte(tc.old))
			if err != nil {
				t.Fatal(err)
			}
			entry := decodeEntry(t, target, got)
			for path, want := range tc.want {
				if d := cmp.Diff(want, lookup(entry, path)); d != "" {
					t.Errorf("%s (-want +got):\n%s\nmerged:\n%s", path, d, got)
				}
			}
			for _, path := range tc.gone {
				if v := lookup(entry, path); v != nil {
					t.Errorf("%s = %v, want it removed", path, v)
				}
			}
			var names []string
			for _, c := range chg {
				names = append(names, c.String())
			}
			if d := cmp.Diff(tc.wantChanges, names); d != "" {
				t.Errorf("changes (-want +got):\n%s", d)
			}
			for _, s := range tc.keepText {
				if !strings.Contains(string(got), s) {
					t.Errorf("%q lost:\n%s", s, got)
				}
			}
			again, chg, err := merge(target, tc.entry, got)
			if err != nil || string(again) != string(got) || len(chg) != 0 {
				t.Errorf("second merge: err %v, changes %v, differs: %v", err, chg, string(again) != string(got))
			}
		})
	}
}

func decodeEntry(t *testing.T, target Target, b []byte) map[string]any {
	t.Helper()
	var doc map[string]any
	if target.Client == Codex {
		if err := toml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%v:\n%s", err, b)
		}
		v, _ := doc["mcp_servers"].(map[string]any)[target.Name].(map[string]any)
		return toFloat(v).(map[string]any)
	}
	std, err := hujson.Standardize(append([]byte(nil), b...))
	if err != nil {
		t.Fatalf("%v:\n%s", err, b)
	}
	if err := json.Unmarshal(std, &doc); err != nil {
		t.Fatal(err)
	}
	v, _ := doc[jsonContainer(target.Client)].(map[string]any)[target.Name].(map[string]any)
	return v
}

func toFloat(v any) any {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case map[string]any:
		for k, e := range x {
			x[k] = toFloat(e)
		}
	case []any:
		for i, e := range x {
			x[i] = toFloat(e)
		}
	}
	return v
}

func lookup(m map[string]any, path string) any {
	var v any = m
	for _, p := range strings.Split(path, ".") {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

// TestBadConfigRefused: a config that does not parse, or whose entry or
// server table has the wrong type, is refused naming the file and the
// key, and Write leaves it byte-identical with no temporary file behind.
func TestBadConfigRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		client  Client
		content string
		wantErr string
	}{
		{"claude not json", Claude, `{"mcpServers": {`, `\.claude\.json:1:\d+: not valid JSON`},
		{"claude comments", Claude, "{\n// c\n}", `\.claude\.json:2:1: not valid JSON`},
		{"claude servers a list", Claude, `{"mcpServers": []}`, `\.claude\.json: mcpServers is an array, want an object`},
		{"claude entry a string", Claude, `{"mcpServers": {"agent-interop": "x"}}`, `\.claude\.json: mcpServers\.agent-interop is a string, want an object`},
		{"claude env a string", Claude, `{"mcpServers": {"agent-interop": {"env": "x"}}}`, `\.claude\.json: mcpServers\.agent-interop\.env is a string, want an object`},
		{"opencode not jsonc", OpenCode, `{"mcp": {,}}`, `opencode\.json:1:9: not valid JSON or JSONC`},
		{"opencode entry a number", OpenCode, "{\n // c\n \"mcp\": {\"agent-interop\": 3},\n}", `opencode\.json: mcp\.agent-interop is a number, want an object`},
		{"cursor top-level array", Cursor, `[]`, `mcp\.json: the document is not a JSON object`},
		{"codex not toml", Codex, "a = \n", `config\.toml:1:\d+: not valid TOML`},
		{"codex duplicate table", Codex, "[a]\nx = 1\n[a]\ny = 2\n", `config\.toml:3:2: table \[a\] is defined twice`},
		{"codex duplicate key", Codex, "x = 1\nx = 2\n", `config\.toml:2:1: key x is defined twice`},
		{"codex entry a string", Codex, "[mcp_servers]\nagent_interop = \"x\"\n", `config\.toml: mcp_servers\.agent_interop is a string, want a table`},
		{"codex env a string", Codex, "[mcp_servers.agent_interop]\nenv = \"x\"\n", `config\.toml: mcp_servers\.agent_interop\.env is a string, want an object/table`},
		{"codex servers a value", Codex, "mcp_servers = 1\n", `would not parse.*mcp_servers is a value, not a table`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			target, err := TargetFor(tc.client, Paths{Home: dir, XDGConfigHome: dir, CodexHome: dir, ClaudeConfigDir: dir}, false)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(target.File), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(target.File, []byte(tc.content), 0o640); err != nil {
				t.Fatal(err)
			}
			_, err = Write(target, stdioEntry)
			if err == nil || !regexp.MustCompile(tc.wantErr).MatchString(err.Error()) {
				t.Fatalf("err = %v, want /%s/", err, tc.wantErr)
			}
			after, _ := os.ReadFile(target.File)
			if string(after) != tc.content {
				t.Fatalf("file changed to %q", after)
			}
			if d := cmp.Diff([]string{filepath.Base(target.File)}, dirNames(t, filepath.Dir(target.File))); d != "" {
				t.Fatalf("files (-want +got):\n%s", d)
			}
		})
	}
}
