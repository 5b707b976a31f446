//go:build unix

package osproc

import (
	"context"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestListLive runs the real ps: a child started with a marker variable
// is listed with its parent, command line and environment.
func TestListLive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	child := exec.Command("sleep", "30")
	child.Env = append(os.Environ(), "OSPROC_TEST_MARKER=seen-by-ps")
	if err := child.Start(); err != nil {
		t.Skipf("cannot start sleep: %v", err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	procs, err := List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		if p.PID == child.Process.Pid {
			if p.PPID != os.Getpid() || p.Name != "sleep" || p.Command != "sleep 30" || p.Env["OSPROC_TEST_MARKER"] != "seen-by-ps" {
				t.Fatalf("child listed as %+v", p)
			}
			return
		}
	}
	t.Fatalf("child %d not among %d processes", child.Process.Pid, len(procs))
}

// TestListenersLive runs the real lsof: this test's own loopback
// listener is listed with this process's pid.
func TestListenersLive(t *testing.T) {
	if _, err := exec.LookPath("lsof"); err != nil {
		t.Skip("lsof is not installed (apt-get install lsof)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ls, err := Listeners(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := ln.Addr().(*net.TCPAddr).AddrPort()
	for _, l := range ls {
		if l.Addr == want {
			if l.PID != os.Getpid() {
				t.Fatalf("listener %v owned by %d, want %d", want, l.PID, os.Getpid())
			}
			return
		}
	}
	t.Fatalf("listener %v not among %v", want, ls)
}
