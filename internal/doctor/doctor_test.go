package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

func byProvider(t *testing.T, rep Report, id providers.ID) ProviderReport {
	t.Helper()
	for _, p := range rep.Providers {
		if p.Provider == id {
			return p
		}
	}
	t.Fatalf("no report for %s in %+v", id, rep.Providers)
	return ProviderReport{}
}

func noVersion(context.Context, string) (string, error) { return "", errors.New("not asked") }

func TestRunReportsEveryProviderInRegistryOrder(t *testing.T) {
	codex := &probingAdapter{
		fakeAdapter: &fakeAdapter{id: providers.Codex, caps: func(context.Context) providers.Capabilities {
			return readyCaps("/opt/codex", "0.171.0")
		}},
		probe: func(context.Context) error { return nil },
	}
	cursor := missing(providers.Cursor)
	// No Probe: the capability record is all doctor learns.
	opencode := &fakeAdapter{id: providers.OpenCode, caps: func(context.Context) providers.Capabilities {
		return readyCaps("/opt/opencode", "1.18.33")
	}}
	rep := Run(context.Background(), Options{
		Runtime:        "test",
		Adapters:       []providers.Adapter{cursor, codex, opencode}, // any order
		ProgramVersion: noVersion,
	})
	var got []providers.ID
	for _, p := range rep.Providers {
		got = append(got, p.Provider)
	}
	want := providers.Order()
	if len(got) != len(want) {
		t.Fatalf("providers = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("providers = %v, want %v", got, want)
		}
	}

	c := byProvider(t, rep, providers.Codex)
	if c.Summary != SummaryReady || c.Handshake.Status != HandshakeOK {
		t.Fatalf("codex = %s / %s, want ready / ok", c.Summary, c.Handshake.Status)
	}
	if c.Program != (Program{Found: true, Path: "/opt/codex", Version: "0.171.0", VersionSource: VersionFromProvider}) {
		t.Fatalf("codex program = %+v", c.Program)
	}
	if len(c.Capabilities) != 10 || c.Capabilities[0].Name != "discovery" || c.Capabilities[9].Name != "reasoning" {
		t.Fatalf("codex capabilities = %+v", c.Capabilities)
	}
	if d, _ := c.Capability("diff"); d.State != providers.Degraded || d.Reason != "latest diff only" {
		t.Fatalf("codex diff = %+v", d)
	}
	if c.Handshake.Fix != "" {
		t.Fatalf("a good handshake has no fix: %q", c.Handshake.Fix)
	}

	o := byProvider(t, rep, providers.OpenCode)
	if o.Handshake.Status != HandshakeNotSupported || o.Summary != SummaryReady {
		t.Fatalf("opencode (no Prober) = %+v", o.Handshake)
	}

	// A provider without an adapter is reported, never dropped.
	for _, id := range []providers.ID{providers.Freebuff, providers.ClaudeCode} {
		p := byProvider(t, rep, id)
		if p.Summary != SummaryUnavailable || !strings.Contains(p.Capabilities[0].Reason, "no adapter configured") {
			t.Fatalf("%s = %+v", id, p)
		}
	}
	if codex.closed.Load() != 1 || cursor.closed.Load() != 1 || opencode.closed.Load() != 1 {
		t.Fatalf("every adapter must be closed once: codex %d cursor %d opencode %d",
			codex.closed.Load(), cursor.closed.Load(), opencode.closed.Load())
	}
}

func TestMissingProgramReportsReasonAndFix(t *testing.T) {
	rep := Run(context.Background(), Options{Adapters: []providers.Adapter{missing(providers.Cursor)}, ProgramVersion: noVersion})
	c := byProvider(t, rep, providers.Cursor)
	if c.Summary != SummaryUnavailable || c.Program.Found || c.Program.Path != "" {
		t.Fatalf("cursor = %+v", c)
	}
	if c.Handshake.Status != HandshakeFailed || !strings.Contains(c.Handshake.Detail, "not found") {
		t.Fatalf("handshake = %+v", c.Handshake)
	}
	if c.Handshake.Fix != "npm install -g cursor@1.0.0" {
		t.Fatalf("handshake fix = %q, want the capability's fix", c.Handshake.Fix)
	}
	for _, cp := range c.Capabilities {
		if cp.State != providers.Unavailable || cp.Reason == "" || cp.Fix == "" {
			t.Fatalf("capability %s = %+v, want unavailable with reason and fix", cp.Name, cp.Capability)
		}
	}
}

func TestFailedHandshakeAsksTheProgramForItsVersion(t *testing.T) {
	broken := &probingAdapter{
		fakeAdapter: &fakeAdapter{id: providers.Codex, caps: func(context.Context) providers.Capabilities {
			c := allCaps(providers.Capability{Supported: true, State: providers.Unavailable, Transport: "stdio",
				Reason: "codex app-server initialize failed: connection lost (process exit status 1)"})
			c.Program = "/opt/codex"
			return c
		}},
		probe: func(context.Context) error {
			return errors.New("codex app-server initialize failed: connection lost (process exit status 1)")
		},
	}
	var asked string
	rep := Run(context.Background(), Options{
		Adapters: []providers.Adapter{broken},
		ProgramVersion: func(_ context.Context, path string) (string, error) {
			asked = path
			return "0.171.0", nil
		},
	})
	c := byProvider(t, rep, providers.Codex)
	if asked != "/opt/codex" {
		t.Fatalf("version asked of %q", asked)
	}
	if c.Program != (Program{Found: true, Path: "/opt/codex", Version: "0.171.0", VersionSource: VersionFromFlag}) {
		t.Fatalf("program = %+v", c.Program)
	}
	if c.Handshake.Status != HandshakeFailed || !strings.Contains(c.Handshake.Detail, "exit status 1") {
		t.Fatalf("handshake = %+v", c.Handshake)
	}
	// No capability offers a fix: doctor says how to see the whole error.
	if !strings.Contains(c.Handshake.Fix, "/opt/codex") {
		t.Fatalf("fix = %q", c.Handshake.Fix)
	}
	if c.Summary != SummaryUnavailable {
		t.Fatalf("summary = %s", c.Summary)
	}
}

func TestSkippedHandshake(t *testing.T) {
	oc := &probingAdapter{
		fakeAdapter: &fakeAdapter{id: providers.OpenCode, caps: func(context.Context) providers.Capabilities {
			return allCaps(providers.Capability{Supported: true, State: providers.Unavailable, Transport: "http",
				Reason: "no server; doctor does not start opencode serve", Fix: "set OPENCODE_SERVER_URL"})
		}},
		probe: func(context.Context) error {
			return errors.Join(errors.New("opencode"), &skipErr{"no server; doctor does not start opencode serve"})
		},
	}
	rep := Run(context.Background(), Options{Adapters: []providers.Adapter{oc}, ProgramVersion: noVersion})
	o := byProvider(t, rep, providers.OpenCode)
	if o.Handshake.Status != HandshakeSkipped || o.Handshake.Fix != "set OPENCODE_SERVER_URL" {
		t.Fatalf("handshake = %+v", o.Handshake)
	}
}

func TestUnauthorizedIsNotReady(t *testing.T) {
	a := &fakeAdapter{id: providers.Codex, caps: func(context.Context) providers.Capabilities {
		c := readyCaps("/opt/codex", "0.171.0")
		c.Authorization = "unauthorized"
		return c
	}}
	rep := Run(context.Background(), Options{Adapters: []providers.Adapter{a}, ProgramVersion: noVersion})
	if s := byProvider(t, rep, providers.Codex).Summary; s != SummaryDegraded {
		t.Fatalf("summary = %s, want degraded", s)
	}
}

// hang is a Probe (or Capabilities) that ignores ctx until release closes.
func hang(release <-chan struct{}, entered chan<- struct{}) func(context.Context) error {
	return func(context.Context) error {
		if entered != nil {
			entered <- struct{}{}
		}
		<-release
		return errors.New("released")
	}
}

// TestProviderTimeoutDoesNotDelayTheOthers runs in a synctest bubble: its
// clock moves only when every goroutine of the run is blocked, so the fast
// provider always finishes before the slow one's 200 ms deadline, however
// loaded the machine, and the times compared are the bubble's, not wall time.
func TestProviderTimeoutDoesNotDelayTheOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		slow := &probingAdapter{
			fakeAdapter: &fakeAdapter{id: providers.ClaudeCode, caps: func(context.Context) providers.Capabilities {
				return readyCaps("/opt/claude", "0.49.0")
			}},
			probe: hang(release, nil),
		}
		fast := &probingAdapter{
			fakeAdapter: &fakeAdapter{id: providers.Codex, caps: func(context.Context) providers.Capabilities {
				return readyCaps("/opt/codex", "0.171.0")
			}},
			probe: func(context.Context) error { return nil },
		}
		start := time.Now()
		rep := Run(context.Background(), Options{
			Adapters:        []providers.Adapter{slow, fast},
			Timeout:         10 * time.Second,
			ProviderTimeout: 200 * time.Millisecond,
			ProgramVersion:  noVersion,
		})
		// Without the provider deadline only the 10 s overall one would end Run.
		if el := time.Since(start); el != 200*time.Millisecond {
			t.Fatalf("Run took %s of the bubble's time with a 200 ms provider deadline", el)
		}
		if rep.DeadlineReached {
			t.Fatal("the overall deadline was not reached")
		}
		s := byProvider(t, rep, providers.ClaudeCode)
		if s.Handshake.Status != HandshakeTimeout || !strings.Contains(s.Handshake.Detail, "handshake step") {
			t.Fatalf("slow handshake = %+v", s.Handshake)
		}
		for _, c := range s.Capabilities {
			if c.State != providers.Unknown || c.Reason == "" || c.Fix == "" {
				t.Fatalf("slow capability %s = %+v, want unknown with reason and fix", c.Name, c.Capability)
			}
		}
		if s.Summary != SummaryUnavailable {
			t.Fatalf("slow summary = %s", s.Summary)
		}
		if f := byProvider(t, rep, providers.Codex); f.Summary != SummaryReady {
			t.Fatalf("one slow provider emptied another's answer: %+v", f)
		}
	})
}

// TestOverallDeadlineHoldsWhateverTheAdaptersDo runs in a synctest bubble,
// whose clock moves only when every goroutine is blocked: Run's duration is
// compared exactly, in the bubble's time, not the machine's.
func TestOverallDeadlineHoldsWhateverTheAdaptersDo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		var adapters []providers.Adapter
		for _, id := range providers.Order() {
			adapters = append(adapters, &probingAdapter{
				fakeAdapter: &fakeAdapter{
					id:      id,
					caps:    func(context.Context) providers.Capabilities { <-release; return providers.Capabilities{} },
					closeFn: func() error { <-release; return nil }, // Close hangs too
				},
				probe: hang(release, nil),
			})
		}
		storeBlocks := func(ctx context.Context) StoreReport { <-release; return StoreReport{} }
		const timeout = 600 * time.Millisecond
		start := time.Now()
		rep := Run(context.Background(), Options{
			Adapters:        adapters,
			Store:           storeBlocks,
			Timeout:         timeout,
			ProviderTimeout: time.Minute,
			ProgramVersion:  noVersion,
		})
		if el := time.Since(start); el != timeout { // everything hangs forever: only the deadline ends Run
			t.Fatalf("Run took %s of the bubble's time, overall deadline %s", el, timeout)
		}
		if !rep.DeadlineReached {
			t.Fatal("DeadlineReached not set")
		}
		if len(rep.Providers) != len(providers.Order()) {
			t.Fatalf("%d providers reported", len(rep.Providers))
		}
		for _, p := range rep.Providers {
			if p.Handshake.Status != HandshakeTimeout {
				t.Fatalf("%s handshake = %+v, want timeout", p.Provider, p.Handshake)
			}
		}
		if rep.Store.Error == "" || rep.Store.Fix == "" {
			t.Fatalf("store = %+v, want the unfinished check reported", rep.Store)
		}
		if len(rep.Cleanup) != len(providers.Order()) {
			t.Fatalf("cleanup = %v, want every adapter whose Close hung", rep.Cleanup)
		}
	})
}

func TestCancelledContextEndsRun(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	entered := make(chan struct{}, 1)
	a := &probingAdapter{
		fakeAdapter: &fakeAdapter{id: providers.Codex, caps: func(context.Context) providers.Capabilities { return providers.Capabilities{} }},
		probe:       hang(release, entered),
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Report, 1)
	go func() { done <- Run(ctx, Options{Adapters: []providers.Adapter{a}, ProgramVersion: noVersion}) }()
	wait.Recv(t, "the probe to start", wait.InProcess, entered)
	cancel() // the probe hangs until the test ends: only ctx can end Run
	rep := wait.Recv(t, "Run to return once its context was cancelled", wait.InProcess, done)
	c := byProvider(t, rep, providers.Codex)
	if c.Handshake.Status != HandshakeFailed || !strings.Contains(c.Handshake.Detail, "canceled") {
		t.Fatalf("handshake = %+v, want failed: context canceled", c.Handshake)
	}
}

func TestProviderDeadlineWithFakeClock(t *testing.T) {
	clock := newFakeClock(t)
	release := make(chan struct{})
	defer close(release)
	entered := make(chan struct{}, 1)
	slow := &probingAdapter{
		fakeAdapter: &fakeAdapter{id: providers.Codex, caps: func(context.Context) providers.Capabilities { return providers.Capabilities{} }},
		probe:       hang(release, entered),
	}
	done := make(chan Report, 1)
	go func() {
		done <- Run(context.Background(), Options{
			Adapters: []providers.Adapter{slow}, Clock: clock,
			Timeout: 20 * time.Second, ProviderTimeout: 5 * time.Second, ProgramVersion: noVersion,
		})
	}()
	<-entered // the provider's deadline timer exists before Probe runs
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	clock.Advance(4 * time.Second).MustWait(ctx)
	select { // an early deadline shows here, or in ElapsedMS below
	case <-done:
		t.Fatal("Run returned before the provider deadline")
	default:
	}
	clock.Advance(time.Second).MustWait(ctx)
	rep := wait.Recv(t, "Run to return after the provider deadline passed", wait.InProcess, done)
	c := byProvider(t, rep, providers.Codex)
	if c.Handshake.Status != HandshakeTimeout || !strings.Contains(c.Handshake.Detail, "5s") {
		t.Fatalf("handshake = %+v", c.Handshake)
	}
	if c.ElapsedMS != 5000 {
		t.Fatalf("elapsed = %d ms on the fake clock, want 5000", c.ElapsedMS)
	}
}

func TestRenderHumanTable(t *testing.T) {
	codex := &probingAdapter{
		fakeAdapter: &fakeAdapter{id: providers.Codex, caps: func(context.Context) providers.Capabilities {
			return readyCaps("/opt/codex", "0.171.0")
		}},
		probe: func(context.Context) error { return nil },
	}
	cursor := missing(providers.Cursor)
	cursor.probe = func(context.Context) error {
		return errors.Join(errors.New("agent: not found"), errors.New("cursor-agent: not found"))
	}
	rep := Run(context.Background(), Options{Runtime: "9.9.9", Adapters: []providers.Adapter{codex, cursor}, ProgramVersion: noVersion})
	rep.Store = StoreReport{Path: "/tmp/x.db", Exists: true, Opens: true, IntegrityChecked: true, SchemaVersion: "0123456789abcdef"}
	var b bytes.Buffer
	if err := Render(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"interop-runtime doctor 9.9.9",
		"opens (integrity check passed)",
		"0123456789ab\n",
		"PROVIDER", "SUMMARY", "HANDSHAKE",
		"codex: ready (authorization authorized)",
		"found 0.171.0 (reported by the provider)", // the path only with --verbose
		"protocol   fake-rpc",
		"[1] no steer in fake-rpc",
		"cursor: unavailable",
		"handshake  failed in",
		"agent: not found cursor-agent: not found", // a multi-line error folds
		"fix: npm install -g cursor@1.0.0",
		"- a fake with two lines",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// A reason shared by all ten operations is printed once.
	if n := strings.Count(out, "cursor program not found on PATH"); n != 1 {
		t.Errorf("shared reason printed %d times:\n%s", n, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "cursor-agent") {
			t.Errorf("a multi-line error broke the table: %q", line)
		}
	}
}

func TestRenderJSONIsCompactAndComplete(t *testing.T) {
	rep := Run(context.Background(), Options{Runtime: "9.9.9", Adapters: []providers.Adapter{missing(providers.Cursor)}, ProgramVersion: noVersion})
	var b bytes.Buffer
	if err := RenderJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") || strings.Contains(out, "  ") {
		t.Fatalf("not one compact line: %q", out)
	}
	var raw struct {
		Runtime   string `json:"runtime"`
		Providers []struct {
			Provider     string `json:"provider"`
			Summary      string `json:"summary"`
			Handshake    struct{ Status, Detail, Fix string }
			Capabilities []map[string]any `json:"capabilities"`
		} `json:"providers"`
	}
	if err := json.Unmarshal(b.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Runtime != "9.9.9" || len(raw.Providers) != len(providers.Order()) {
		t.Fatalf("decoded %+v", raw)
	}
	cur := raw.Providers[slices.Index(providers.Order(), providers.Cursor)]
	if cur.Provider != "cursor" || cur.Handshake.Status != "failed" || cur.Handshake.Fix == "" {
		t.Fatalf("cursor = %+v", cur)
	}
	c0 := cur.Capabilities[0]
	if c0["name"] != "discovery" || c0["state"] != "unavailable" || c0["reason"] == nil || c0["fix"] == nil {
		t.Fatalf("capability JSON = %v", c0)
	}
}

func TestRenderProviders(t *testing.T) {
	ready := readyCaps("/opt/codex", "0.171.0")
	ready.Provider = providers.Codex
	gone := allCaps(providers.Capability{State: providers.Unavailable, Reason: "not found\non PATH", Fix: "install it"})
	gone.Provider = providers.Cursor
	var b bytes.Buffer
	if err := RenderProvidersText(&b, []providers.Capabilities{ready, gone}, TextOptions{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"PROVIDER", "SEND", "REASON", "codex", "0.171.0", "/opt/codex", "part[2]",
		"[3] cursor: not found on PATH", "    fix: install it", "yes = available"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "install it") != 1 {
		t.Errorf("shared note repeated:\n%s", out)
	}
}

func TestCheckStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	env := func(path string) store.LookupEnv {
		return func(k string) (string, bool) {
			if k == store.EnvDB {
				return path, true
			}
			return "", false
		}
	}

	t.Run("missing file is not created", func(t *testing.T) {
		p := filepath.Join(dir, "none", "interop.db")
		rep := CheckStore(env(p), nil)(ctx)
		if rep.Exists || rep.Opens || rep.Path != p || rep.Error == "" {
			t.Fatalf("report = %+v", rep)
		}
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("doctor created the store: %v", err)
		}
	})

	t.Run("an empty file is reported and left empty", func(t *testing.T) {
		p := filepath.Join(dir, "empty.db")
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		rep := CheckStore(env(p), nil)(ctx)
		if !rep.Exists || rep.Opens || !strings.Contains(rep.Error, "empty") {
			t.Fatalf("report = %+v", rep)
		}
		if info, err := os.Stat(p); err != nil || info.Size() != 0 {
			t.Fatalf("doctor wrote into the empty store file: %v, %v", info, err)
		}
	})

	t.Run("current store opens with the integrity check", func(t *testing.T) {
		p := filepath.Join(dir, "ok.db")
		st, err := store.Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		rep := CheckStore(env(p), nil)(ctx)
		if !rep.Exists || !rep.Opens || !rep.IntegrityChecked || rep.SchemaVersion != store.SchemaVersion() || rep.Recovery != nil || rep.Error != "" {
			t.Fatalf("report = %+v", rep)
		}
	})

	t.Run("a file that is not a database is moved aside and reported", func(t *testing.T) {
		p := filepath.Join(dir, "junk.db")
		if err := os.WriteFile(p, bytes.Repeat([]byte("not sqlite "), 100), 0o600); err != nil {
			t.Fatal(err)
		}
		rep := CheckStore(env(p), nil)(ctx)
		if !rep.Opens || rep.Recovery == nil || !rep.Recovery.Required || rep.Recovery.PreservedFile == "" || rep.Fix == "" {
			t.Fatalf("report = %+v", rep)
		}
		if _, err := os.Stat(rep.Recovery.PreservedFile); err != nil {
			t.Fatalf("preserved file: %v", err)
		}
	})

	t.Run("a directory does not open", func(t *testing.T) {
		p := filepath.Join(dir, "adir")
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		rep := CheckStore(env(p), nil)(ctx)
		if rep.Opens || rep.Error == "" || rep.Fix == "" {
			t.Fatalf("report = %+v", rep)
		}
	})

	t.Run("no location", func(t *testing.T) {
		rep := CheckStore(func(string) (string, bool) { return "", false }, nil)(ctx)
		if rep.Error == "" || !strings.Contains(rep.Fix, store.EnvDB) {
			t.Fatalf("report = %+v", rep)
		}
	})
}

func TestFindVersion(t *testing.T) {
	for in, want := range map[string]string{
		"codex-cli 0.171.0\n":       "0.171.0",
		"1.18.33":                   "1.18.33",
		"v2.1.185 (Claude Code)":    "2.1.185",
		"tool 1.2 build 3.4.5-rc.1": "3.4.5-rc.1",
		"version 10.0.0+abc.":       "10.0.0+abc",
		"no digits here":            "",
		"1.2":                       "",
		"ip 127.0.0.1 then 2.0.1":   "127.0.0.1",
	} {
		if got := findVersion(in); got != want {
			t.Errorf("findVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExecVersion(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "prog")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho \"prog-cli 4.5.6\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	v, err := ExecVersion(context.Background(), prog)
	if err != nil || v != "4.5.6" {
		t.Fatalf("ExecVersion = %q, %v", v, err)
	}
	hangs := filepath.Join(dir, "hangs")
	if err := os.WriteFile(hangs, []byte("#!/bin/sh\nsleep 30\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	// A program that outlived ctx would exit 0 on its own, with no version
	// number; the error says ctx's end killed it instead.
	if _, err := ExecVersion(ctx, hangs); err == nil || !strings.Contains(err.Error(), "signal: killed") {
		t.Fatalf("ExecVersion of a hanging program = %v, want it killed when ctx ended", err)
	}
	if _, err := ExecVersion(context.Background(), filepath.Join(dir, "absent")); err == nil {
		t.Fatal("an absent program gave a version")
	}
}
