package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

// fakeServerEnv makes the test binary act as a stdio server (see TestMain).
const fakeServerEnv = "INTEROP_BENCH_FAKE_SERVER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeServerEnv); mode != "" {
		os.Exit(fakeServerMain(mode))
	}
	os.Exit(pgtest.Main(m))
}

// fakeStoreLogEnv names the file a fake server in mode store appends to.
const fakeStoreLogEnv = "INTEROP_BENCH_FAKE_STORE_LOG"

// fakeServerMain is a tiny line-oriented MCP server. Modes: ok, toolerror,
// exit (fails before answering), hang (starts a child in its process group
// and never answers), sleep (the child), store (as ok, after it appended
// to $INTEROP_BENCH_FAKE_STORE_LOG whether $INTEROP_DB existed, then
// wrote it).
func fakeServerMain(mode string) int {
	switch mode {
	case "store":
		db := os.Getenv("INTEROP_DB")
		_, err := os.Stat(db)
		log, lerr := os.OpenFile(os.Getenv(fakeStoreLogEnv), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if lerr != nil {
			fmt.Fprintln(os.Stderr, lerr)
			return 1
		}
		fmt.Fprintln(log, err == nil)
		log.Close()
		if err := os.WriteFile(db, []byte("store"), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	case "exit":
		fmt.Fprintln(os.Stderr, "fake server: cannot open the store")
		return 3
	case "sleep":
		time.Sleep(time.Minute)
		return 0
	case "hang":
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), fakeServerEnv+"=sleep")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "child %d\n", child.Process.Pid)
		time.Sleep(time.Minute)
		return 0
	}
	sc := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for sc.Scan() {
		var req struct {
			ID     *int64          `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil || req.ID == nil {
			continue
		}
		var result string
		switch req.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"fake","version":"0"}}`
		case "server/discover":
			result = `{"supportedVersions":["2026-07-28","2025-06-18"],"capabilities":{}}`
		case "tools/list":
			result = `{"tools":[{"name":"other","inputSchema":{"type":"object"}},{"name":"ping","description":"Answer ok.","inputSchema":{"type":"object"}}]}`
		case "tools/call":
			result = `{"content":[{"type":"text","text":"ok"}]}`
			if mode == "toolerror" {
				result = `{"content":[{"type":"text","text":"store is closed"}],"isError":true}`
			}
		default:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%d,"error":{"code":-32601,"message":"method not found"}}`+"\n", *req.ID)
			out.Flush()
			continue
		}
		// A notification first, as a real server may send one.
		fmt.Fprintln(out, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"x"}}`)
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%d,"result":%s}`+"\n", *req.ID, result)
		out.Flush()
	}
	return 0
}

func fakeTarget(t *testing.T, mode string) (Target, SpawnOptions) {
	t.Helper()
	dir := t.TempDir()
	env, err := IsolatedEnv(dir)
	if err != nil {
		t.Fatal(err)
	}
	return Target{Name: "fake-" + mode, Path: os.Args[0], Tools: []string{"missing", "ping"}},
		SpawnOptions{Env: append(env, fakeServerEnv+"="+mode), Dir: dir, Protocol: "2025-06-18", Calls: 20, Timeout: 5 * time.Second}
}

func TestSpawnMeasures(t *testing.T) {
	for _, discover := range []bool{false, true} {
		t.Run(fmt.Sprintf("discover=%v", discover), func(t *testing.T) {
			tg, o := fakeTarget(t, "ok")
			if discover {
				o.Discover, o.Protocol = true, "2026-07-28"
			}
			s, err := Spawn(context.Background(), tg, o)
			if err != nil {
				t.Fatal(err)
			}
			if s.Tool != "ping" {
				t.Errorf("tool = %q, want the first offered candidate", s.Tool)
			}
			want := "2025-06-18"
			if discover {
				want = "2026-07-28"
			}
			if s.Protocol != want {
				t.Errorf("protocol = %q, want %q", s.Protocol, want)
			}
			if s.InitMs <= 0 || s.ListUs <= 0 || s.CallP50Us <= 0 || s.CallP99Us < s.CallP50Us {
				t.Errorf("figures = %+v", s)
			}
			if s.ListBytes != len(s.ListResult) || s.ListBytes == 0 {
				t.Errorf("list bytes %d, result %d", s.ListBytes, len(s.ListResult))
			}
			if runtime.GOOS == "linux" && (s.RSSInitMiB <= 0 || s.RSSCallsMiB < s.RSSInitMiB) {
				t.Errorf("RSS %v then %v", s.RSSInitMiB, s.RSSCallsMiB)
			}
		})
	}
}

func TestSpawnEarlyExit(t *testing.T) {
	tg, o := fakeTarget(t, "exit")
	_, err := Spawn(context.Background(), tg, o)
	if err == nil {
		t.Fatal("a server that exits before answering passed")
	}
	for _, want := range []string{"fake-exit", "initialize", "closed its output", "exit status 3", "cannot open the store"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestSpawnToolError(t *testing.T) {
	tg, o := fakeTarget(t, "toolerror")
	_, err := Spawn(context.Background(), tg, o)
	if err == nil || !strings.Contains(err.Error(), "store is closed") || !strings.Contains(err.Error(), "call 1 of ping") {
		t.Fatalf("err = %v", err)
	}
}

func TestSpawnNoTrivialTool(t *testing.T) {
	tg, o := fakeTarget(t, "ok")
	tg.Tools = []string{"get_runtime_status"}
	_, err := Spawn(context.Background(), tg, o)
	if err == nil || !strings.Contains(err.Error(), "none of the trivial tools get_runtime_status") {
		t.Fatalf("err = %v", err)
	}
}

func TestSpawnMissingBinary(t *testing.T) {
	tg, o := fakeTarget(t, "ok")
	tg.Path = "/nonexistent/interop-runtime"
	_, err := Spawn(context.Background(), tg, o)
	if err == nil || !strings.Contains(err.Error(), "start /nonexistent/interop-runtime") {
		t.Fatalf("err = %v", err)
	}
}

func TestSpawnTimeoutKillsProcessGroup(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks /proc")
	}
	tg, o := fakeTarget(t, "hang")
	// The fake must have started its child before the spawn gives up; on a
	// busy machine that can take longer than a short timeout, so the spawn
	// is retried with longer ones until the child was reported.
	var pid int
	for _, timeout := range []time.Duration{300 * time.Millisecond, time.Second, 3 * time.Second, 10 * time.Second} {
		o.Timeout = timeout
		// The fake never answers: only the timeout can end the spawn.
		s, err := Spawn(context.Background(), tg, o)
		if err == nil || !strings.Contains(err.Error(), "timed out") {
			t.Fatalf("err = %v", err)
		}
		for _, l := range strings.Split(s.Stderr, "\n") {
			if v, ok := strings.CutPrefix(l, "child "); ok {
				pid, _ = strconv.Atoi(v)
			}
		}
		if pid != 0 {
			break
		}
	}
	if pid == 0 {
		t.Fatal("the fake server never reported its child, even with a 10 s timeout")
	}
	deadline := time.Now().Add(30 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("child %d of the hung server is still running", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether pid runs (a zombie waiting for its reaper does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

func TestSpawnCancelled(t *testing.T) {
	tg, o := fakeTarget(t, "hang")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Spawn(ctx, tg, o); err == nil {
		t.Fatal("a cancelled spawn passed")
	}
}

func TestIsolatedEnv(t *testing.T) {
	dir := t.TempDir()
	env, err := IsolatedEnv(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	for _, k := range []string{"HOME", "TMPDIR", "PATH", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "INTEROP_DB"} {
		if !strings.HasPrefix(got[k], dir) {
			t.Errorf("%s = %q, not inside %s", k, got[k], dir)
		}
	}
	if st, err := os.Stat(got["HOME"]); err != nil || !st.IsDir() {
		t.Errorf("HOME not created: %v", err)
	}
	if got["HTTPS_PROXY"] != "http://127.0.0.1:9" || !strings.Contains(got["NO_PROXY"], "127.0.0.1") {
		t.Errorf("proxy settings %q %q", got["HTTPS_PROXY"], got["NO_PROXY"])
	}
	for k := range got {
		if k == "INTEROP_TOOLS_PROFILE" || k == "INTEROP_READ_ONLY" || k == "GODEBUG" {
			t.Errorf("%s leaks into the server's environment", k)
		}
	}
}

func TestCappedBuffer(t *testing.T) {
	b := &cappedBuffer{limit: 8}
	for _, s := range []string{"abcde", "fghij", "klm"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if b.String() != "abcdefgh" {
		t.Errorf("kept %q", b.String())
	}
	if b.Tail(3) != "…fgh" || b.Tail(100) != "abcdefgh" {
		t.Errorf("tails %q %q", b.Tail(3), b.Tail(100))
	}
}

func TestCheckToolResult(t *testing.T) {
	if err := checkToolResult(json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`)); err != nil {
		t.Error(err)
	}
	if err := checkToolResult(json.RawMessage(`{"isError":true,"content":[{"type":"text","text":"bad"}]}`)); err == nil || !strings.Contains(err.Error(), "bad") {
		t.Errorf("err = %v", err)
	}
	if err := checkToolResult(json.RawMessage(`[]`)); err == nil {
		t.Error("a non-object result passed")
	}
}
