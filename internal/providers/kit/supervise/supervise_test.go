//go:build unix

package supervise

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// childMode names what the test binary does when it runs as a child (the
// re-exec pattern: the test starts its own binary with this variable set).
const childMode = "SUPERVISE_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childMode); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

// child is the fake provider program.
func child(mode string) int {
	switch mode {
	case "echo": // copies stdin lines to stdout until EOF, then exits 0
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			fmt.Println(sc.Text())
		}
		return 0
	case "fail": // writes an error report to stderr and exits 3
		fmt.Fprintln(os.Stderr, "warming up")
		fmt.Fprintln(os.Stderr, "Error: no model configured")
		fmt.Fprintln(os.Stderr, "   0: backtrace frame")
		return 3
	case "noisy": // writes 64 KiB to stderr, then its last words
		fmt.Fprint(os.Stderr, strings.Repeat("x", 64<<10))
		fmt.Fprint(os.Stderr, "\nlast words\n")
		return 1
	case "env": // prints the variables it was asked about
		for _, k := range strings.Split(os.Getenv("SUPERVISE_TEST_KEYS"), ",") {
			v, ok := os.LookupEnv(k)
			fmt.Printf("%s=%s,%v\n", k, v, ok)
		}
		return 0
	case "stubborn": // ignores SIGTERM and end of input; prints "ready"
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		select {}
	case "polite": // exits 0 on SIGTERM; ignores end of input; prints "ready"
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM)
		fmt.Println("ready")
		<-ch
		return 0
	case "parent": // starts a stubborn grandchild, prints its pid, waits
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), childMode+"=stubborn")
		cmd.Stdout = io.Discard
		if err := cmd.Start(); err != nil {
			return 9
		}
		fmt.Println(cmd.Process.Pid)
		select {}
	}
	return 100
}

// startChild starts the test binary in mode.
func startChild(t *testing.T, mode string, spec Spec) *Process {
	t.Helper()
	spec.Argv = []string{os.Args[0], "-test.run=^$"}
	spec.Extra = append(spec.Extra, childMode+"="+mode)
	p, err := Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill(); <-p.Exited() })
	return p
}

func readLine(t *testing.T, r io.Reader) string {
	t.Helper()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the child's stdout: %v", err)
	}
	return strings.TrimSpace(line)
}

func waitExited(t *testing.T, p *Process) {
	t.Helper()
	wait.Recv(t, "the child to exit", wait.Process, p.Exited())
}

func TestStartRefusesAnEmptyCommand(t *testing.T) {
	for _, argv := range [][]string{nil, {""}} {
		if _, err := Start(Spec{Argv: argv}); err == nil || !strings.Contains(err.Error(), "empty command") {
			t.Fatalf("Start(%q) = %v, want the empty command refused", argv, err)
		}
	}
}

func TestStartReportsAMissingProgram(t *testing.T) {
	_, err := Start(Spec{Argv: []string{"/nonexistent/agent"}})
	if err == nil || !strings.Contains(err.Error(), "starting /nonexistent/agent") {
		t.Fatalf("Start = %v, want it to name the program", err)
	}
}

func TestPipesAndCleanExit(t *testing.T) {
	p := startChild(t, "echo", Spec{Stdin: true})
	if _, err := io.WriteString(p.Stdin(), "hello\n"); err != nil {
		t.Fatal(err)
	}
	if got := readLine(t, p.Stdout()); got != "hello" {
		t.Fatalf("echo = %q", got)
	}
	if p.ExitReason() != "" || !p.Alive() || p.State() != nil {
		t.Fatalf("a running child: reason %q, alive %v, state %v", p.ExitReason(), p.Alive(), p.State())
	}
	p.Stop(Grace{AfterStdin: time.Minute}) // exits on EOF long before that
	if p.Err() != nil || p.ExitReason() != "exited" || !p.State().Success() {
		t.Fatalf("after EOF: err %v, reason %q", p.Err(), p.ExitReason())
	}
}

// TestStdoutOutlivesTheExit: the last lines of a program that exited are
// still readable (the read end is not closed by the reaping).
func TestStdoutOutlivesTheExit(t *testing.T) {
	p := startChild(t, "env", Spec{Extra: []string{"SUPERVISE_TEST_KEYS=SUPERVISE_TEST_KEYS"}})
	waitExited(t, p)
	if got := readLine(t, p.Stdout()); !strings.HasPrefix(got, "SUPERVISE_TEST_KEYS=") {
		t.Fatalf("stdout after the exit = %q", got)
	}
}

func TestExitReasonNamesTheErrorLine(t *testing.T) {
	p := startChild(t, "fail", Spec{})
	waitExited(t, p)
	var ee *exec.ExitError
	if !errors.As(p.Err(), &ee) || ee.ExitCode() != 3 {
		t.Fatalf("Err = %v, want exit status 3", p.Err())
	}
	if got, want := p.ExitReason(), "exit status 3; stderr: Error: no model configured"; got != want {
		t.Fatalf("ExitReason = %q, want %q", got, want)
	}
}

func TestTailIsBounded(t *testing.T) {
	p := startChild(t, "noisy", Spec{TailBytes: 100})
	waitExited(t, p)
	tail := p.Tail()
	if len(tail) > 100 || !strings.HasSuffix(tail, "last words") {
		t.Fatalf("tail (%d bytes) = %q", len(tail), tail)
	}
	if got := p.ExitReason(); got != "exit status 1; stderr: last words" {
		t.Fatalf("ExitReason = %q", got)
	}
}

func TestStdoutTailKeepsStdout(t *testing.T) {
	p := startChild(t, "env", Spec{Stdout: StdoutTail, Extra: []string{"SUPERVISE_TEST_KEYS=A", "A=1"}})
	waitExited(t, p)
	if p.Stdout() != nil {
		t.Fatal("a StdoutTail process has a stdout pipe")
	}
	if got := p.Tail(); got != "A=1,true" {
		t.Fatalf("tail = %q", got)
	}
}

// TestEnvironmentPolicy: the program sees exactly Env plus Extra (a team
// store's credentials left out of Env stay out); nil Env inherits.
func TestEnvironmentPolicy(t *testing.T) {
	t.Setenv("SUPERVISE_TEST_SECRET", "s3cret")
	keys := "SUPERVISE_TEST_KEYS=SUPERVISE_TEST_SECRET,ADDED,PATH"
	p := startChild(t, "env", Spec{Env: []string{"PATH=/bin"}, Extra: []string{keys, "ADDED=yes"}})
	waitExited(t, p)
	out, _ := io.ReadAll(p.Stdout())
	if want := "SUPERVISE_TEST_SECRET=,false\nADDED=yes,true\nPATH=/bin,true\n"; string(out) != want {
		t.Fatalf("child environment:\n%s\nwant\n%s", out, want)
	}

	p = startChild(t, "env", Spec{Extra: []string{"SUPERVISE_TEST_KEYS=SUPERVISE_TEST_SECRET"}})
	waitExited(t, p)
	if out, _ := io.ReadAll(p.Stdout()); string(out) != "SUPERVISE_TEST_SECRET=s3cret,true\n" {
		t.Fatalf("inherited environment: %q", out)
	}
}

// TestGracefulStopOnTheClock: a program that ignores its end of input is
// asked to end (SIGTERM) only when the stdin grace passed on the injected
// clock, and ends there; the kill is never needed.
func TestGracefulStopOnTheClock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	clock := quartz.NewMock(t)
	trap := clock.Trap().NewTimer("supervise")
	defer trap.Close()
	p := startChild(t, "polite", Spec{Stdin: true, Clock: clock})
	if got := readLine(t, p.Stdout()); got != "ready" {
		t.Fatalf("child said %q", got)
	}
	stopped := make(chan struct{})
	go func() { p.Stop(Grace{AfterStdin: 5 * time.Second, AfterTerm: time.Hour}); close(stopped) }()

	call := trap.MustWait(ctx)
	if call.Duration != 5*time.Second || !strings.Contains(strings.Join(call.Tags, ","), "stdin") {
		t.Fatalf("first wait %v %v, want the 5s stdin grace", call.Duration, call.Tags)
	}
	call.MustRelease(ctx)
	if !p.Alive() {
		t.Fatal("the child ended on EOF, but it ignores EOF")
	}
	clock.Advance(5 * time.Second).MustWait(ctx)

	call = trap.MustWait(ctx) // SIGTERM sent; the term grace is armed
	if call.Duration != time.Hour {
		t.Fatalf("second wait %v, want the term grace", call.Duration)
	}
	call.MustRelease(ctx)
	select {
	case <-stopped:
	case <-ctx.Done():
		t.Fatal("Stop did not return after SIGTERM ended the child")
	}
	if p.Err() != nil {
		t.Fatalf("the child exited %v, want a clean exit on SIGTERM (no kill)", p.Err())
	}
}

// TestKillAfterTheTermGrace: a program that ignores SIGTERM is killed
// when the term grace passed on the clock.
func TestKillAfterTheTermGrace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	clock := quartz.NewMock(t)
	trap := clock.Trap().NewTimer("supervise", "term")
	defer trap.Close()
	p := startChild(t, "stubborn", Spec{Clock: clock})
	if got := readLine(t, p.Stdout()); got != "ready" {
		t.Fatalf("child said %q", got)
	}
	stopped := make(chan struct{})
	go func() { p.Stop(Grace{AfterTerm: 3 * time.Second}); close(stopped) }()
	trap.MustWait(ctx).MustRelease(ctx)
	select {
	case <-stopped:
		t.Fatal("Stop returned before the grace passed, but the child ignores SIGTERM")
	default:
	}
	clock.Advance(3 * time.Second).MustWait(ctx)
	select {
	case <-stopped:
	case <-ctx.Done():
		t.Fatal("Stop did not kill the child after the grace")
	}
	var ee *exec.ExitError
	if !errors.As(p.Err(), &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child ended with %v, want SIGKILL", p.Err())
	}
	p.Stop(Grace{AfterTerm: time.Hour}) // a second Stop returns at once
}

// TestStopReachesGrandchildren: the whole process group ends, also a
// grandchild that ignores SIGTERM.
func TestStopReachesGrandchildren(t *testing.T) {
	p := startChild(t, "parent", Spec{})
	pid, err := strconv.Atoi(readLine(t, p.Stdout()))
	if err != nil {
		t.Fatal(err)
	}
	p.Stop(Grace{}) // kill at once
	wait.For(t, fmt.Sprintf("grandchild %d to end after Stop", pid), wait.Process, func() bool {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		b, _ := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
		return strings.HasPrefix(strings.TrimSpace(string(b)), "Z") // a zombie is dead; only its reaping by init is left
	})
}

// TestLaunchReplacesTheStart: a custom launcher starts the command (here:
// with its own session, as a pty does) and Stop still ends it.
func TestLaunchReplacesTheStart(t *testing.T) {
	launched := false
	p, err := Start(Spec{
		Argv:  []string{os.Args[0], "-test.run=^$"},
		Extra: []string{childMode + "=stubborn"},
		Launch: func(cmd *exec.Cmd) error {
			launched = true
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			return cmd.Start()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !launched {
		t.Fatal("Launch was not called")
	}
	if p.Stdout() != nil || p.Stdin() != nil {
		t.Fatal("a launched process has pipes it did not ask for")
	}
	p.Stop(Grace{})
	if p.Alive() {
		t.Fatal("alive after Stop")
	}
}

func TestErrorLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"one line", "one line"},
		{"a\nb\n\n", "b"},
		{"Error: first\nframe 1\nframe 2", "Error: first"},
		{"error: lower\nthen", "error: lower"},
		{strings.Repeat("y", 500), strings.Repeat("y", 400)},
	} {
		if got := ErrorLine(tc.in); got != tc.want {
			t.Errorf("ErrorLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTailKeepsTheEnd(t *testing.T) {
	tail := NewTail(5)
	for _, s := range []string{"ab", "cdef", "gh"} {
		if n, err := tail.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got := tail.String(); got != "defgh" {
		t.Fatalf("tail = %q, want defgh", got)
	}
}
