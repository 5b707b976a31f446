package desk

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// openFDs counts the process's open file descriptors (Linux only; -1
// elsewhere).
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// TestDroppedStreamsReleaseEverything opens 200 live streams, reads the
// first event of each, drops them all, and waits for the process's
// goroutines and file descriptors to come back to what they were before:
// a client that goes away leaves nothing behind (no hub or feed
// subscription, no ticker, no connection, no database connection).
func TestDroppedStreamsReleaseEverything(t *testing.T) {
	const streams = 200
	// 400 streams from one address: above the guard's default rate.
	f := newFixture(t, func(o *Options) { o.RateLimit = 10 * streams })
	_, body := f.get("/desk/receipts", bearer...)
	live := liveURL(t, body)
	tr := &http.Transport{MaxIdleConnsPerHost: -1}
	client := &http.Client{Transport: tr}
	open := func(n int) []context.CancelFunc {
		cancels := make([]context.CancelFunc, n)
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			ctx, cancel := context.WithCancel(context.Background())
			cancels[i] = cancel
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.srv.URL+live, nil)
				for j := 0; j+1 < len(bearer); j += 2 {
					req.Header.Set(bearer[j], bearer[j+1])
				}
				res, err := client.Do(req)
				if err != nil {
					errs <- err
					return
				}
				if res.StatusCode != http.StatusOK {
					errs <- fmt.Errorf("stream: %s", res.Status)
					return
				}
				// Read up to the end of the first event (the live status).
				sc := bufio.NewScanner(res.Body)
				seen := false
				for sc.Scan() {
					if strings.HasPrefix(sc.Text(), "event: update") {
						seen = true
					}
					if seen && sc.Text() == "" {
						return // the body stays open until the stream is dropped
					}
				}
				errs <- fmt.Errorf("stream ended before its first event: %v", sc.Err())
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		return cancels
	}
	drop := func(cancels []context.CancelFunc) {
		for _, c := range cancels {
			c()
		}
		tr.CloseIdleConnections()
	}
	settle := func() (int, int) {
		// The test's own idle keep-alive connections are not the desk's.
		f.client.CloseIdleConnections()
		tr.CloseIdleConnections()
		runtime.GC()
		return runtime.NumGoroutine(), openFDs(t)
	}
	drop(open(1))
	var g0, fd0 int
	wait.For(t, "the warm-up stream to end", wait.InProcess, func() bool {
		g0, fd0 = settle()
		f.h.feed.mu.Lock()
		defer f.h.feed.mu.Unlock()
		return f.h.feed.watchers == 0
	})
	// Two rounds of 200 streams: after each, every goroutine is gone.
	// SQLite keeps the descriptor of a closed connection for reuse while
	// another connection of the process holds a lock on the file, so the
	// rounds may leave the store's extra connections' descriptors, bounded
	// by the stream reads that run at once (maxLiveReads), not by the
	// clients (before that bound, 200 streams left 19 behind).
	round := func(n int, fdMax int) {
		cancels := open(streams)
		if g, _ := settle(); g < g0+streams {
			t.Fatalf("round %d, with %d streams open: %d goroutines, baseline %d: the streams are not open", n, streams, g, g0)
		}
		drop(cancels)
		var g, fd int
		ok := wait.Until(wait.InProcess, func() bool {
			g, fd = settle()
			return g <= g0 && (fd0 < 0 || fd <= fdMax)
		})
		if !ok {
			buf := make([]byte, 1<<20)
			k := runtime.Stack(buf, true)
			t.Fatalf("round %d, %v after %d streams were dropped: %d goroutines (baseline %d), %d fds (at most %d; -1: not counted)\nfds: %s\n%s",
				n, wait.InProcess, streams, g, g0, fd, fdMax, fdTargets(), buf[:k])
		}
		t.Logf("round %d, after %d dropped streams: %d goroutines (baseline %d), %d fds (baseline %d)", n, streams, g, g0, fd, fd0)
	}
	round(1, fd0+maxLiveReads+2)
	round(2, fd0+maxLiveReads+2)
}

// fdTargets names what the open descriptors point at (Linux).
func fdTargets() string {
	ents, _ := os.ReadDir("/proc/self/fd")
	var out []string
	for _, e := range ents {
		l, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err == nil {
			out = append(out, e.Name()+"→"+l)
		}
	}
	return strings.Join(out, " ")
}
