package workflow

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"time"
)

// capture keeps the first max bytes written to it and counts the rest, so a
// chatty process never blocks on a full pipe and never fills memory.
type capture struct {
	max       int
	buf       []byte
	truncated bool
}

func (c *capture) Write(p []byte) (int, error) {
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

func (c *capture) String() string { return strings.ToValidUTF8(string(c.buf), "\uFFFD") }

// procResult is what one run of a process produced.
type procResult struct {
	exitCode *int
	signal   *string
	timedOut bool
	stdout   capture
	stderr   capture
	err      string // the process could not be started, or was canceled
}

// runProcess runs exe without a shell in its own process group. On timeout
// (or cancellation) the group gets SIGTERM, then SIGKILL after killGrace.
func runProcess(ctx context.Context, exe string, args []string, dir string, env []string, lim verifyLimits) procResult {
	res := procResult{stdout: capture{max: lim.outputCap}, stderr: capture{max: lim.outputCap}}
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout = &res.stdout
	cmd.Stderr = &res.stderr
	setProcessGroup(cmd)
	// A descendant that left the process group could keep the pipes open;
	// stop waiting for its output shortly after the process itself is gone.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		res.err = err.Error()
		return res
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(lim.timeout)
	defer timer.Stop()
	var waitErr error
	select {
	case waitErr = <-done:
	case <-timer.C:
		res.timedOut = true
		waitErr = stopGroup(cmd, done, lim.killGrace)
	case <-ctx.Done():
		res.err = "canceled: " + ctx.Err().Error()
		waitErr = stopGroup(cmd, done, lim.killGrace)
	}
	res.exitCode, res.signal = exitStatus(cmd)
	if waitErr != nil && res.err == "" && res.exitCode == nil && res.signal == nil {
		var ee *exec.ExitError
		if !errors.As(waitErr, &ee) {
			res.err = waitErr.Error()
		}
	}
	return res
}

// stopGroup sends SIGTERM to the process group, waits up to grace, then
// sends SIGKILL and waits for the process to be reaped.
func stopGroup(cmd *exec.Cmd, done <-chan error, grace time.Duration) error {
	terminateGroup(cmd)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-done:
		killGroup(cmd) // descendants that ignored SIGTERM
		return err
	case <-t.C:
		killGroup(cmd)
		return <-done
	}
}
