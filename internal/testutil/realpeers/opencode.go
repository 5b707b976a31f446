package realpeers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/procgroup"
	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
)

// OpenCodeOptions configure StartOpenCode.
type OpenCodeOptions struct {
	Program  string        // path of opencode (required)
	Env      *Env          // environment (required; see OpenCodeEnv)
	Dir      string        // working directory of the server; default Env.Root()/project
	Password string        // when set, OPENCODE_SERVER_PASSWORD (Basic auth, user "opencode")
	Timeout  time.Duration // wait for /global/health; default 2 min (a bound for a failed start, on a shared machine)
	Args     []string      // extra arguments after the defaults
	// Port, when set, is the port to listen on (e.g. to start a server
	// again at the address a client knows); default a free one.
	Port int
}

// OpenCodeServer is a running `opencode serve` in its own process group.
type OpenCodeServer struct {
	URL      string // base URL, http://127.0.0.1:<port>
	Port     int
	Dir      string
	Env      *Env
	Password string
	Version  string // from /global/health

	cmd    *exec.Cmd
	output *syncBuffer
	exited chan struct{}
	once   sync.Once
}

// syncBuffer is a bounded, goroutine-safe log of the child's output.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

const maxLog = 1 << 20

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len()+len(p) > maxLog {
		keep := b.buf.Bytes()[max(0, b.buf.Len()+len(p)-maxLog):]
		rest := append([]byte(nil), keep...)
		b.buf.Reset()
		b.buf.Write(rest)
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// FreePort asks the kernel for a free loopback TCP port. Another process may
// take it before it is used, so callers retry on "address in use".
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// StartOpenCode starts `opencode serve --hostname 127.0.0.1 --port <free>
// --pure` in its own process group and waits until /global/health answers.
// The caller must Close it.
func StartOpenCode(ctx context.Context, opts OpenCodeOptions) (*OpenCodeServer, error) {
	if opts.Program == "" || opts.Env == nil {
		return nil, errors.New("StartOpenCode needs Program and Env")
	}
	if opts.Timeout == 0 {
		opts.Timeout = 2 * time.Minute
	}
	if opts.Dir == "" {
		opts.Dir = opts.Env.Root() + "/project"
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating server directory: %w", err)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		s, err := startOpenCodeOnce(ctx, opts)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

func startOpenCodeOnce(ctx context.Context, opts OpenCodeOptions) (*OpenCodeServer, error) {
	port, err := opts.Port, error(nil)
	if port == 0 {
		if port, err = FreePort(); err != nil {
			return nil, err
		}
	}
	env := opts.Env.Clone()
	if opts.Password != "" {
		env.Set("OPENCODE_SERVER_PASSWORD", opts.Password)
	}
	args := append([]string{"serve", "--hostname", "127.0.0.1", "--port", strconv.Itoa(port), "--pure", "--print-logs", "--log-level", "WARN"}, opts.Args...)
	cmd := exec.Command(opts.Program, args...)
	cmd.Dir = opts.Dir
	cmd.Env = env.Environ()
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	procgroup.SetWithParentDeath(cmd, syscall.SIGKILL)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", opts.Program, err)
	}
	s := &OpenCodeServer{
		URL: "http://127.0.0.1:" + strconv.Itoa(port), Port: port, Dir: opts.Dir, Env: env,
		Password: opts.Password, cmd: cmd, output: out, exited: make(chan struct{}),
	}
	go func() { _ = cmd.Wait(); close(s.exited) }()

	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	version, err := s.waitHealthy(ctx)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("opencode serve on port %d: %w\n--- output ---\n%s", port, err, out.String())
	}
	s.Version = version
	return s, nil
}

// waitHealthy polls /global/health until it answers JSON {healthy:true}.
func (s *OpenCodeServer) waitHealthy(ctx context.Context) (string, error) {
	client := &http.Client{Timeout: 2 * time.Second}
	defer client.CloseIdleConnections() // no pooled connection outlives the wait
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if v, err := s.health(ctx, client); err == nil {
			return v, nil
		}
		select {
		case <-s.exited:
			return "", fmt.Errorf("exited before it was healthy (%v)", s.cmd.ProcessState)
		case <-ctx.Done():
			return "", fmt.Errorf("not healthy in time: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

func (s *OpenCodeServer) health(ctx context.Context, client *http.Client) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/global/health", nil)
	if err != nil {
		return "", err
	}
	if s.Password != "" {
		req.SetBasicAuth("opencode", s.Password)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var h struct {
		Healthy bool   `json:"healthy"`
		Version string `json:"version"`
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("health: HTTP %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil || !h.Healthy {
		return "", fmt.Errorf("health: not healthy (%v)", err)
	}
	return h.Version, nil
}

// Alive reports whether the process is still running.
func (s *OpenCodeServer) Alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// PID is the server's process id (also its process group id).
func (s *OpenCodeServer) PID() int { return s.cmd.Process.Pid }

// Output returns the server's recent stdout and stderr.
func (s *OpenCodeServer) Output() string { return s.output.String() }

// Close stops the server's whole process group: SIGTERM, then SIGKILL after
// 3 s. It waits for the process and is idempotent.
func (s *OpenCodeServer) Close() {
	s.once.Do(func() { KillGroup(s.cmd.Process.Pid, s.exited, 3*time.Second) })
}

// Kill ends the server's whole process group at once (SIGKILL), as a crash
// does, and waits for it. Close afterwards is a no-op.
func (s *OpenCodeServer) Kill() {
	s.once.Do(func() {
		_ = procgroup.Kill(s.cmd.Process.Pid)
		<-s.exited
	})
}

// KillGroup sends SIGTERM to the process group pgid, waits for exited to
// close for at most grace, then sends SIGKILL and waits again.
func KillGroup(pgid int, exited <-chan struct{}, grace time.Duration) {
	_ = procgroup.Terminate(pgid)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-exited:
		// The leader is gone; make sure no child of the group survives.
		_ = procgroup.Kill(pgid)
		return
	case <-t.C:
	}
	_ = procgroup.Kill(pgid)
	<-exited
}

// OpenCodeFor starts a private opencode server for one test, configured by
// config (see OpenCodeConfig), and stops it at cleanup. It skips or fails
// per Require when opencode is not installed.
func OpenCodeFor(tb testing.TB, config map[string]any) *OpenCodeServer {
	tb.Helper()
	program := Require(tb, OpenCode)
	env := OpenCodeEnv(tb, config)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := StartOpenCode(ctx, OpenCodeOptions{Program: program, Env: env})
	if err != nil {
		tb.Fatalf("realpeers: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// SharedOpenCode is one opencode server and one fake model shared by the
// tests of a package (starting opencode costs about 3 s). Declare it as a
// package variable of the test package, call Get from each test and Close
// from TestMain after m.Run. Tests share the fake model's rules, so each test
// should use its own magic words, and isolate itself with its own project
// directory (?directory=).
type SharedOpenCode struct {
	// Password, when set before the first Get, protects the server.
	Password string

	mu  sync.Mutex
	srv *OpenCodeServer
	fm  *fakemodel.Server
	env *Env
	err error
}

// Get returns the shared server and fake model, starting them on first use.
// A missing program skips (or fails in CI) per Require; a start failure
// fails every test that asks.
func (s *SharedOpenCode) Get(tb testing.TB) (*OpenCodeServer, *fakemodel.Server) {
	tb.Helper()
	program := Require(tb, OpenCode)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv == nil && s.err == nil {
		s.err = s.start(program)
	}
	if s.err != nil {
		tb.Fatalf("realpeers: shared opencode: %v", s.err)
	}
	if !s.srv.Alive() {
		tb.Fatalf("realpeers: shared opencode died:\n%s", s.srv.Output())
	}
	return s.srv, s.fm
}

func (s *SharedOpenCode) start(program string) error {
	root, err := os.MkdirTemp("", "realpeers-opencode-")
	if err != nil {
		return fmt.Errorf("temporary directory: %w", err)
	}
	env, err := NewEnvAt(root)
	if err != nil {
		return err
	}
	fm, err := fakemodel.Start()
	if err != nil {
		return err
	}
	if err := SetOpenCode(env, OpenCodeConfig(fm.BaseURL())); err != nil {
		fm.Close()
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := StartOpenCode(ctx, OpenCodeOptions{Program: program, Env: env, Password: s.Password})
	if err != nil {
		fm.Close()
		return err
	}
	s.srv, s.fm, s.env = srv, fm, env
	return nil
}

// Close stops the shared server and fake model and removes their files.
func (s *SharedOpenCode) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		s.srv.Close()
		s.fm.Close()
		_ = os.RemoveAll(s.env.Root())
		s.srv, s.fm, s.env = nil, nil, nil
	}
}
