package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/progress"
)

// fakeHandlers answers a few tools with canned shapes.
type fakeHandlers struct {
	catalogs.Unimplemented
	sawProgress bool
}

func (f *fakeHandlers) ListProviders(ctx context.Context, _ *catalogs.ListProvidersInput) (any, error) {
	f.sawProgress = progress.Requested(ctx)
	return map[string]any{"providers": []any{map[string]any{"provider": "codex"}}}, nil
}

func (f *fakeHandlers) ListWorkItems(context.Context, *catalogs.ListWorkItemsInput) (any, error) {
	return []string{"not", "an", "object"}, nil
}

func (f *fakeHandlers) GetRuntimeStatus(context.Context, *catalogs.GetRuntimeStatusInput) (any, error) {
	return struct {
		Note string `json:"note"`
	}{"a <b> & c"}, nil
}

func session(t *testing.T, profile string, h catalogs.Handlers) *mcp.ClientSession {
	t.Helper()
	p, ok := catalogs.LookupProfile(profile)
	if !ok {
		t.Fatal("no profile", profile)
	}
	s := New(Options{Profile: p, Version: "test", Handlers: h})
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	go func() { _ = s.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res, res.Content[0].(*mcp.TextContent).Text
}

func TestAnswersAreCompactObjectsAndLegacyShapesApply(t *testing.T) {
	h := &fakeHandlers{}
	modern := session(t, "full", h)
	res, text := call(t, modern, "list_providers", map[string]any{})
	if res.IsError || text != `{"providers":[{"provider":"codex"}]}` {
		t.Errorf("modern answer %q", text)
	}
	if _, ok := res.StructuredContent.(map[string]any); !ok {
		t.Errorf("structuredContent is %T, want an object", res.StructuredContent)
	}
	_, text = call(t, modern, "get_runtime_status", nil)
	if text != `{"note":"a <b> & c"}` {
		t.Errorf("answer was escaped or pretty: %q", text)
	}
	res, text = call(t, modern, "list_work_items", map[string]any{})
	if !res.IsError || !strings.Contains(text, "cannot be encoded") {
		t.Errorf("a non-object answer must be refused: %q", text)
	}

	legacy := session(t, "legacy", h)
	res, text = call(t, legacy, "list_agents", map[string]any{})
	if res.IsError || text != `[{"provider":"codex"}]` {
		t.Errorf("legacy list_agents text %q, want the bare array", text)
	}
	if m, ok := res.StructuredContent.(map[string]any); !ok || m["providers"] == nil {
		t.Errorf("legacy structuredContent must stay the object: %#v", res.StructuredContent)
	}
}

func TestUnimplementedToolsSayWhichCapabilityIsMissing(t *testing.T) {
	cs := session(t, "full", &fakeHandlers{})
	res, text := call(t, cs, "list_claims", map[string]any{})
	if !res.IsError || text != "list_claims is not available in this build: the claims capability is not implemented yet" {
		t.Errorf("got %v %q", res.IsError, text)
	}
}

func TestProgressReporterOnlyWithToken(t *testing.T) {
	h := &fakeHandlers{}
	cs := session(t, "full", h)
	call(t, cs, "list_providers", map[string]any{})
	if h.sawProgress {
		t.Error("progress reporter present without a token")
	}
	params := &mcp.CallToolParams{Name: "list_providers", Arguments: map[string]any{}}
	params.SetProgressToken("tok")
	if _, err := cs.CallTool(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	if !h.sawProgress {
		t.Error("progress reporter missing with a token")
	}
}

func TestOversizedArgumentsRefused(t *testing.T) {
	cs := session(t, "full", &fakeHandlers{})
	big := strings.Repeat("a", MaxArgumentBytes)
	res, text := call(t, cs, "create_conversation", map[string]any{"title": big})
	if !res.IsError || !strings.Contains(text, "the limit is 1048576") {
		t.Errorf("got %q", text[:min(len(text), 200)])
	}
}

func TestToolsListBuiltFromListings(t *testing.T) {
	p, _ := catalogs.LookupProfile("minimal")
	b, err := BuildToolsList(p.Entries(true))
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Tools []map[string]any }
	if err := json.Unmarshal(b, &v); err != nil || len(v.Tools) != len(p.Entries(true)) {
		t.Fatalf("%v %d", err, len(v.Tools))
	}
}
