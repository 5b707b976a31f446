package server

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
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

func (f *fakeHandlers) ListProviders(ctx context.Context, _ *catalogs.ListProvidersInput) (*catalogs.ListProvidersOutput, error) {
	f.sawProgress = progress.Requested(ctx)
	return &catalogs.ListProvidersOutput{Providers: []catalogs.ProviderCapabilities{{Provider: "codex", AdapterVersion: "1", Limitations: []string{}}}}, nil
}

func (f *fakeHandlers) GetRuntimeStatus(context.Context, *catalogs.GetRuntimeStatusInput) (*catalogs.GetRuntimeStatusOutput, error) {
	return &catalogs.GetRuntimeStatusOutput{Name: "agent-interop-runtime", ToolsetProfileDescription: "a <b> & c", Providers: []catalogs.ProviderBrief{}}, nil
}

func session(t *testing.T, profile string, h catalogs.Handlers) *mcp.ClientSession {
	t.Helper()
	return sessionWith(t, profile, Options{Handlers: h})
}

// sessionWith is session with the server's options (profile and version
// set here).
func sessionWith(t *testing.T, profile string, opts Options) *mcp.ClientSession {
	t.Helper()
	p, ok := catalogs.LookupProfile(profile)
	if !ok {
		t.Fatal("no profile", profile)
	}
	opts.Profile, opts.Version = p, "test"
	s := New(opts)
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
	if res.IsError || !strings.HasPrefix(text, `{"providers":[{"provider":"codex","adapterVersion":"1",`) || strings.Contains(text, "\n") {
		t.Errorf("modern answer %q", text)
	}
	var fromText any
	_ = json.Unmarshal([]byte(text), &fromText)
	if m, ok := res.StructuredContent.(map[string]any); !ok || mustJSON(t, m) != mustJSON(t, fromText) {
		t.Errorf("structuredContent is %T %v, want the text's object", res.StructuredContent, res.StructuredContent)
	}
	_, text = call(t, modern, "get_runtime_status", nil)
	if !strings.Contains(text, `"toolsetProfileDescription":"a <b> & c"`) {
		t.Errorf("answer was escaped or pretty: %q", text)
	}

	// A legacy alias whose 0.3.x answer is a bare array answers it in the
	// text and sends no structuredContent: a client that gives its model
	// structuredContent (Codex, Claude Code) would show the modern shape.
	legacy := session(t, "legacy", h)
	res, text = call(t, legacy, "list_agents", map[string]any{})
	if res.IsError || !strings.HasPrefix(text, `[{"provider":"codex",`) {
		t.Errorf("legacy list_agents text %q, want the bare array", text)
	}
	if res.StructuredContent != nil {
		t.Errorf("legacy list_agents sends structuredContent %#v; its 0.3.x answer is not an object", res.StructuredContent)
	}
	// An alias that keeps the modern shape (freebuff_status) keeps both.
	res, text = call(t, legacy, "freebuff_status", map[string]any{})
	if _, ok := res.StructuredContent.(map[string]any); res.IsError || !ok || !strings.HasPrefix(text, "{") {
		t.Errorf("freebuff_status: %q, structuredContent %T", text, res.StructuredContent)
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

// TestOpenHandlersOnTheFirstAcceptedCall: with OpenHandlers, initialize and
// tools/list build nothing; a call whose arguments are refused builds
// nothing either; the first accepted call opens the handlers, and an
// open that fails is that call's tool error.
func TestOpenHandlersOnTheFirstAcceptedCall(t *testing.T) {
	var opens int
	var fail error
	cs := sessionWith(t, "full", Options{OpenHandlers: func(context.Context) (catalogs.Handlers, error) {
		opens++
		if fail != nil {
			return nil, fail
		}
		return &fakeHandlers{}, nil
	}})
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if res, _ := call(t, cs, "get_runtime_status", map[string]any{"nope": 1}); !res.IsError || opens != 0 {
		t.Fatalf("refused arguments: error %v, handlers opened %d times", res.IsError, opens)
	}
	fail = errors.New("open the state store: disk on fire")
	res, text := call(t, cs, "get_runtime_status", map[string]any{})
	if !res.IsError || text != "get_runtime_status: the runtime could not start: open the state store: disk on fire" {
		t.Fatalf("failed open = %v %q", res.IsError, text)
	}
	fail = nil
	if res, text := call(t, cs, "get_runtime_status", map[string]any{}); res.IsError || !strings.Contains(text, "agent-interop-runtime") {
		t.Fatalf("after the open = %v %q", res.IsError, text)
	}
	if opens != 2 {
		t.Errorf("handlers opened %d times, want 2 (one per accepted call here)", opens)
	}
}

// fakeSignals records serve's signal handlers being started and waited
// for; a Wait blocks until release is closed.
type fakeSignals struct {
	mu      sync.Mutex
	starts  int
	waits   int
	entered chan struct{} // a Wait began
	release chan struct{}
}

func (f *fakeSignals) Start() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.starts++
}

func (f *fakeSignals) Wait() {
	f.mu.Lock()
	f.waits++
	f.mu.Unlock()
	select {
	case f.entered <- struct{}{}:
	default:
	}
	<-f.release
}

func (f *fakeSignals) counts() (starts, waits int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.starts, f.waits
}

// TestNoToolCallBeforeTheSignalHandlers: a session's first answer
// (server/discover, as go-sdk's client opens it, or initialize) and the
// answers from memory (tools/list, ping) start installing the handlers
// and do not wait for them; a tool call waits until they are installed,
// so once serve has done anything an interruption should end gracefully,
// Ctrl-C ends it gracefully.
func TestNoToolCallBeforeTheSignalHandlers(t *testing.T) {
	sig := &fakeSignals{entered: make(chan struct{}, 1), release: make(chan struct{})}
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(sig.release) }) }
	t.Cleanup(release) // a failure below must not leave the server waiting
	cs := sessionWith(t, "full", Options{Handlers: &fakeHandlers{}, Signals: sig})
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := cs.Ping(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if starts, waits := sig.counts(); starts < 2 || waits != 0 {
		t.Fatalf("after discover, tools/list and ping: Start %d times (want 2 or more), Wait %d times (want 0)", starts, waits)
	}
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_runtime_status", Arguments: map[string]any{}})
		called <- err
	}()
	<-sig.entered
	select {
	case err := <-called:
		t.Fatalf("a tool call was answered while the handlers were not installed (err %v)", err)
	default:
	}
	release()
	if err := <-called; err != nil {
		t.Fatal(err)
	}
	if _, waits := sig.counts(); waits != 1 {
		t.Fatalf("Wait %d times, want 1 (the call)", waits)
	}
}

// TestStartUpWorkWaitsForTheSignalHandlers: the start-up work (it reads
// the store) begins only once the handlers are installed.
func TestStartUpWorkWaitsForTheSignalHandlers(t *testing.T) {
	sig := &fakeSignals{entered: make(chan struct{}, 1), release: make(chan struct{})}
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(sig.release) }) }
	t.Cleanup(release)
	ran := make(chan struct{}, 1)
	cs := sessionWith(t, "full", Options{Handlers: &fakeHandlers{}, Signals: sig, AfterInitialize: func(context.Context) { ran <- struct{}{} }})
	if _, err := cs.ListTools(context.Background(), nil); err != nil { // answered: the start-up work starts
		t.Fatal(err)
	}
	<-sig.entered
	select {
	case <-ran:
		t.Fatal("the start-up work ran before the signal handlers were installed")
	default:
	}
	release()
	<-ran
}
