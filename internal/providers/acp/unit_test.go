package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agent-interop/runtime/internal/jsonrpc"
	"github.com/agent-interop/runtime/internal/providers"
)

// recordingHandler records inbound notifications and requests in order.
type recordingHandler struct {
	mu    sync.Mutex
	order []string
}

func (h *recordingHandler) handleRequest(_ context.Context, method string, _ json.RawMessage) (any, *RPCError) {
	h.mu.Lock()
	h.order = append(h.order, "request "+method)
	h.mu.Unlock()
	if method == "known" {
		return map[string]bool{"ok": true}, nil
	}
	return nil, methodNotFound(method)
}

func (h *recordingHandler) handleNotification(method string, _ json.RawMessage) {
	h.mu.Lock()
	h.order = append(h.order, "notify "+method)
	h.mu.Unlock()
}

func (h *recordingHandler) got() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.order...)
}

// pipePeer is the agent side of an in-memory connection.
type pipePeer struct {
	in  *bufio.Reader // what the client wrote
	out io.WriteCloser
}

func newPipe(t *testing.T, h inboundHandler) (*conn, *pipePeer) {
	t.Helper()
	cr, pw := io.Pipe() // agent -> client
	pr, cw := io.Pipe() // client -> agent
	c := newConn(cw, cr, h, nil, nil, nil)
	t.Cleanup(func() { _ = pw.Close(); _ = pr.Close() })
	return c, &pipePeer{in: bufio.NewReader(pr), out: pw}
}

func (p *pipePeer) read(t *testing.T) jsonrpc.Message {
	t.Helper()
	line, err := p.in.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var m jsonrpc.Message
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func (p *pipePeer) send(t *testing.T, s string) {
	t.Helper()
	if _, err := io.WriteString(p.out, s+"\n"); err != nil {
		t.Fatal(err)
	}
}

func TestConnAnswerErrorAndLoss(t *testing.T) {
	h := &recordingHandler{}
	c, p := newPipe(t, h)
	ctx := context.Background()

	done := make(chan error, 1)
	var written bool
	go func() {
		_, err := c.Call(ctx, "x/one", nil, func() { written = true })
		done <- err
	}()
	m := p.read(t)
	// An answer without "jsonrpc", with an error: the agent's refusal.
	p.send(t, `{"id":`+string(m.ID)+`,"error":{"code":-32000,"message":"Authentication required"}}`)
	err := <-done
	var re *RPCError
	if !errors.As(err, &re) || re.Code != CodeAuthRequired || !IsAuthRequired(err) || !written {
		t.Fatalf("refusal: %v (written %v)", err, written)
	}

	// Written, then the peer goes away: uncertain, never NotWrittenError.
	go func() {
		_, err := c.Call(ctx, "x/two", nil, nil)
		done <- err
	}()
	p.read(t)
	_ = p.out.Close()
	err = <-done
	var nw *NotWrittenError
	if !errors.Is(err, ErrConnectionClosed) || errors.As(err, &nw) {
		t.Fatalf("lost: %v", err)
	}
	// After the end nothing is written.
	if _, err := c.Call(ctx, "x/three", nil, nil); !errors.As(err, &nw) {
		t.Fatalf("after close: %v", err)
	}
}

func TestConnContextEndsAfterWrite(t *testing.T) {
	c, p := newPipe(t, &recordingHandler{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, "x/slow", nil, nil)
		done <- err
	}()
	p.read(t)
	cancel()
	err := <-done
	var nw *NotWrittenError
	if !errors.Is(err, ErrNoAnswer) || errors.As(err, &nw) {
		t.Fatalf("ctx after write: %v", err)
	}
	ended, stop := context.WithCancel(context.Background())
	stop()
	if _, err := c.Call(ended, "x/never", nil, nil); !errors.As(err, &nw) {
		t.Fatalf("ctx before write: %v", err)
	}
}

func TestConnInboundOrderAndUnknownMethods(t *testing.T) {
	h := &recordingHandler{}
	_, p := newPipe(t, h)
	p.send(t, `{"jsonrpc":"2.0","method":"session/update","params":{}}`)
	p.send(t, `{"jsonrpc":"2.0","id":7,"method":"known","params":{}}`)
	if m := p.read(t); string(m.ID) != "7" || string(m.Result) != `{"ok":true}` {
		t.Fatalf("answer %+v", m)
	}
	p.send(t, `{"jsonrpc":"2.0","id":"s-1","method":"cursor/unknown","params":{}}`)
	m := p.read(t)
	if string(m.ID) != `"s-1"` || m.Error == nil || m.Error.Code != CodeMethodNotFound || !strings.Contains(string(m.Error.Data), "cursor/unknown") {
		t.Fatalf("unknown: %+v", m)
	}
	p.send(t, `not json at all`)
	got := h.got()
	if len(got) < 2 || got[0] != "notify session/update" || got[1] != "request known" {
		t.Fatalf("order %v", got)
	}
}

func TestResolveDecision(t *testing.T) {
	opts := []providers.PermissionOption{
		{ID: "allow", Kind: "allow_once"}, {ID: "allow_always", Kind: "allow_always"}, {ID: "reject", Kind: "reject_once"},
	}
	for decision, want := range map[string]string{"allow_once": "allow", "allow_always": "allow_always", "reject_once": "reject", "reject": "reject"} {
		d, err := resolveDecision(opts, decision)
		if err != nil || d.Option == nil || d.Option.ID != want {
			t.Errorf("%s: %+v %v", decision, d, err)
		}
	}
	if d, err := resolveDecision(opts, "cancelled"); err != nil || !d.Cancelled {
		t.Errorf("cancelled: %+v %v", d, err)
	}
	_, err := resolveDecision(opts, "reject_always")
	var de *DecisionError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "offered kinds: allow_once, allow_always, reject_once") {
		t.Errorf("unoffered: %v", err)
	}
}

func TestConfigOptionDecoding(t *testing.T) {
	raw := []json.RawMessage{
		json.RawMessage(`{"id":"model","name":"Model","category":"model","type":"select","currentValue":"b",
			"options":[{"group":"g1","name":"G1","options":[{"value":"a","name":"A"}]},{"value":"b","name":"B"}]}`),
		json.RawMessage(`{"id":"fast","name":"Fast","type":"boolean","currentValue":false}`),
		json.RawMessage(`{"id":"weird","type":"future_kind","currentValue":{"x":1}}`),
		json.RawMessage(`"not an object"`),
	}
	opts := decodeConfigOptions(raw)
	if len(opts) != 3 {
		t.Fatalf("decoded %d options", len(opts))
	}
	if got := opts[0].Values(); strings.Join(got, ",") != "a,b" || opts[0].Current() != "b" || !opts[0].Offers("a") || opts[0].Offers("c") {
		t.Fatalf("grouped select: %v %q", got, opts[0].Current())
	}
	if opts[1].Current() != "false" || !opts[1].Offers("true") {
		t.Fatalf("boolean: %+v", opts[1])
	}
	if string(opts[2].Raw) == "" || opts[2].Type != "future_kind" {
		t.Fatalf("unknown type not kept raw: %+v", opts[2])
	}
	if o, ok := optionFor(opts, "thought_level", "fast"); !ok || o.ID != "fast" {
		t.Fatalf("optionFor by id: %+v %v", o, ok)
	}
}

func TestDefaultFileReader(t *testing.T) {
	root := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "1\n2\n3\n4\n")
	write(".env", "TOKEN=x\n")
	write("big.txt", strings.Repeat("x", 1_000_001))
	write("bin.dat", "a\x00b")
	r := DefaultFileReader{}
	cases := []struct {
		path        string
		line, limit int
		want, err   string
	}{
		{path: filepath.Join(root, "a.txt"), want: "1\n2\n3\n4\n"},
		{path: filepath.Join(root, "a.txt"), line: 2, limit: 2, want: "2\n3\n"},
		{path: "a.txt", line: 4, want: "4\n"},
		{path: filepath.Join(root, "a.txt"), line: 9, want: ""},
		{path: filepath.Join(root, ".env"), err: "Protected file access denied"},
		{path: filepath.Join(filepath.Dir(root), "x.txt"), err: "escapes"},
		{path: filepath.Join(root, "..", filepath.Base(root), "..", "etc"), err: "escapes"},
		{path: filepath.Join(root, "big.txt"), err: "1 MB"},
		{path: filepath.Join(root, "bin.dat"), err: "Binary"},
		{path: filepath.Join(root, "missing.txt"), err: "not found"},
	}
	for _, c := range cases {
		got, err := r.ReadText(root, c.path, c.line, c.limit)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %q, %v; want error %q", c.path, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s line %d limit %d: %q %v; want %q", c.path, c.line, c.limit, got, err, c.want)
		}
	}
	if _, err := r.ReadText(root, filepath.Join(root, "missing.txt"), 0, 0); !errors.Is(err, ErrFileNotFound) {
		t.Errorf("missing file is not ErrFileNotFound: %v", err)
	}
}

func TestSliceLinesClamp(t *testing.T) {
	text := strings.Repeat("l\n", MaxReadLines+5)
	if got := strings.Count(sliceLines(text, 1, 1_000_000), "\n"); got != MaxReadLines {
		t.Fatalf("limit not clamped: %d lines", got)
	}
	if got := sliceLines("a\nb", 0, 0); got != "a\nb" {
		t.Fatalf("whole text: %q", got)
	}
}

func TestPermissionTarget(t *testing.T) {
	tests := []struct {
		name, toolCall, title string
		want                  Paths
	}{
		{"edit names its locations and raw input once each",
			`{"title":"Edit a.go","kind":"edit","locations":[{"path":"/w/a.go"}],"rawInput":{"file_path":"/w/a.go","path":"/w/b.go"}}`,
			"Edit a.go", Paths{Known: []string{"/w/a.go", "/w/b.go"}}},
		{"a call of no kind is read like an edit", `{"title":"Write","rawInput":{"notebook_path":"/w/n.ipynb"}}`,
			"Write", Paths{Known: []string{"/w/n.ipynb"}}},
		{"opencode's filepath and filePath", `{"title":"a.txt","kind":"edit","rawInput":{"filepath":"/w/a.txt"}}`,
			"a.txt", Paths{Known: []string{"/w/a.txt"}}},
		{"delete and move name theirs", `{"kind":"move","locations":[{"path":"/w/x"},{"path":"/w/y"}]}`,
			"", Paths{Known: []string{"/w/x", "/w/y"}}},
		{"a command's writes are unknown", `{"title":"printf x > c.txt","kind":"execute","rawInput":{"command":"printf x > c.txt"}}`,
			"printf x > c.txt", Paths{Unknown: true}},
		{"a read writes nothing", `{"title":"Read","kind":"read","locations":[{"path":"/w/a.go"}]}`, "Read", Paths{}},
		{"a malformed tool call names nothing", `"not an object"`, "", Paths{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			title, got := permissionTarget(json.RawMessage(tt.toolCall))
			if title != tt.title || got.Unknown != tt.want.Unknown || !slices.Equal(got.Known, tt.want.Known) {
				t.Fatalf("permissionTarget = %q, %+v; want %q, %+v", title, got, tt.title, tt.want)
			}
		})
	}
}

// TestBoundedEventData: an event over maxEventBytes loses its _meta (noted),
// one still over keeps only its kind and the note; a small one is kept.
func TestBoundedEventData(t *testing.T) {
	big := strings.Repeat("x", maxEventBytes)
	tests := []struct {
		name, in string
		want     func(map[string]any) bool
	}{
		{"small kept", `{"sessionUpdate":"plan","_meta":{"a":1}}`, func(m map[string]any) bool {
			return m["sessionUpdate"] == "plan" && m["_meta"] != nil && m["_omitted"] == nil
		}},
		{"meta dropped", `{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"status"}],"_meta":{"skills":"` + big + `"}}`, func(m map[string]any) bool {
			return m["_meta"] == nil && m["availableCommands"] != nil && strings.Contains(m["_omitted"].(string), "_meta of")
		}},
		{"all omitted", `{"sessionUpdate":"agent_message_chunk","content":{"text":"` + big + `"}}`, func(m map[string]any) bool {
			return m["sessionUpdate"] == "agent_message_chunk" && m["content"] == nil && strings.Contains(m["_omitted"].(string), "data of")
		}},
		{"not an object", `"` + big + `"`, func(m map[string]any) bool { return m["_omitted"] != nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := bounded(json.RawMessage(tt.in))
			var m map[string]any
			if len(out) > maxEventBytes || json.Unmarshal(out, &m) != nil || !tt.want(m) {
				t.Fatalf("bounded = %.300s (%d bytes)", out, len(out))
			}
		})
	}
}
