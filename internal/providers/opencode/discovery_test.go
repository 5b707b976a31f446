package opencode

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// procTable writes a /proc/net/tcp fixture with one listening IPv4
// loopback socket per port (and an established one and a non-loopback
// listener, which are never probed).
func procTable(t *testing.T, ports ...int) string {
	t.Helper()
	return procTableOwned(t, os.Getuid(), ports...)
}

// procTableOwned is procTable with the listeners owned by uid.
func procTableOwned(t *testing.T, uid int, ports ...int) string {
	t.Helper()
	lines := []string{"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"}
	for i, p := range ports {
		lines = append(lines, fmt.Sprintf("  %d: 0100007F:%04X 00000000:0000 0A 00000000:00000000 00:00000000 00000000 %5d        0 %d 1", i, p, uid, 100+i))
	}
	lines = append(lines,
		"  8: 0100007F:0016 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 2 1", // established
		"  9: 0A01020A:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3 1", // 10.2.1.10
	)
	file := filepath.Join(t.TempDir(), "tcp")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func portOf(t *testing.T, url string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestListeningLoopbackFixtures: the listener table gives the listening
// loopback and wildcard sockets of tcp and tcp6, once per base URL,
// lowest port first; established sockets, other addresses and another
// user's sockets are left out.
func TestListeningLoopbackFixtures(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the kernel's listener tables are Linux's")
	}
	dir := t.TempDir()
	tcp := filepath.Join(dir, "tcp")
	tcp6 := filepath.Join(dir, "tcp6")
	v4 := strings.Join([]string{
		"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
		"   0: 0100007F:1000 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 11 1", // 127.0.0.1:4096
		"   1: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 12 1", // 0.0.0.0:2024
		"   2: 0100007F:1000 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 13 1", // established
		"   3: 0A01020A:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 14 1", // 10.2.1.10:80
		"   4: 0100007F:1000 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 15 1", // 127.0.0.1:4096 again
		"   5: garbage",
		"   6: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  4242        0 16 1", // 127.0.0.1:8080, another user's
	}, "\n")
	v6 := strings.Join([]string{
		"  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
		"   0: 00000000000000000000000001000000:1388 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 21 1", // [::1]:5000
		"   1: 0000000000000000FFFF00000100007F:0BB8 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 22 1", // ::ffff:127.0.0.1:3000
		"   2: 000080FE00000000FF00000001000000:0050 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 23 1", // link-local
	}, "\n")
	for f, body := range map[string]string{tcp: v4, tcp6: v6} {
		if err := os.WriteFile(f, []byte(body+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want := []candidate{
		{port: 2024, base: "http://127.0.0.1:2024"},
		{port: 3000, base: "http://127.0.0.1:3000"},
		{port: 4096, base: "http://127.0.0.1:4096"},
		{port: 5000, base: "http://[::1]:5000"},
	}
	got := loopbackListeners(context.Background(), []string{tcp, tcp6, filepath.Join(dir, "missing")}, 0)
	if d := cmp.Diff(want, got, cmp.AllowUnexported(candidate{})); d != "" {
		t.Fatalf("loopbackListeners (-want +got):\n%s", d)
	}
}

// countingServer answers /global/health as a server that is not OpenCode
// and counts the probes.
func countingServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/global/health" {
			n.Add(1)
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(s.Close)
	return s, &n
}

// TestNoServerAnswerIsKeptBriefly: when no server answers and none can be
// started (the program is missing), the answer is given again for
// noServerTTL on the adapter's clock without probing the default URL or
// the listeners again; after it, they are probed again.
func TestNoServerAnswerIsKeptBriefly(t *testing.T) {
	ctx := ctxT(t, wait.InProcess)
	clock := testclock.At(t, time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	def, defHits := countingServer(t)
	listener, listenerHits := countingServer(t)
	a := New(Config{
		DefaultURL: def.URL, ProcNetFiles: []string{procTable(t, portOf(t, listener.URL))},
		Program: "/nonexistent/opencode", Clock: clock,
	}, nil)
	defer a.Close()
	list := func() error {
		_, err := a.ListSessions(ctx)
		if err == nil || !strings.Contains(err.Error(), "opencode program was not found") {
			t.Fatalf("ListSessions = %v, want the program not found", err)
		}
		return err
	}
	first := list()
	if defHits.Load() != 1 || listenerHits.Load() != 1 {
		t.Fatalf("first listing probed the default URL %d times and the listener %d times, want once each", defHits.Load(), listenerHits.Load())
	}
	clock.Advance(noServerTTL - time.Millisecond)
	if again := list(); again.Error() != first.Error() || defHits.Load() != 1 || listenerHits.Load() != 1 {
		t.Fatalf("a listing within %v probed again (default %d, listener %d): %v", noServerTTL, defHits.Load(), listenerHits.Load(), again)
	}
	clock.Advance(time.Millisecond)
	list()
	if defHits.Load() != 2 || listenerHits.Load() != 2 {
		t.Fatalf("a listing after %v probed the default URL %d times and the listener %d times, want twice each", noServerTTL, defHits.Load(), listenerHits.Load())
	}
}

// TestAnotherUsersServersAreNotProbed: a loopback server another user
// owns (by the listener table's uid) is neither probed as a listener nor
// at the default URL; the error says why the default URL was skipped. The
// same servers owned by this user are probed.
func TestAnotherUsersServersAreNotProbed(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the kernel's listener tables are Linux's")
	}
	ctx := ctxT(t, wait.InProcess)
	def, defHits := countingServer(t)
	listener, listenerHits := countingServer(t)
	other := os.Getuid() + 1
	files := []string{procTableOwned(t, other, portOf(t, def.URL), portOf(t, listener.URL))}
	a := New(Config{DefaultURL: def.URL, ProcNetFiles: files, Program: "/nonexistent/opencode"}, nil)
	defer a.Close()
	_, err := a.ListSessions(ctx)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("another user's server, uid %d: not probed", other)) {
		t.Fatalf("ListSessions = %v, want the default URL skipped as another user's", err)
	}
	if defHits.Load() != 0 || listenerHits.Load() != 0 {
		t.Fatalf("another user's servers were probed: default URL %d times, listener %d times", defHits.Load(), listenerHits.Load())
	}
	mine := New(Config{DefaultURL: def.URL, ProcNetFiles: []string{procTable(t, portOf(t, def.URL), portOf(t, listener.URL))}, Program: "/nonexistent/opencode"}, nil)
	defer mine.Close()
	if _, err := mine.ListSessions(ctx); err == nil {
		t.Fatal("no OpenCode server answers, yet the listing succeeded")
	}
	if defHits.Load() != 1 || listenerHits.Load() != 1 {
		t.Fatalf("this user's servers were probed %d (default URL) and %d (listener) times, want once each", defHits.Load(), listenerHits.Load())
	}
}

// TestDefaultURLWinsOverListener: the default URL and the listeners are
// probed together; when both answer as OpenCode, the default URL is used
// even though the listener's port is lower.
func TestDefaultURLWinsOverListener(t *testing.T) {
	low, high := newFakeServer(t), newFakeServer(t)
	if portOf(t, low.URL) > portOf(t, high.URL) {
		low, high = high, low
	}
	a := New(Config{DefaultURL: high.URL, ProcNetFiles: []string{procTable(t, portOf(t, low.URL))}, DisableAutoStart: true}, nil)
	defer a.Close()
	got, err := a.Endpoint(ctxT(t, wait.Process))
	if err != nil || got != high.URL || a.ep.source != sourceDefault {
		t.Fatalf("Endpoint = %q (%v), %v; want the default URL %s", got, a.ep, err, high.URL)
	}
}
