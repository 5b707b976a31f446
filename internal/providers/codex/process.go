package codex

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/agent-interop/runtime/internal/providers/kit/supervise"
	"github.com/coder/quartz"
)

// ProcessSpec is the command line of one app-server process.
type ProcessSpec struct {
	Argv []string
	Env  []string // full environment (nil: inherit)
	Dir  string
	// Clock times the grace period of Close (nil: the real clock).
	Clock quartz.Clock
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

// closeGrace is how long Close waits for app-server to exit on the end of
// its input before the process group is killed.
const closeGrace = time.Second

// procStream is the stdio of a supervised app-server.
type procStream struct {
	proc *supervise.Process
}

func (s *procStream) Read(p []byte) (int, error)  { return s.proc.Stdout().Read(p) }
func (s *procStream) Write(p []byte) (int, error) { return s.proc.Stdin().Write(p) }

// Close closes stdin (app-server exits on EOF), waits briefly, then kills
// the process group.
func (s *procStream) Close() error {
	s.proc.Stop(supervise.Grace{AfterStdin: closeGrace})
	return nil
}

// StartProcess starts spec in a new process group and links its stdio.
func StartProcess(_ context.Context, spec ProcessSpec) (*Link, error) {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return nil, errors.New("no codex app-server command")
	}
	proc, err := supervise.Start(supervise.Spec{
		Argv: spec.Argv, Dir: spec.Dir, Env: spec.Env, Clock: spec.Clock,
		Stdin: true, Stdout: supervise.StdoutPipe,
	})
	if err != nil {
		return nil, err
	}
	return &Link{
		ReadWriteCloser: &procStream{proc: proc},
		PID:             proc.PID(),
		Exited:          proc.Exited(),
		ExitReason:      proc.ExitReason,
		Kill:            proc.Kill,
	}, nil
}
