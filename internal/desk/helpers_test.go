package desk

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/internal/httpguard"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

const testToken = "desk-test-token"

// fixture is a desk over a fresh store, served on a loopback listener.
type fixture struct {
	t      testing.TB
	st     *store.Store
	h      *Handler
	srv    *httptest.Server
	links  chan string
	now    time.Time // set at the start; later moves go through advance
	client *http.Client
	clock  *quartz.Mock // the desk's clock, at now when the fixture starts
	// pollEvery is the change feed's period on clock.
	pollEvery time.Duration
}

// advance moves the desk's clock.
// Timers and tickers due on the way fire in order (the change feed's poll,
// a stream's heartbeat).
func (f *fixture) advance(d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), streamWait)
	defer cancel()
	for d > 0 {
		step := d
		if next, ok := f.clock.Peek(); ok && next < step {
			step = next
		}
		f.clock.Advance(step).MustWait(ctx)
		d -= step
	}
}

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// newFixture is a desk over a new store: SQLite, or PostgreSQL in the
// PostgreSQL tier (-tags postgres; scripts/test.sh runs the package both ways).
func newFixture(t *testing.T, opts ...func(*Options)) *fixture {
	t.Helper()
	return newFixtureAt(t, teststore.Location(t), opts...)
}

// newFixtureAt is a desk over a new store at location (a file path or a
// PostgreSQL URL, as pgtest.EachDialect hands them out).
func newFixtureAt(t testing.TB, location string, opts ...func(*Options)) *fixture {
	t.Helper()
	st := teststore.OpenAt(t, location)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	f := &fixture{t: t, st: st, links: make(chan string, 8), now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	f.clock = testclock.At(t, f.now)
	o := Options{
		Store: st, Token: httpguard.NewSecret(testToken), Port: port, URL: fmt.Sprintf("http://127.0.0.1:%d", port),
		LoginLink: func(l string) { f.links <- l }, PollEvery: 10 * time.Millisecond, Heartbeat: time.Hour,
		Clock: f.clock, Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	for _, opt := range opts {
		opt(&o)
	}
	f.pollEvery = o.PollEvery
	f.h, err = New(o)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewUnstartedServer(f.h)
	f.srv.Listener.Close()
	f.srv.Listener = ln
	f.srv.Start()
	t.Cleanup(func() { f.h.Close(); f.srv.Close() })
	// The bound only catches a hang: a page that scans thousands of rows
	// under -race on a loaded machine took over 10 s.
	f.client = &http.Client{Timeout: wait.Process, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return f
}

// get answers a GET of path with the headers (key, value pairs).
func (f *fixture) get(path string, header ...string) (*http.Response, string) {
	f.t.Helper()
	return f.do(http.MethodGet, path, "", header...)
}

func (f *fixture) do(method, path, body string, header ...string) (*http.Response, string) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	res, err := f.client.Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// testWriter sends the desk's log to the test's log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

var bearer = []string{"Authorization", "Bearer " + testToken}

// ent is the store's client.
func (f *fixture) ent() *ent.Client { return f.st.Client() }

// addOperation records one operation.
func (f *fixture) addOperation(id, native, kind string, status operation.Status, at time.Time) *ent.Operation {
	f.t.Helper()
	return f.addOwnedOperation(id, native, kind, status, at, "")
}

// addOwnedOperation records one operation owned by a runtime process.
func (f *fixture) addOwnedOperation(id, native, kind string, status operation.Status, at time.Time, owner string) *ent.Operation {
	f.t.Helper()
	o, err := f.ent().Operation.Create().SetID(id).SetIdempotencyKey("key-" + id).SetProvider("codex").SetNativeID(native).
		SetOperation(kind).SetStatus(status).SetCreatedAt(at).SetUpdatedAt(at).SetOwner(owner).Save(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	return o
}

// addOwner records a runtime process as an owner of operations, on
// another host (so only its heartbeat and stop time say whether it is
// alive).
func (f *fixture) addOwner(id string, heartbeat time.Time, stopped *time.Time) {
	f.t.Helper()
	c := f.ent().RuntimeOwner.Create().SetID(id).SetHost("another-host").SetPid(4242).SetStartedAt(heartbeat).SetHeartbeatAt(heartbeat)
	if stopped != nil {
		c.SetStoppedAt(*stopped)
	}
	if err := c.Exec(context.Background()); err != nil {
		f.t.Fatal(err)
	}
}

// addSession records one provider session.
func (f *fixture) addSession(native string) *ent.ProviderSession {
	f.t.Helper()
	s, err := f.ent().ProviderSession.Create().SetProvider("codex").SetNativeID(native).SetFirstSeenAt(f.now).SetLastSeenAt(f.now).
		Save(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

// liveURL is the live stream a page of the desk opens (its sse-connect).
func liveURL(t *testing.T, body string) string {
	t.Helper()
	i := strings.Index(body, `sse-connect="`)
	if i < 0 {
		t.Fatalf("the page opens no live stream: %.500s", body)
	}
	rest := body[i+len(`sse-connect="`):]
	return html.UnescapeString(rest[:strings.IndexByte(rest, '"')])
}

// addWork records one work item.
func (f *fixture) addWork(id, objective string, dependsOn ...string) *ent.WorkItem {
	f.t.Helper()
	w, err := f.ent().WorkItem.Create().SetID(id).SetObjective(objective).SetAcceptanceCriteria([]string{"done"}).
		SetRisks([]string{}).SetUnresolvedQuestions([]string{}).SetChangedFiles([]string{}).
		SetCreatedAt(f.now).SetUpdatedAt(f.now).AddDependsOnIDs(dependsOn...).Save(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	return w
}

// sse is an open live stream.
type sse struct {
	res   *http.Response
	lines chan string
	tick  func() // moves the desk's clock to its next poll of the store
}

// stream opens a live stream with the headers.
func (f *fixture) stream(path string, header ...string) *sse {
	f.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f.t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.srv.URL+path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		f.t.Fatalf("stream %s: %d %s", path, res.StatusCode, res.Header.Get("Content-Type"))
	}
	s := &sse{res: res, lines: make(chan string, 1024), tick: f.poll}
	go func() {
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	return s
}

// poll advances the desk's clock to the change feed's next poll when that
// is the clock's next event (never past a heartbeat or a lifetime the
// test did not ask for), so a stream sees the store's changes.
func (f *fixture) poll() {
	if d, ok := f.clock.Peek(); ok && d <= f.pollEvery && f.pollEvery < time.Second { // a test with a long poll moves the clock itself
		ctx, cancel := context.WithTimeout(context.Background(), streamWait)
		defer cancel()
		f.clock.Advance(d).MustWait(ctx)
	}
}

// awaitEnd reads the stream until it ends, failing after wait.InProcess.
func (s *sse) awaitEnd(t *testing.T, what string) {
	t.Helper()
	wait.For(t, what, wait.InProcess, func() bool {
		for {
			select {
			case _, ok := <-s.lines:
				if !ok {
					return true
				}
			default:
				return false
			}
		}
	})
}

// event is one SSE event.
type event struct {
	id, name, data string
}

// next returns the next event, failing after within.
func (s *sse) next(t *testing.T, within time.Duration) event {
	t.Helper()
	var ev event
	var data []string
	deadline := time.After(within)
	idle := time.NewTicker(5 * time.Millisecond)
	defer idle.Stop()
	for {
		select {
		case <-idle.C:
			s.tick()
		case line, ok := <-s.lines:
			if !ok {
				t.Fatal("the stream ended")
			}
			switch {
			case line == "":
				if ev.name != "" || len(data) > 0 {
					ev.data = strings.Join(data, "\n")
					return ev
				}
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			}
		case <-deadline:
			t.Fatalf("no event within %s", within)
		}
	}
}
