package acp

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/agent-interop/runtime/internal/procgroup"
)

// stderrTailSize is how much of the agent's stderr is kept for error reports.
const stderrTailSize = 4096

// process is an agent program running in its own process group.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *tailBuffer

	waitOnce sync.Once
	exited   chan struct{}
	waitErr  error
}

// startProcess starts argv[0] with argv[1:] in dir with env (nil: inherit),
// in a new process group.
func startProcess(argv []string, dir string, env []string) (*process, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("no agent command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	procgroup.Set(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe for %s: %w", argv[0], err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("stdout pipe for %s: %w", argv[0], err)
	}
	tail := &tailBuffer{max: stderrTailSize}
	cmd.Stderr = tail
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	p := &process{cmd: cmd, stdin: stdin, stdout: stdout, stderr: tail, exited: make(chan struct{})}
	go p.wait()
	return p, nil
}

func (p *process) wait() {
	p.waitOnce.Do(func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	})
}

// pid returns the process id (also the process group id).
func (p *process) pid() int { return p.cmd.Process.Pid }

// stop ends the agent: close its stdin (a well-behaved agent exits on EOF),
// then SIGTERM and finally SIGKILL the whole process group, so children the
// agent started (the zed adapter's claude child) die with it.
func (p *process) stop(grace time.Duration) error {
	_ = p.stdin.Close()
	pgid := p.pid()
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = procgroup.Terminate(pgid)
		select {
		case <-p.exited:
		case <-time.After(2 * time.Second):
			_ = procgroup.Kill(pgid)
			<-p.exited
		}
	}
	// Children left in the group outlive the leader; kill them too.
	_ = procgroup.Kill(pgid)
	var ee *exec.ExitError
	if p.waitErr != nil && !errors.As(p.waitErr, &ee) {
		return fmt.Errorf("waiting for agent: %w", p.waitErr)
	}
	return nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
