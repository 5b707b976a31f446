// Package supervise runs one provider program for an adapter: it starts
// the program in a process group of its own (so the helpers it starts end
// with it), with the environment the runtime gives provider programs,
// keeps the tail of what it writes to stderr for error messages, asks the
// kernel to end it when the runtime dies (Linux; see internal/procgroup),
// and stops it gracefully, then kills it, waiting on the injected clock.
//
// An adapter fills a [Spec] and calls [Start]; it reads [Process.Stdout]
// and writes [Process.Stdin] when it asked for pipes, watches
// [Process.Exited], and ends the program with [Process.Stop] (or
// [Process.Kill] when it must go at once). [Process.ExitReason] says how
// it ended, with the error line of its stderr.
package supervise

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/procgroup"
)

// DefaultTailBytes is how much of a program's stderr is kept when
// Spec.TailBytes is 0.
const DefaultTailBytes = 4096

// Output says where the program's stdout goes.
type Output int

const (
	// StdoutPipe gives the adapter a pipe to read (Process.Stdout).
	StdoutPipe Output = iota
	// StdoutTail keeps stdout in the same bounded tail as stderr (a
	// server whose output is only diagnostics).
	StdoutTail
	// StdoutDiscard drops stdout.
	StdoutDiscard
)

// Spec is how to start one program.
type Spec struct {
	// Argv is the program and its arguments; Argv[0] is required.
	Argv []string
	// Dir is the working directory ("" = the runtime's).
	Dir string
	// Env is the runtime's environment policy for provider programs: the
	// adapter passes the environment it was given (adapters.Config's
	// ChildEnv; a team store strips its credentials from it). nil inherits
	// the runtime's own environment.
	Env []string
	// Extra variables ("K=V") are added after Env (a started server's
	// credentials, an agent entry's env).
	Extra []string
	// Stdin gives the program a pipe on stdin (Process.Stdin); without it
	// stdin is the null device.
	Stdin bool
	// Stdout says where stdout goes (default StdoutPipe).
	Stdout Output
	// TailBytes bounds the kept stderr (default DefaultTailBytes).
	TailBytes int
	// ParentDeath asks the kernel to send SIGTERM to the program when the
	// runtime dies (Linux only; elsewhere a no-op).
	ParentDeath bool
	// Clock times Stop's grace periods (default the real clock).
	Clock quartz.Clock
	// Launch, when set, starts the prepared command instead of the default
	// (a process group of its own, then cmd.Start). A launcher that gives
	// the program a session of its own, such as a pseudo-terminal, makes
	// it a group leader too, so Stop and Kill still reach the whole group.
	// Launch may set cmd.Stdin/Stdout/Stderr itself; Spec.Stdin and
	// StdoutPipe are then ignored.
	Launch func(cmd *exec.Cmd) error
}

// Grace is how Stop ends a program.
type Grace struct {
	// AfterStdin is how long to wait for the program to exit by itself
	// after its stdin was closed (a program that exits on end of input);
	// 0 does not wait.
	AfterStdin time.Duration
	// AfterTerm is how long to wait after asking the group to end
	// (SIGTERM; CTRL_BREAK on Windows) before killing it; 0 kills at once
	// without asking.
	AfterTerm time.Duration
}

// Process is one started program.
type Process struct {
	cmd    *exec.Cmd
	clock  quartz.Clock
	tail   *Tail
	stdin  io.WriteCloser
	stdout *os.File
	exited chan struct{}

	stopOnce sync.Once
	mu       sync.Mutex
	waitErr  error
}

// Start starts spec.Argv as spec says. The program is reaped in the
// background; Exited is closed once it is.
func Start(spec Spec) (*Process, error) {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return nil, errors.New("supervise: no program to start (empty command)")
	}
	clock := spec.Clock
	if clock == nil {
		clock = quartz.NewReal()
	}
	size := spec.TailBytes
	if size <= 0 {
		size = DefaultTailBytes
	}
	cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
	cmd.Dir = spec.Dir
	cmd.Env = environ(spec.Env, spec.Extra)
	p := &Process{cmd: cmd, clock: clock, tail: NewTail(size), exited: make(chan struct{})}
	if spec.Launch != nil {
		if err := spec.Launch(cmd); err != nil {
			return nil, fmt.Errorf("starting %s: %w", spec.Argv[0], err)
		}
		go p.wait()
		return p, nil
	}

	if spec.ParentDeath {
		procgroup.SetWithParentDeath(cmd, syscall.SIGTERM)
	} else {
		procgroup.Set(cmd)
	}
	var closers []io.Closer // closed if the start fails
	fail := func(err error) (*Process, error) {
		for _, c := range closers {
			_ = c.Close()
		}
		return nil, err
	}
	if spec.Stdin {
		w, err := cmd.StdinPipe()
		if err != nil {
			return fail(fmt.Errorf("stdin pipe for %s: %w", spec.Argv[0], err))
		}
		p.stdin = w
		closers = append(closers, w)
	}
	var stdoutW *os.File
	switch spec.Stdout {
	case StdoutPipe:
		// An explicit pipe (not StdoutPipe): Wait must not close the read
		// end before the last lines of a dying program were read.
		r, w, err := os.Pipe()
		if err != nil {
			return fail(fmt.Errorf("stdout pipe for %s: %w", spec.Argv[0], err))
		}
		p.stdout, stdoutW = r, w
		cmd.Stdout = w
		closers = append(closers, r, w)
	case StdoutTail:
		cmd.Stdout = p.tail
	}
	cmd.Stderr = p.tail
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("starting %s: %w", spec.Argv[0], err))
	}
	if stdoutW != nil {
		_ = stdoutW.Close() // the child holds its own copy
	}
	go p.wait()
	return p, nil
}

// environ applies the environment policy: env (nil: the runtime's own)
// plus extra. nil stays nil when there is nothing extra (exec inherits).
func environ(env, extra []string) []string {
	if len(extra) == 0 {
		return env
	}
	if env == nil {
		env = os.Environ()
	}
	return append(append([]string(nil), env...), extra...)
}

func (p *Process) wait() {
	err := p.cmd.Wait()
	p.mu.Lock()
	p.waitErr = err
	p.mu.Unlock()
	close(p.exited)
}

// PID is the program's process id, also its process group id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Stdin is the pipe to the program's stdin (nil without Spec.Stdin).
func (p *Process) Stdin() io.WriteCloser { return p.stdin }

// Stdout is the read end of the program's stdout (nil unless
// StdoutPipe). It stays readable after the program exited until Stop
// closes it, so the last lines are not lost.
func (p *Process) Stdout() io.ReadCloser {
	if p.stdout == nil {
		return nil
	}
	return p.stdout
}

// Exited is closed once the program has exited and was reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Alive reports whether the program has not exited yet.
func (p *Process) Alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Err is the program's exit error (nil for a clean exit, and while it
// runs); an *exec.ExitError says how it ended.
func (p *Process) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waitErr
}

// State is the program's process state once it exited (nil before).
func (p *Process) State() *os.ProcessState {
	select {
	case <-p.exited:
		return p.cmd.ProcessState
	default:
		return nil
	}
}

// Tail is the kept end of the program's stderr (and stdout with
// StdoutTail), trimmed of surrounding space.
func (p *Process) Tail() string { return p.tail.String() }

// ExitReason says how the program ended: "" while it runs, else
// "exited" or the exit error, with the error line of its stderr
// (ErrorLine) when it wrote any.
func (p *Process) ExitReason() string {
	select {
	case <-p.exited:
	default:
		return ""
	}
	reason := "exited"
	if err := p.Err(); err != nil {
		reason = err.Error()
	}
	if t := p.Tail(); t != "" {
		reason += "; stderr: " + ErrorLine(t)
	}
	return reason
}

// Kill kills the program's whole process group at once. It is safe to
// call at any time, also after the program exited.
func (p *Process) Kill() {
	// The group is addressed by the leader's pid: children die too.
	_ = procgroup.Kill(p.PID())
}

// Stop ends the program and returns once it was reaped: it closes stdin
// and waits up to g.AfterStdin, then asks the group to end and waits up
// to g.AfterTerm, then kills the group. The group is killed once more
// after the leader exited, for children that outlived it; then stdout is
// closed. Only the first call stops; later calls wait for the exit.
func (p *Process) Stop(g Grace) {
	p.stopOnce.Do(func() {
		if p.stdin != nil {
			_ = p.stdin.Close()
			if g.AfterStdin > 0 && p.Alive() {
				p.waitExit(g.AfterStdin, "stdin")
			}
		}
		if g.AfterTerm > 0 && p.Alive() {
			_ = procgroup.Terminate(p.PID())
			p.waitExit(g.AfterTerm, "term")
		}
		if p.Alive() {
			p.Kill()
		}
		<-p.exited
		p.Kill() // children left in the group outlive the leader
		if p.stdout != nil {
			_ = p.stdout.Close()
		}
	})
	<-p.exited
}

// waitExit waits until the program exited or d passed on the clock.
func (p *Process) waitExit(d time.Duration, step string) {
	t := p.clock.NewTimer(d, "supervise", step)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
	}
}

// ErrorLine picks the line of a stderr tail worth showing: the last one
// that reports an error ("Error: …", as Rust and Node programs print
// before a backtrace), else the last line, at most 400 bytes.
func ErrorLine(s string) string {
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

// Tail keeps the last bytes written to it; it is safe for concurrent use.
type Tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

// NewTail returns a Tail keeping at most max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

// Write keeps the end of p; it never fails.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append([]byte(nil), t.buf[over:]...)
	}
	return len(p), nil
}

// String is the kept bytes, trimmed of surrounding space.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// ExitDrain is how long [EndAfterExit] lets the last lines of an exited
// program be read before it ends the connection.
const ExitDrain = 250 * time.Millisecond

// EndAfterExit ends a connection over a program's stdio once the program
// exited: when done (the connection's end) does not close within drain on
// clock after exited closed, end is called, so a grandchild still holding
// the program's stdout does not keep the connection open. It returns at
// once; the wait runs in the background and stops when done closes.
func EndAfterExit(clock quartz.Clock, exited, done <-chan struct{}, drain time.Duration, end func()) {
	go func() {
		select {
		case <-exited:
		case <-done:
			return
		}
		t := clock.NewTimer(drain, "supervise", "exit-drain")
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			end()
		}
	}()
}
