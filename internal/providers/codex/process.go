package codex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/agent-interop/runtime/internal/procgroup"
)

// ProcessSpec is the command line of one app-server process.
type ProcessSpec struct {
	Argv []string
	Env  []string // full environment (nil: inherit)
	Dir  string
}

// Link is one connection to an app-server: the JSON-RPC byte stream and the
// process behind it. Closing the stream ends the connection; for a process
// started by [StartProcess] it also stops the process group.
type Link struct {
	io.ReadWriteCloser
	// PID is the process id (0 when unknown).
	PID int
	// Exited is closed when the process has exited (nil when the link has
	// no process of its own).
	Exited <-chan struct{}
	// ExitReason describes how the process ended ("" while it runs).
	ExitReason func() string
	// Kill kills the process group at once (nil when there is none).
	Kill func()
}

// Dialer opens a Link. The default is [StartProcess]; tests substitute
// simulated peers and fault-injecting wrappers.
type Dialer func(ctx context.Context, spec ProcessSpec) (*Link, error)

// stderrTail keeps the last bytes a process wrote to stderr.
type stderrTail struct {
	mu  sync.Mutex
	buf []byte
}

const stderrTailSize = 4096

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > stderrTailSize {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-stderrTailSize:]...)
	}
	return len(p), nil
}

func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

type procStream struct {
	stdin  io.WriteCloser
	stdout io.ReadCloser
	proc   *procState
	once   sync.Once
}

type procState struct {
	cmd    *exec.Cmd
	tail   *stderrTail
	exited chan struct{}
	mu     sync.Mutex
	reason string
}

func (s *procStream) Read(p []byte) (int, error)  { return s.stdout.Read(p) }
func (s *procStream) Write(p []byte) (int, error) { return s.stdin.Write(p) }

// Close closes stdin (app-server exits on EOF), waits briefly, then kills
// the process group.
func (s *procStream) Close() error {
	s.once.Do(func() {
		_ = s.stdin.Close()
		select {
		case <-s.proc.exited:
		case <-time.After(time.Second):
		}
		s.proc.kill()
		<-s.proc.exited
		_ = s.stdout.Close()
	})
	return nil
}

func (p *procState) kill() {
	if p.cmd.Process == nil {
		return
	}
	// The negative pid addresses the whole group: children die too.
	_ = procgroup.Kill(p.cmd.Process.Pid)
}

func (p *procState) exitReason() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reason
}

// StartProcess starts spec in a new process group and links its stdio.
func StartProcess(_ context.Context, spec ProcessSpec) (*Link, error) {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return nil, errors.New("no codex app-server command")
	}
	cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env
	procgroup.Set(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	// An explicit pipe (not StdoutPipe): Wait must not close the read end
	// before the last messages of a dying process were read.
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		_ = stdin.Close()
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	cmd.Stdout = stdoutW
	tail := &stderrTail{}
	cmd.Stderr = tail
	if err := cmd.Start(); err != nil {
		_ = stdin.Close()
		_ = stdout.Close()
		_ = stdoutW.Close()
		return nil, fmt.Errorf("start %s: %w", spec.Argv[0], err)
	}
	_ = stdoutW.Close()
	ps := &procState{cmd: cmd, tail: tail, exited: make(chan struct{})}
	go func() {
		werr := cmd.Wait()
		reason := "exited"
		if werr != nil {
			reason = werr.Error()
		}
		if t := tail.String(); t != "" {
			reason += "; stderr: " + lastLine(t)
		}
		ps.mu.Lock()
		ps.reason = reason
		ps.mu.Unlock()
		close(ps.exited)
	}()
	s := &procStream{stdin: stdin, stdout: stdout, proc: ps}
	return &Link{
		ReadWriteCloser: s,
		PID:             cmd.Process.Pid,
		Exited:          ps.exited,
		ExitReason:      ps.exitReason,
		Kill:            ps.kill,
	}, nil
}

// lastLine returns the last line of s that reports an error ("Error: …",
// as codex prints before a stack backtrace), else the last non-empty line,
// bounded in length.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "Error:") || strings.HasPrefix(l, "error:") {
			s = l
			break
		}
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 400 {
		s = s[len(s)-400:]
	}
	return s
}
