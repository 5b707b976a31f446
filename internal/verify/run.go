package verify

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/procgroup"
)

// Limits bound one run of a process.
type Limits struct {
	Timeout   time.Duration // then the group is stopped
	KillGrace time.Duration // between SIGTERM and SIGKILL
	OutputCap int           // bytes kept of stdout, and of stderr
	// Clock runs Timeout and KillGrace (the wall clock when nil); tags
	// "verify" "timeout" and "verify" "kill grace" name its timers.
	Clock quartz.Clock
}

// Output keeps the first max bytes written to it and counts the rest, so a
// chatty process never blocks on a full pipe and never fills memory.
type Output struct {
	max       int
	buf       []byte
	truncated bool
}

func (c *Output) Write(p []byte) (int, error) {
	if room := c.max - len(c.buf); room > 0 {
		if len(p) > room {
			c.buf = append(c.buf, p[:room]...)
			c.truncated = true
		} else {
			c.buf = append(c.buf, p...)
		}
	} else if len(p) > 0 {
		c.truncated = true
	}
	return len(p), nil
}

// String is what was kept, invalid UTF-8 replaced by U+FFFD.
func (c *Output) String() string { return strings.ToValidUTF8(string(c.buf), "\uFFFD") }

// Truncated reports whether more was written than was kept.
func (c *Output) Truncated() bool { return c.truncated }

// Result is what one run of a process produced.
type Result struct {
	ExitCode *int
	Signal   *string
	TimedOut bool
	Stdout   Output
	Stderr   Output
	Err      string // the process could not be started, or was canceled
}

// Run runs exe without a shell in its own process group. On timeout (or
// cancellation) the group gets SIGTERM, then SIGKILL after KillGrace.
func Run(ctx context.Context, exe string, args []string, dir string, env []string, lim Limits) Result {
	res := Result{Stdout: Output{max: lim.OutputCap}, Stderr: Output{max: lim.OutputCap}}
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout = &res.Stdout
	cmd.Stderr = &res.Stderr
	procgroup.Set(cmd)
	// A descendant that left the process group could keep the pipes open;
	// stop waiting for its output shortly after the process itself is gone.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		res.Err = err.Error()
		return res
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	clock := lim.Clock
	if clock == nil {
		clock = quartz.NewReal()
	}
	timer := clock.NewTimer(lim.Timeout, "verify", "timeout")
	defer timer.Stop()
	var waitErr error
	select {
	case waitErr = <-done:
	case <-timer.C:
		res.TimedOut = true
		waitErr = stopGroup(cmd, done, clock, lim.KillGrace)
	case <-ctx.Done():
		res.Err = "canceled: " + ctx.Err().Error()
		waitErr = stopGroup(cmd, done, clock, lim.KillGrace)
	}
	res.ExitCode, res.Signal = exitStatus(cmd)
	if waitErr != nil && res.Err == "" && res.ExitCode == nil && res.Signal == nil {
		var ee *exec.ExitError
		if !errors.As(waitErr, &ee) {
			res.Err = waitErr.Error()
		}
	}
	return res
}

// stopGroup sends SIGTERM to the process group, waits up to grace, then
// sends SIGKILL and waits for the process to be reaped.
func stopGroup(cmd *exec.Cmd, done <-chan error, clock quartz.Clock, grace time.Duration) error {
	_ = procgroup.Terminate(cmd.Process.Pid)
	t := clock.NewTimer(grace, "verify", "kill grace")
	defer t.Stop()
	select {
	case err := <-done:
		_ = procgroup.Kill(cmd.Process.Pid) // descendants that ignored SIGTERM
		return err
	case <-t.C:
		_ = procgroup.Kill(cmd.Process.Pid)
		return <-done
	}
}
