// Package e2e runs the built interop-runtime binary as an MCP client does:
// over stdio, with the go-sdk client and with raw JSON-RPC lines.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/testutil/e2etest"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

var binary string

// TestMain builds the server once (with -race when the tests run under
// it) and, after the tests, fails the run when any run of the server
// reported a data race. Without the build tag e2e the package is a tier of
// its own that this run does not include (e2etest.TierSkip).
func TestMain(m *testing.M) {
	if !e2etest.Tier() {
		fmt.Println("skipped: " + e2etest.TierSkip)
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "interop-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary, err = e2etest.Build("../..", dir, "interop-runtime", "./cmd/interop-runtime")
	if err != nil {
		fmt.Fprintf(os.Stderr, "build interop-runtime: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	reportAnswers()
	pgtest.StopShared()
	if races, err := e2etest.RaceReports(dir); err != nil || races != "" {
		fmt.Fprintf(os.Stderr, "FAIL: the interop-runtime server reported data races (%v):\n%s\n", err, races)
		code = 1
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// isolatedEnv gives the server its own HOME and store.
func isolatedEnv(t *testing.T, extra ...string) []string {
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "INTEROP_DB=" + filepath.Join(home, "interop.db")}
	return append(env, extra...)
}

func connect(t *testing.T, args []string, env []string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	client := newClient(t, "e2e", args, env, nil)
	ctx, cancel := context.WithTimeout(context.Background(), wait.Process)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect %v: %v", args, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestEveryProfileListsItsTools(t *testing.T) {
	for _, p := range catalogs.Profiles() {
		for _, ro := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/readOnly=%v", p.Name, ro), func(t *testing.T) {
				args := []string{"serve", "--profile", p.Name}
				if ro {
					args = append(args, "--read-only")
				}
				cs := connect(t, args, isolatedEnv(t))
				ctx, cancel := context.WithTimeout(context.Background(), wait.Process)
				defer cancel()
				res, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				var got, want []string
				for _, tool := range res.Tools {
					got = append(got, tool.Name)
					if ro && (tool.Annotations == nil || !tool.Annotations.ReadOnlyHint) {
						t.Errorf("read-only server lists write tool %s", tool.Name)
					}
				}
				for _, e := range p.Entries(ro) {
					want = append(want, e.Name)
				}
				if !slices.Equal(got, want) {
					t.Errorf("tools = %v\nwant   %v", got, want)
				}
				status := "get_runtime_status"
				if p.Legacy {
					status = "freebuff_status"
				}
				call, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: status, Arguments: map[string]any{}})
				if err != nil || call.IsError {
					t.Fatalf("%s: %v %+v", status, err, call)
				}
				var st struct {
					Profile  string `json:"toolsetProfile"`
					ReadOnly bool   `json:"readOnly"`
					Tools    int    `json:"tools"`
					Version  string `json:"version"`
				}
				raw, _ := json.Marshal(call.StructuredContent)
				if err := json.Unmarshal(raw, &st); err != nil {
					t.Fatal(err)
				}
				if st.Profile != p.Name || st.ReadOnly != ro || st.Tools != len(want) || st.Version == "" {
					t.Errorf("status = %+v, want profile %s readOnly %v tools %d", st, p.Name, ro, len(want))
				}
			})
		}
	}
}

// rawSession speaks newline-delimited JSON-RPC to the binary.
type rawSession struct {
	t       *testing.T
	profile string
	// calls maps the id of each tools/call sent to its tool, so recv
	// checks the answer against its declared shape.
	calls  map[string]string
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *bytes.Buffer
	cmd    *exec.Cmd
}

func startRaw(t *testing.T, args []string, env []string) *rawSession {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &rawSession{t: t, profile: profileOf(args, env), calls: map[string]string{}, in: in, out: bufio.NewReaderSize(out, 1<<20), stderr: &stderr, cmd: cmd}
	t.Cleanup(func() { in.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return r
}

func (r *rawSession) send(line string) {
	r.t.Helper()
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal([]byte(line), &req) == nil && req.Method == "tools/call" && len(req.ID) > 0 {
		r.calls[string(req.ID)] = req.Params.Name
	}
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatal(err)
	}
}

// recv reads one stdout line; every stdout line must be JSON-RPC.
func (r *rawSession) recv() map[string]json.RawMessage {
	r.t.Helper()
	type result struct {
		line []byte
		err  error
	}
	ch := make(chan result, 1)
	go func() { l, err := r.out.ReadBytes('\n'); ch <- result{l, err} }()
	select {
	case res := <-ch:
		if res.err != nil {
			r.t.Fatalf("read: %v (stderr: %s)", res.err, r.stderr)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(res.line, &m); err != nil || string(m["jsonrpc"]) != `"2.0"` {
			r.t.Fatalf("stdout carried a non-JSON-RPC line: %q", res.line)
		}
		if name, ok := r.calls[string(m["id"])]; ok && m["result"] != nil {
			checkRawAnswer(r.t, r.profile, name, m["result"])
		}
		return m
	case <-time.After(wait.Process):
		r.t.Fatalf("no answer within %v", wait.Process)
	}
	return nil
}

func (r *rawSession) initialize() {
	r.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	r.recv()
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// TestSnapshotsEqualWhatIsServed compares catalogs/snapshots/<profile>.json
// with the tools/list result the binary answers a 2025-06-18 client.
func TestSnapshotsEqualWhatIsServed(t *testing.T) {
	for _, p := range catalogs.Profiles() {
		t.Run(p.Name, func(t *testing.T) {
			r := startRaw(t, []string{"serve", "--profile", p.Name}, isolatedEnv(t))
			r.initialize()
			r.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			served := r.recv()["result"]
			snap, err := os.ReadFile(filepath.Join("..", "..", "catalogs", "snapshots", p.Name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, snap); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(compact.Bytes(), served) {
				t.Errorf("served tools/list differs from the snapshot\nserved:   %.300s\nsnapshot: %.300s", served, compact.Bytes())
			}
		})
	}
}

func TestProtocolErrorsAndToolErrors(t *testing.T) {
	r := startRaw(t, []string{"serve", "--profile", "minimal"}, isolatedEnv(t))
	r.initialize()

	r.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`)
	if m := r.recv(); m["error"] == nil {
		t.Errorf("unknown tool answered without a protocol error: %s", m["result"])
	}

	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_session_events","arguments":{"provider":"nope","limit":0,"extra":true}}}`)
	m := r.recv()
	var res struct {
		IsError bool `json:"isError"`
		Content []struct{ Text string }
	}
	if err := json.Unmarshal(m["result"], &res); err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].Text
	// "nope" is a well-formed provider id (ids are open: the agent
	// catalog and the user's agents file); an unknown one is refused when
	// the call runs, after the arguments decode (providers_test.go).
	for _, want := range []string{"nativeId is required", "limit must be at least 1", "extra is not a known argument"} {
		if !res.IsError || !strings.Contains(text, want) {
			t.Errorf("bad-argument answer lacks %q: %s", want, text)
		}
	}

	r.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"send_session_message","arguments":{"provider":"codex","nativeId":"x","text":"` + strings.Repeat("a", 100001) + `"}}}`)
	if err := json.Unmarshal(r.recv()["result"], &res); err != nil || !res.IsError || !strings.Contains(res.Content[0].Text, "text must be at most 100000 characters (got 100001)") {
		t.Errorf("oversized text: %+v", res)
	}

	for line, code := range map[string]string{
		`{this is not json`:                          "-32700",
		`[{"jsonrpc":"2.0","id":9,"method":"ping"}]`: "-32600",
		`{"id":5,"method":"ping"}`:                   "-32600",
		`{"jsonrpc":"2.0","id":6}`:                   "-32600",
		`"just a string"`:                            "-32600",
	} {
		r.send(line)
		if m := r.recv(); !strings.Contains(string(m["error"]), code) {
			t.Errorf("%s: answered %s, want %s", line, m["error"], code)
		}
	}

	// The server is still alive and answering after all of the above.
	r.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_runtime_status"}}`)
	res.IsError = false
	if err := json.Unmarshal(r.recv()["result"], &res); err != nil || res.IsError {
		t.Errorf("status after bad input: %+v %v", res, err)
	}
}

func TestUnknownProfileExitsTwoWithUpstreamMessage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  []string
	}{
		{[]string{"serve", "--profile", "huge"}, nil},
		{[]string{"serve"}, []string{"INTEROP_TOOLS_PROFILE=huge"}},
	} {
		cmd := exec.Command(binary, tc.args...)
		cmd.Env = isolatedEnv(t, tc.env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 {
			t.Fatalf("%v: exit %v, want 2", tc.args, err)
		}
		want := "Unknown toolset profile 'huge'. Supported profiles: minimal, core, freebuff, legacy, full. Set INTEROP_TOOLS_PROFILE or pass --profile.\n"
		if stderr.String() != want || stdout.Len() != 0 {
			t.Errorf("stderr %q stdout %q", stderr.String(), stdout.String())
		}
	}
}

func TestEnvSelectsProfileAndReadOnly(t *testing.T) {
	cs := connect(t, []string{"serve"}, isolatedEnv(t, "INTEROP_TOOLS_PROFILE= Core ", "INTEROP_READ_ONLY=1"))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := catalogs.LookupProfile("core")
	if len(res.Tools) != len(p.Entries(true)) {
		t.Errorf("got %d tools, want core read-only %d", len(res.Tools), len(p.Entries(true)))
	}
}

func TestVersion(t *testing.T) {
	out, err := exec.Command(binary, "version").Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		t.Fatalf("version: %q %v", out, err)
	}
}

// children lists the processes whose parent is pid.
func children(t *testing.T, pid int) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var out []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may contain spaces, so split after ")".
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == fmt.Sprint(pid) {
			out = append(out, s[:i+1])
		}
	}
	return out
}

// TestStartupStartsNoProviderProcess: answering initialize (and the
// start-up reconciliation after it) starts no provider program, even when
// every provider program is on PATH.
func TestStartupStartsNoProviderProcess(t *testing.T) {
	path := "/usr/local/bin:/usr/bin:/bin"
	for _, p := range []realpeers.Program{realpeers.OpenCode, realpeers.Codex, realpeers.ClaudeACP} {
		bin := realpeers.Require(t, p)
		path = filepath.Dir(bin) + ":" + path
	}
	r := startRaw(t, []string{"serve"}, isolatedEnv(t, "PATH="+path))
	r.initialize()
	r.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_runtime_status","arguments":{}}}`)
	r.recv()
	if kids := children(t, r.cmd.Process.Pid); len(kids) > 0 {
		t.Fatalf("the server started processes before any provider tool was called: %v", kids)
	}
}
