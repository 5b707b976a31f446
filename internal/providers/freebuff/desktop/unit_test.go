package desktop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
)

func TestNormalizeDesktopFrames(t *testing.T) {
	clock := newFakeClock(t)
	n := newNormalizer(clock)
	var ends []TurnEnd
	id := "91c70001-0001-4000-8000-000000000001"
	frames := []string{
		`{"type":"state","snapshot":{"threads":[{"id":"` + id + `","turnState":"idle","lastTurnOutcome":"closed","lastTurnFinishedAt":100}]}}`,
		`{"type":"thread","thread":{"id":"` + id + `","turnState":"running"}}`,
		`{"type":"agent","threadId":"` + id + `","seq":1,"event":{"type":"reasoning_delta","text":"secret thought"}}`,
		`{"type":"agent","threadId":"` + id + `","seq":2,"event":{"type":"reasoning_delta","text":"more thought"}}`,
		`{"type":"agent","threadId":"` + id + `","seq":3,"event":{"type":"tool_call","toolName":"write_file","input":{"path":"a.go"}}}`,
		`{"type":"agent","threadId":"` + id + `","seq":4,"event":{"type":"tool_call","toolName":"run_terminal_command","input":{"command":"go test ./... token=abc123"}}}`,
		`{"type":"agent","threadId":"` + id + `","seq":5,"event":{"type":"text","text":"done, key sk-` + strings.Repeat("a", 30) + `"}}`,
		`{"type":"agent","threadId":"` + id + `","seq":6,"event":{"type":"finish","metrics":{"costUsd":1}}}`,
		`{"type":"thread","thread":{"id":"` + id + `","turnState":"idle","lastTurnOutcome":"error","lastTurnFinishedAt":200,"lastError":"boom"}}`,
		`{"type":"agent","threadId":"../bad","event":{"type":"text","text":"x"}}`,
		`not json`,
		`{"type":"agent","threadId":"` + id + `","event":{"type":"mystery","apiKey":"k-123","note":"n"}}`,
	}
	var evs []core.ProgressEvent
	for _, f := range frames {
		e, te := n.frame("", []byte(f))
		evs = append(evs, e...)
		ends = append(ends, te...)
	}
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e.Kind+"/"+e.Phase+"/"+e.State)
	}
	want := []string{
		"turn_state//idle", "turn_state//running", "unknown/planning/", "tool_start/editing_files/",
		"tool_start/running_tests/", "assistant_text//", "completed/completed/", "turn_state//idle", "unknown//",
	}
	if strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Fatalf("kinds = %v\nwant    %v", kinds, want)
	}
	all, _ := json.Marshal(evs)
	for _, leak := range []string{"secret thought", "more thought", "abc123", "sk-aaaa", "k-123", "costUsd"} {
		if strings.Contains(string(all), leak) {
			t.Errorf("normalized events leak %q: %s", leak, all)
		}
	}
	if evs[3].Files[0] != "a.go" || evs[7].Error != "boom" {
		t.Errorf("files/error not kept: %+v %+v", evs[3], evs[8])
	}
	if len(ends) != 2 || ends[1].Outcome != "error" || ends[1].FinishedAt != 200 {
		t.Errorf("turn ends = %+v", ends)
	}
}

func TestProgressStoreBoundsCursorAndWait(t *testing.T) {
	clock := newFakeClock(t)
	p := newProgressStore(clock)
	id := "t1"
	p.setConnected(true)
	for i := 0; i < 250; i++ {
		p.append(core.ProgressEvent{ThreadID: id, Kind: core.KindAssistantText, Text: fmt.Sprint(i)})
	}
	snap, _ := p.read(id, 0, 100, false, false)
	if len(snap.Events) != 100 || snap.Events[0].Sequence != 51 || *snap.Next != 150 || *snap.NextSequence != 150 {
		t.Fatalf("page: %d events from %d, next %d", len(snap.Events), snap.Events[0].Sequence, *snap.Next)
	}
	if snap.Gap == nil || snap.Gap.From != 1 || snap.Gap.To != 50 {
		t.Fatalf("gap = %+v", snap.Gap)
	}
	empty, _ := p.read(id, 250, 10, false, false)
	if len(empty.Events) != 0 || *empty.Next != 250 || empty.Gap != nil {
		t.Fatalf("empty page: %+v", empty)
	}
	// Byte bound: large events evict older ones.
	big := strings.Repeat("y", 100_000)
	for i := 0; i < 10; i++ {
		p.append(core.ProgressEvent{ThreadID: "t2", Kind: core.KindAssistantText, Text: big})
	}
	p.mu.Lock()
	l := p.threads["t2"]
	if l.bytes > maxThreadBytes || len(l.entries) >= 10 {
		t.Errorf("byte bound not applied: %d bytes, %d entries", l.bytes, len(l.entries))
	}
	p.mu.Unlock()
	// Stale after 90 s without activity; TTL drops events after 30 min.
	clock.Advance(91 * time.Second)
	if s, _ := p.read(id, 0, 1, true, false); !s.Stale || !s.Connected {
		t.Errorf("stale=%v connected=%v after 91 s", s.Stale, s.Connected)
	}
	p.touch()
	if s, _ := p.read(id, 0, 1, true, false); s.Stale {
		t.Error("stale right after activity")
	}
	clock.Advance(31 * time.Minute)
	if s, _ := p.read(id, 250, 5, false, false); len(s.Events) != 0 || s.SecondsSinceLastEvent != nil {
		t.Errorf("events survived the TTL: %+v", s)
	}

	// A waiter wakes on the first new event.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	armed := clock.Trap().NewTimer(TagWait)
	defer armed.Close()
	got := make(chan core.ProgressSnapshot, 1)
	go func() { got <- p.wait(context.Background(), core.ProgressQuery{ThreadID: "w", TimeoutMs: 30_000}) }()
	if call := armed.MustWait(ctx); call.Duration != 30*time.Second {
		t.Fatalf("wait armed %v, want 30s", call.Duration)
	} else {
		call.MustRelease(ctx)
	}
	p.append(core.ProgressEvent{ThreadID: "w", Kind: core.KindTurnState, State: "running"})
	if s := <-got; len(s.Events) != 1 || s.CurrentState != "running" {
		t.Fatalf("woken snapshot: %+v", s)
	}
	// A waiter returns the empty page at the (capped) deadline.
	go func() {
		got <- p.wait(context.Background(), core.ProgressQuery{ThreadID: "w", AfterSequence: 1, TimeoutMs: 30_000})
	}()
	armed.MustWait(ctx).MustRelease(ctx)
	p.append(core.ProgressEvent{ThreadID: "other", Kind: core.KindTurnState})
	clock.Advance(30 * time.Second).MustWait(ctx)
	if s := <-got; len(s.Events) != 0 || *s.Next != 1 {
		t.Fatalf("deadline snapshot: %+v", s)
	}
}

func TestProcScanFindsOrchestrator(t *testing.T) {
	proc := t.TempDir()
	mk := func(pid int, env, cmdline string, fds map[string]string, tcp, tcp6 string) {
		dir := filepath.Join(proc, fmt.Sprint(pid))
		must(t, os.MkdirAll(filepath.Join(dir, "fd"), 0o755))
		must(t, os.MkdirAll(filepath.Join(dir, "net"), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "environ"), []byte(strings.ReplaceAll(env, " ", "\x00")), 0o644))
		must(t, os.WriteFile(filepath.Join(dir, "cmdline"), []byte(strings.ReplaceAll(cmdline, " ", "\x00")), 0o644))
		for fd, target := range fds {
			must(t, os.Symlink(target, filepath.Join(dir, "fd", fd)))
		}
		hdr := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
		must(t, os.WriteFile(filepath.Join(dir, "net", "tcp"), []byte(hdr+tcp), 0o644))
		must(t, os.WriteFile(filepath.Join(dir, "net", "tcp6"), []byte(hdr+tcp6), 0o644))
	}
	// 4242: the orchestrator, listening on 127.0.0.1:45677 (inode 9001) and
	// [::1]:45678 (9002); 9003 is a connected socket and 9004 listens on a
	// LAN address.
	mk(4242, "HOME=/h FREEBUFF_LAUNCH_ID=launch-abc PORT=0", "bun orchestrator.js",
		map[string]string{"3": "socket:[9001]", "4": "socket:[9002]", "5": "socket:[9003]", "6": "socket:[9004]", "7": "/dev/null"},
		"   0: 0100007F:B26D 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 9001 1\n"+
			"   1: 0100007F:B26E 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 9003 1\n"+
			"   2: 0A00A8C0:B26F 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 9004 1\n"+
			"   3: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 7777 1\n",
		"   0: 00000000000000000000000001000000:B26E 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 9002 1\n")
	// 5000: Bun orchestrator started with --port and no launch id.
	mk(5000, "HOME=/h", "bun resources/orchestrator/orchestrator.js --port 40111", nil, "", "")
	// 6000: an unrelated process.
	mk(6000, "HOME=/h", "bash", map[string]string{"3": "socket:[7777]"}, "", "")
	got := scanProc(proc, 1)
	if len(got) != 2 {
		t.Fatalf("found %+v", got)
	}
	if got[0].PID != 5000 || got[0].LaunchID != "" || fmt.Sprint(got[0].Ports) != "[40111]" {
		t.Errorf("bun process: %+v", got[0])
	}
	if got[1].PID != 4242 || got[1].LaunchID != "launch-abc" || fmt.Sprint(got[1].Ports) != "[45677 45678]" {
		t.Errorf("orchestrator: %+v", got[1])
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestReadinessFile(t *testing.T) {
	now := time.Date(2026, 9, 24, 12, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		must(t, os.WriteFile(p, []byte(body), 0o644))
		must(t, os.Chtimes(p, now, now))
		return p
	}
	c, err := readReadiness(write("ok.json", `{"port":4567,"launch_id":"L1","pid":12,"updatedAt":"2026-09-24T11:55:00Z"}`), now)
	if err != nil || c.URL != "http://127.0.0.1:4567" || c.LaunchID != "L1" || c.PID != 12 {
		t.Fatalf("readiness = %+v, %v", c, err)
	}
	if _, err := readReadiness(write("old.json", `{"url":"http://127.0.0.1:1","timestamp":`+fmt.Sprint(now.Add(-11*time.Minute).UnixMilli())+`}`), now); err == nil || !strings.Contains(err.Error(), "older than 10 minutes") {
		t.Fatalf("stale record accepted: %v", err)
	}
	if _, err := readReadiness(write("remote.json", `{"url":"http://192.168.1.2:4567","launchId":"x"}`), now); err == nil || !strings.Contains(err.Error(), "not a loopback") {
		t.Fatalf("remote URL accepted: %v", err)
	}
	if _, err := readReadiness(write("wild.json", `{"url":"http://[::]:4567"}`), now); err == nil {
		t.Fatal("IPv6 wildcard accepted")
	}
	if _, err := readReadiness(write("creds.json", `{"url":"http://u:p@127.0.0.1:4567"}`), now); err == nil {
		t.Fatal("URL with credentials accepted")
	}
	old := write("mtime.json", `{"port":4567}`)
	must(t, os.Chtimes(old, now.Add(-time.Hour), now.Add(-time.Hour)))
	if _, err := readReadiness(old, now); err == nil {
		t.Fatal("a record without a timestamp is dated by its file")
	}
}

// A discovery or subscription still under way when the backend closes must
// not start an event loop that nothing would end (CI's leakcheck found one
// asleep in its reconnect backoff after the tests passed).
func TestEventsDoNotStartAfterClose(t *testing.T) {
	b := New(core.Config{ProcDir: "-", HomeDir: t.TempDir(), WorkDir: t.TempDir(), Clock: newFakeClock(t)}, nil)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	_, cancel := b.Subscribe("91c70001-0001-4000-8000-000000000001")
	defer cancel()
	b.events.mu.Lock()
	running := b.events.running
	b.events.mu.Unlock()
	if running {
		b.events.stop()
		t.Fatal("Subscribe after Close started the event loop")
	}
}
