package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/agent-interop/runtime/internal/providers/kit/supervise"
	"github.com/coder/quartz"
	"github.com/creack/pty"
)

// PTY geometry of a managed CLI (0.3.x: xterm-256color, 160×48).
const (
	ptyCols      = 160
	ptyRows      = 48
	killGrace    = 2 * time.Second
	pasteStart   = "\x1b[200~"
	pasteEnd     = "\x1b[201~"
	keyClearLine = "\x15" // Ctrl-U
	keyEnter     = "\r"
	keyEsc       = "\x1b"
)

// ptySession is one freebuff process in a pseudo-terminal, in its own
// session and process group (killed as a group).
type ptySession struct {
	key       string
	root      string
	continued string
	pid       int
	startedAt time.Time
	before    map[string]struct{} // chat ids present before start

	proc  *supervise.Process
	tty   *os.File
	clock quartz.Clock

	writeMu sync.Mutex // one writer at a time (per-session write queue)

	mu      sync.Mutex
	vt      *vtScreen
	changed chan struct{}
	exited  bool
	exitErr error
	chatID  string
	done    chan struct{}
}

// startPTY starts exe with args in a new PTY session.
func startPTY(clock quartz.Clock, key, exe string, args []string, dir string, env []string) (*ptySession, error) {
	var tty *os.File
	proc, err := supervise.Start(supervise.Spec{
		Argv: append([]string{exe}, args...), Dir: dir, Env: env, Clock: clock,
		// pty.StartWithSize sets Setsid and Setctty: the child leads its own
		// session and process group, so the whole tree can be signalled as one.
		Launch: func(cmd *exec.Cmd) error {
			var err error
			tty, err = pty.StartWithSize(cmd, &pty.Winsize{Rows: ptyRows, Cols: ptyCols})
			return err
		},
	})
	if err != nil {
		return nil, fmt.Errorf("%w (in a PTY)", err) // err names exe
	}
	s := &ptySession{
		key: key, root: dir, pid: proc.PID(), startedAt: clock.Now(),
		proc: proc, tty: tty, clock: clock,
		changed: make(chan struct{}), done: make(chan struct{}),
		vt: newVTScreen(ptyRows, ptyCols),
	}
	go s.readLoop()
	go s.waitLoop()
	return s, nil
}

func (s *ptySession) readLoop() {
	buf := make([]byte, 32*1024)
	for {
		n, err := s.tty.Read(buf)
		if n > 0 {
			s.mu.Lock()
			s.vt.write(buf[:n])
			s.signalLocked()
			s.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

func (s *ptySession) waitLoop() {
	<-s.proc.Exited()
	err := s.proc.Err()
	s.mu.Lock()
	s.exited, s.exitErr = true, err
	s.signalLocked()
	s.mu.Unlock()
	close(s.done)
}

// signalLocked wakes waiters; callers hold s.mu.
func (s *ptySession) signalLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// state returns the current screen, the normalized visible text and the
// channel closed on the next change.
func (s *ptySession) state(classify func(string) string) (screen, text string, exited bool, changed <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	text = normalizeScreen(s.vt.text())
	return classify(text), text, s.exited, s.changed
}

// tail returns the last n characters of the visible screen.
func (s *ptySession) tail(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := normalizeScreen(s.vt.text())
	if len(t) > n {
		t = t[len(t)-n:]
	}
	return t
}

// write sends bytes to the terminal and reports how many were written.
func (s *ptySession) write(p string) (int, error) {
	s.mu.Lock()
	exited := s.exited
	s.mu.Unlock()
	if exited {
		return 0, errors.New("the Freebuff CLI process has exited")
	}
	return s.tty.Write([]byte(p))
}

// isExited reports whether the process ended.
func (s *ptySession) isExited() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exited
}

// kill terminates the whole process group: SIGTERM, then SIGKILL after a
// grace period, then closes the terminal.
func (s *ptySession) kill() {
	s.proc.Stop(supervise.Grace{AfterTerm: killGrace})
	<-s.done
	_ = s.tty.Close()
}

// probePTY opens and closes a PTY pair: the start-up probe.
func probePTY() error {
	master, slave, err := pty.Open()
	if err != nil {
		return explainPTY(err)
	}
	_ = slave.Close()
	return master.Close()
}

// waitScreen waits until cond accepts the screen, the process exits, the
// timer fires or ctx ends.
func (s *ptySession) waitChange(ctx context.Context, changed <-chan struct{}, timer *quartz.Timer) error {
	select {
	case <-changed:
		return nil
	case <-s.done:
		return nil
	case <-timer.C:
		return errTimeout
	case <-ctx.Done():
		return ctx.Err()
	}
}

var errTimeout = errors.New("timed out")
