package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// Target is one server configuration to measure.
type Target struct {
	Name     string   // the row's label: "baseline", "full", "full --read-only"
	Path     string   // the built binary
	Args     []string // its arguments
	Tools    []string // trivial tools to call: the first one tools/list offers
	Baseline bool     // the minimal go-sdk server every ratio refers to
	// Compare marks another build of the runtime (-compare), measured in
	// the same rounds for a before/after figure; the targets leave it out.
	Compare bool
	// NewStore empties the target's state directory after every spawn
	// (it starts empty), so each server starts without a store
	// (Config.NewStore).
	NewStore bool
}

// SpawnOptions say how one spawn talks to its server.
type SpawnOptions struct {
	Env      []string      // the whole environment of the server
	Dir      string        // its working directory
	Protocol string        // protocolVersion sent in initialize (or in _meta with Discover)
	Discover bool          // open the session with server/discover, as a go-sdk v1.8 client does
	Calls    int           // trivial tools/call requests after tools/list
	Timeout  time.Duration // per request, and for the server to exit at the end
}

// Sample is what one spawn measured.
type Sample struct {
	InitMs     Figure `json:"initMs"` // cmd.Start → initialize answer read
	Protocol   string `json:"protocol"`
	ListUs     Figure `json:"listUs"`     // first tools/list: request written → answer read
	ListWarmUs Figure `json:"listWarmUs"` // a second tools/list right after the first
	ListBytes  int    `json:"listBytes"`
	Tool       string `json:"tool"`
	CallP50Us  Figure `json:"callP50Us"`
	CallP99Us  Figure `json:"callP99Us"`
	RSSInitMiB Figure `json:"rssInitMiB"` // VmHWM right after initialize
	// RSSIdleMiB is VmHWM once the server is idle as a client leaves it:
	// after notifications/initialized and tools/list, when the start-up
	// work that follows initialized has stopped using the CPU (see
	// waitQuiet). AnonIdleMiB is RssAnon then.
	RSSIdleMiB  Figure `json:"rssIdleMiB"`
	AnonIdleMiB Figure `json:"anonIdleMiB"`
	RSSCallsMiB Figure `json:"rssCallsMiB"` // VmHWM after the calls
	// AnonInitMiB and AnonCallsMiB are RssAnon (anonymous memory resident
	// at that moment, no file-backed page) right after initialize and
	// after the calls.
	AnonInitMiB  Figure          `json:"anonInitMiB"`
	AnonCallsMiB Figure          `json:"anonCallsMiB"`
	ListResult   json.RawMessage `json:"-"`
	Stderr       string          `json:"-"`
}

// Spawn starts t's server once, talks to it the way an MCP client does
// (initialize, notifications/initialized, tools/list, then o.Calls calls of
// a trivial tool), measures each step and kills the process group. tools/list
// is asked twice: the first answer is what a client waits for, the second
// shows the cost once the process is warm.
func Spawn(ctx context.Context, t Target, o SpawnOptions) (Sample, error) {
	p, err := startProcess(t, o)
	if err != nil {
		return Sample{}, err
	}
	s, runErr := p.measure(ctx, t, o)
	stopErr := p.stop(ctx, min(o.Timeout, stopGrace))
	s.Stderr = p.stderr.String()
	if runErr != nil {
		return s, fmt.Errorf("%s: %w%s", t.Name, runErr, p.diagnosis())
	}
	if stopErr != nil {
		return s, fmt.Errorf("%s: %w", t.Name, stopErr)
	}
	return s, nil
}

// stopGrace bounds how long a server may take to exit once its stdin is
// closed, before its process group is killed.
const stopGrace = 2 * time.Second

type process struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	conn    *Conn
	stderr  *cappedBuffer
	started time.Time // just before cmd.Start
	ready   time.Time // when the initialize (or server/discover) answer was read
}

func startProcess(t Target, o SpawnOptions) (*process, error) {
	cmd := exec.Command(t.Path, t.Args...)
	cmd.Env = o.Env
	cmd.Dir = o.Dir
	ownProcessGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("%s: stdin pipe: %w", t.Name, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("%s: stdout pipe: %w", t.Name, err)
	}
	p := &process{cmd: cmd, stdin: stdin, stderr: &cappedBuffer{limit: 1 << 20}}
	cmd.Stderr = p.stderr
	cmd.WaitDelay = time.Second
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: start %s: %w", t.Name, t.Path, err)
	}
	p.conn = NewConn(stdin, stdout)
	return p, nil
}

func (p *process) call(ctx context.Context, timeout time.Duration, method string, params any) (Exchange, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ex, err := p.conn.Call(ctx, method, params)
	if errors.Is(err, ErrTimeout) {
		err = fmt.Errorf("%w (%v)", err, timeout)
	}
	return ex, err
}

func (p *process) measure(ctx context.Context, t Target, o SpawnOptions) (Sample, error) {
	var s Sample
	var meta map[string]any
	var err error
	if o.Discover {
		meta = discoverMeta(o.Protocol)
		s.Protocol, err = p.discover(ctx, o, meta)
	} else {
		s.Protocol, err = p.initialize(ctx, o)
	}
	if err != nil {
		return s, err
	}
	s.InitMs = Figure(Millis(p.ready.Sub(p.started)))
	if s.RSSInitMiB, s.AnonInitMiB, err = p.memory(); err != nil {
		return s, err
	}
	if !o.Discover {
		if err := p.conn.Notify("notifications/initialized", nil); err != nil {
			return s, err
		}
	}

	var listParams any
	if meta != nil {
		listParams = map[string]any{"_meta": meta}
	}
	list, err := p.call(ctx, o.Timeout, "tools/list", listParams)
	if err != nil {
		return s, err
	}
	s.ListUs, s.ListBytes, s.ListResult = Figure(Micros(list.Latency())), len(list.Result), list.Result
	warm, err := p.call(ctx, o.Timeout, "tools/list", listParams)
	if err != nil {
		return s, fmt.Errorf("second %w", err)
	}
	s.ListWarmUs = Figure(Micros(warm.Latency()))
	if err := p.waitQuiet(ctx, o.Timeout); err != nil {
		return s, err
	}
	if s.RSSIdleMiB, s.AnonIdleMiB, err = p.memory(); err != nil {
		return s, err
	}
	names, err := ToolNames(list.Result)
	if err != nil {
		return s, err
	}
	if s.Tool, err = pickTool(names, t.Tools); err != nil {
		return s, err
	}

	params := map[string]any{"name": s.Tool, "arguments": map[string]any{}}
	if meta != nil {
		params["_meta"] = meta
	}
	lat := make([]float64, 0, o.Calls)
	for i := range o.Calls {
		ex, err := p.call(ctx, o.Timeout, "tools/call", params)
		if err != nil {
			return s, fmt.Errorf("call %d of %s: %w", i+1, s.Tool, err)
		}
		if err := checkToolResult(ex.Result); err != nil {
			return s, fmt.Errorf("call %d of %s: %w", i+1, s.Tool, err)
		}
		lat = append(lat, Micros(ex.Latency()))
	}
	s.CallP50Us, s.CallP99Us = Figure(Percentile(lat, 50)), Figure(Percentile(lat, 99))
	if s.RSSCallsMiB, s.AnonCallsMiB, err = p.memory(); err != nil {
		return s, err
	}
	return s, nil
}

// initialize performs the handshake every MCP revision before 2026-07-28
// uses and returns the protocol version the server chose.
func (p *process) initialize(ctx context.Context, o SpawnOptions) (string, error) {
	ex, err := p.call(ctx, o.Timeout, "initialize", map[string]any{
		"protocolVersion": o.Protocol,
		"capabilities":    map[string]any{},
		"clientInfo":      clientInfo(),
	})
	if err != nil {
		return "", err
	}
	p.ready = ex.Recv
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(ex.Result, &r); err != nil || r.ProtocolVersion == "" {
		return "", fmt.Errorf("initialize answered without a protocolVersion: %s", truncate(ex.Result, 200))
	}
	return r.ProtocolVersion, nil
}

// discover opens a sessionless 2026-07-28 exchange the way a go-sdk v1.8
// client does by default: server/discover, and from then on the protocol
// version, client info and capabilities in every request's _meta.
func (p *process) discover(ctx context.Context, o SpawnOptions, meta map[string]any) (string, error) {
	ex, err := p.call(ctx, o.Timeout, "server/discover", map[string]any{"_meta": meta})
	if err != nil {
		return "", err
	}
	p.ready = ex.Recv
	var r struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if err := json.Unmarshal(ex.Result, &r); err != nil {
		return "", fmt.Errorf("decode the server/discover result: %w", err)
	}
	if !slices.Contains(r.SupportedVersions, o.Protocol) {
		return "", fmt.Errorf("server/discover: the server supports %v, not %s", r.SupportedVersions, o.Protocol)
	}
	return o.Protocol, nil
}

func clientInfo() map[string]string {
	return map[string]string{"name": "interop-bench", "version": "1.0.0"}
}

func discoverMeta(protocol string) map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    protocol,
		"io.modelcontextprotocol/clientInfo":         clientInfo(),
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
}

// memory is the server's VmHWM and RssAnon in MiB, or NaN where /proc
// does not exist.
func (p *process) memory() (peak, anon Figure, err error) {
	if runtime.GOOS != "linux" {
		return Figure(math.NaN()), Figure(math.NaN()), nil
	}
	m, err := ReadMemory(p.cmd.Process.Pid)
	if err != nil {
		return 0, 0, err
	}
	return Figure(MiB(m.PeakRSS)), Figure(MiB(m.Anon)), nil
}

// Quiet is when a server counts as idle in waitQuiet: it used less than
// QuietCPU of CPU time over QuietWindow (the Go runtime's own background
// work, sysmon and the scavenger, stays well under it).
const (
	QuietWindow = 50 * time.Millisecond
	QuietCPU    = time.Millisecond
)

// waitQuiet waits until the server has been quiet for a whole QuietWindow
// (its start-up work after initialized is done), at most timeout (then it
// returns without error). Where /proc does not exist it returns at once.
func (p *process) waitQuiet(ctx context.Context, timeout time.Duration) error {
	if runtime.GOOS != "linux" {
		return nil
	}
	pid := p.cmd.Process.Pid
	deadline := time.Now().Add(timeout)
	last, err := ProcessCPU(pid)
	if err != nil {
		return err
	}
	t := time.NewTicker(QuietWindow)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		now, err := ProcessCPU(pid)
		if err != nil {
			return err
		}
		if now-last < QuietCPU {
			return nil
		}
		if time.Now().After(deadline) {
			// VmHWM is a peak: read later, it can only be as large or
			// larger, so a server that never goes quiet is measured as it
			// is at the deadline rather than not at all.
			return nil
		}
		last = now
	}
}

func pickTool(names, candidates []string) (string, error) {
	for _, c := range candidates {
		for _, n := range names {
			if n == c {
				return c, nil
			}
		}
	}
	return "", fmt.Errorf("tools/list offers none of the trivial tools %s (it has %d tools)", strings.Join(candidates, ", "), len(names))
}

// checkToolResult refuses a tool error: a benchmark of error answers would
// measure the wrong path.
func checkToolResult(result json.RawMessage) error {
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return fmt.Errorf("decode tools/call result: %w", err)
	}
	if r.IsError {
		msg := ""
		if len(r.Content) > 0 {
			msg = r.Content[0].Text
		}
		return fmt.Errorf("the tool answered an error: %s", truncate([]byte(msg), 300))
	}
	return nil
}

// stop closes stdin, gives the server up to grace to end its output, then
// kills its process group and reaps it. It never leaves a process behind.
func (p *process) stop(ctx context.Context, grace time.Duration) error {
	_ = p.stdin.Close()
	dctx, cancel := context.WithTimeout(ctx, grace)
	_ = p.conn.Drain(dctx)
	cancel()
	p.conn.Close()
	killErr := killProcessGroup(p.cmd)
	_ = p.cmd.Wait() // the exit status stays in cmd.ProcessState for diagnosis
	if killErr != nil {
		return fmt.Errorf("kill the process group of pid %d: %w", p.cmd.Process.Pid, killErr)
	}
	return nil
}

// diagnosis describes how the server ended, for an error message.
func (p *process) diagnosis() string {
	var b strings.Builder
	if st := p.cmd.ProcessState; st != nil {
		fmt.Fprintf(&b, " (server ended: %s)", st)
	}
	if tail := strings.TrimSpace(p.stderr.Tail(2000)); tail != "" {
		fmt.Fprintf(&b, "\nserver stderr:\n%s", tail)
	}
	return b.String()
}

// cappedBuffer keeps the first limit bytes written to it.
type cappedBuffer struct {
	mu    sync.Mutex
	limit int
	b     []byte
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.limit - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.b)
}

// Tail is the last n bytes written (within the limit).
func (c *cappedBuffer) Tail(n int) string {
	s := c.String()
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}

// IsolatedEnv is the whole environment of a spawned server: HOME, the XDG
// directories, TMPDIR and INTEROP_DB inside dir, a PATH with no programs
// (no provider can be found or started), and proxies pointing at a closed
// loopback port so any stray HTTP request fails fast without leaving the
// machine, while loopback stays direct.
func IsolatedEnv(dir string) ([]string, error) {
	sub := func(name string) (string, error) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			return "", fmt.Errorf("create %s: %w", p, err)
		}
		return p, nil
	}
	env := []string{"INTEROP_DB=" + filepath.Join(dir, "interop.db"), "INTEROP_LOG_LEVEL=warn", "LANG=C"}
	for _, kv := range [][2]string{
		{"HOME", "home"}, {"TMPDIR", "tmp"}, {"PATH", "bin"},
		{"XDG_CONFIG_HOME", "home/.config"}, {"XDG_DATA_HOME", "home/.local/share"},
		{"XDG_STATE_HOME", "home/.local/state"}, {"XDG_CACHE_HOME", "home/.cache"},
	} {
		p, err := sub(kv[1])
		if err != nil {
			return nil, err
		}
		env = append(env, kv[0]+"="+p)
	}
	const closed = "http://127.0.0.1:9"
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
		env = append(env, k+"="+closed)
	}
	return append(env, "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1"), nil
}
