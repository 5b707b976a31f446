package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/server"
	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
)

// TestUserDeclaredAgentThroughMCP: an agents file declares a real ACP
// program (claude-agent-acp) under an id the catalog does not have, and
// the MCP tools drive it end to end with no code: list_providers lists
// it, create_session and send_session_message reach it (the prompt
// reaches the model once), read_session_events carries the reply; an
// unknown id is refused with the known ones.
func TestUserDeclaredAgentThroughMCP(t *testing.T) {
	bin := realpeers.Require(t, realpeers.ClaudeACP)
	fm := fakemodel.New(t)
	fm.SetDefault(fakemodel.Text("Hello from fake model."))
	penv := realpeers.ClaudeEnv(t, fm.URL())
	root := penv.Root()
	ws := filepath.Join(root, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	envMap := map[string]string{}
	for _, kv := range penv.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		envMap[k] = v
	}
	entry, _ := json.Marshal(map[string]any{"agents": []any{map[string]any{
		"id": "my-claude", "name": "My Claude", "protocol": "acp", "command": []string{bin}, "env": envMap,
	}}})
	file := filepath.Join(root, "agents.yaml")
	if err := os.WriteFile(file, entry, 0o600); err != nil { // JSON is YAML
		t.Fatal(err)
	}
	env := map[string]string{
		"INTEROP_DB": filepath.Join(root, "interop.db"), "INTEROP_AGENTS_FILE": file,
		"INTEROP_PROJECT_ROOTS": ws, "HOME": penv.Home(),
	}
	a, err := Open(context.Background(), Config{Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	p, _ := catalogs.LookupProfile("full")
	s := server.New(server.Options{Profile: p, Version: "test", Handlers: a.Handlers})
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	go func() { _ = s.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any) (map[string]any, string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		var out map[string]any
		_ = json.Unmarshal([]byte(text), &out)
		return out, text, res.IsError
	}

	_, text, isErr := call("list_providers", map[string]any{})
	if isErr || !strings.Contains(text, `"provider":"my-claude"`) {
		t.Fatalf("list_providers: %s", text)
	}
	_, text, isErr = call("create_session", map[string]any{"provider": "nobody"})
	if !isErr || !strings.Contains(text, "Unknown provider nobody") || !strings.Contains(text, "my-claude") || !strings.Contains(text, "claude-code") {
		t.Fatalf("unknown provider: %s", text)
	}
	out, text, isErr := call("create_session", map[string]any{"provider": "my-claude", "cwd": ws})
	if isErr {
		t.Fatalf("create_session: %s", text)
	}
	native := findString(out, "nativeId")
	if native == "" {
		t.Fatalf("create_session answered no nativeId: %s", text)
	}
	_, text, isErr = call("send_session_message", map[string]any{"provider": "my-claude", "nativeId": native, "text": "hello user agent"})
	if isErr {
		t.Fatalf("send_session_message: %s", text)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, text, isErr = call("read_session_events", map[string]any{"provider": "my-claude", "nativeId": native, "timeoutMs": 5000})
		if isErr {
			t.Fatalf("read_session_events: %s", text)
		}
		// The reply streams in chunks; the turn ends with end_turn and the
		// send's operation completed.
		if strings.Contains(text, `"text":"fake model."`) && strings.Contains(text, `"stopReason":"end_turn"`) &&
			strings.Contains(text, `"operation":"send","status":"completed"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reply in the events: %s", text)
		}
	}
	if n := fm.Count("hello user agent"); n != 1 {
		t.Fatalf("the prompt reached the model %d times", n)
	}
}

// findString finds the first string value of key anywhere in v.
func findString(v any, key string) string {
	switch x := v.(type) {
	case map[string]any:
		if s, ok := x[key].(string); ok {
			return s
		}
		for _, e := range x {
			if s := findString(e, key); s != "" {
				return s
			}
		}
	case []any:
		for _, e := range x {
			if s := findString(e, key); s != "" {
				return s
			}
		}
	}
	return ""
}
