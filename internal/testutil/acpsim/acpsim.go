// Package acpsim provides the simulated Cursor ACP peer for tests: a Go
// program (cmd/fakecursor) built from Cursor's documented `agent acp`
// protocol, a helper that builds it, and a transcript recorder that checks
// the exact messages exchanged against the fixtures in testdata/.
//
// CHECKLIST.md lists the behaviours the simulator reproduces, each with the
// fixture that records it.
package acpsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Package is the import path of the simulator's main package.
const Package = "github.com/agent-interop/runtime/internal/testutil/acpsim/cmd/fakecursor"

// BuildTo compiles fakecursor into dir and returns the binary's path.
func BuildTo(dir string) (string, error) {
	out := filepath.Join(dir, "fakecursor")
	cmd := exec.Command("go", "build", "-o", out, Package)
	cmd.Dir = moduleDir()
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", Package, err, b)
	}
	return out, nil
}

// Build compiles fakecursor into the test's temporary directory.
func Build(tb testing.TB) string {
	tb.Helper()
	p, err := BuildTo(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// moduleDir is this package's directory (inside the module), so go build
// resolves the module whatever the test's working directory.
func moduleDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "."
	}
	return filepath.Dir(file)
}

// Entry is one message of a transcript.
type Entry struct {
	Dir string          `json:"dir"` // "client->agent" or "agent->client"
	Msg json.RawMessage `json:"msg"`
}

// Fixture is a recorded exchange for one behaviour.
type Fixture struct {
	Behaviour string  `json:"behaviour"`
	Messages  []Entry `json:"messages"`
}

// Recorder collects the messages of an exchange. Replace substitutes
// run-specific strings (temporary paths) with stable placeholders.
type Recorder struct {
	mu       sync.Mutex
	entries  []Entry
	replacer []string
}

// NewRecorder returns a recorder that replaces each old string of pairs
// (old, new, old, new, ...) in every recorded message.
func NewRecorder(pairs ...string) *Recorder { return &Recorder{replacer: pairs} }

// Record adds one message line.
func (r *Recorder) Record(dir string, line []byte) {
	s := string(bytes.TrimSpace(line))
	for i := 0; i+1 < len(r.replacer); i += 2 {
		s = strings.ReplaceAll(s, r.replacer[i], r.replacer[i+1])
	}
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return
	}
	canon, _ := json.Marshal(v) // sorted keys
	r.mu.Lock()
	r.entries = append(r.entries, Entry{Dir: dir, Msg: canon})
	r.mu.Unlock()
}

// Entries returns what was recorded so far.
func (r *Recorder) Entries() []Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Entry(nil), r.entries...)
}

// Methods lists the methods of the recorded messages in one direction, in
// order ("result"/"error" for responses).
func (r *Recorder) Methods(dir string) []string {
	var out []string
	for _, e := range r.Entries() {
		if e.Dir != dir {
			continue
		}
		var m struct {
			Method string          `json:"method"`
			Error  json.RawMessage `json:"error"`
		}
		_ = json.Unmarshal(e.Msg, &m)
		switch {
		case m.Method != "":
			out = append(out, m.Method)
		case m.Error != nil:
			out = append(out, "error")
		default:
			out = append(out, "result")
		}
	}
	return out
}

// Check compares the recording with testdata/<name>.json. With update true
// the fixture is (re)written instead. Messages are compared per direction
// and in order: the two directions interleave nondeterministically, each
// direction's own order does not.
func (r *Recorder) Check(tb testing.TB, name, behaviour string, update bool) {
	tb.Helper()
	path := filepath.Join(moduleDir(), "testdata", name+".json")
	got := Fixture{Behaviour: behaviour, Messages: r.Entries()}
	if update {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("fixture %s: %v (run the test with -update to record it)", name, err)
	}
	var want Fixture
	if err := json.Unmarshal(b, &want); err != nil {
		tb.Fatalf("fixture %s: %v", name, err)
	}
	for _, dir := range []string{"client->agent", "agent->client"} {
		g, w := direction(got.Messages, dir), direction(want.Messages, dir)
		if len(g) != len(w) {
			tb.Errorf("fixture %s, %s: %d messages, want %d\n got: %s\nwant: %s", name, dir, len(g), len(w), strings.Join(g, "\n      "), strings.Join(w, "\n      "))
			continue
		}
		for i := range g {
			if g[i] != w[i] {
				tb.Errorf("fixture %s, %s message %d:\n got %s\nwant %s", name, dir, i, g[i], w[i])
			}
		}
	}
}

func direction(entries []Entry, dir string) []string {
	var out []string
	for _, e := range entries {
		if e.Dir == dir {
			var v any
			_ = json.Unmarshal(e.Msg, &v)
			b, _ := json.Marshal(v)
			out = append(out, string(b))
		}
	}
	return out
}

// Fixtures lists the recorded fixture names (for the checklist test).
func Fixtures() ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(moduleDir(), "testdata", "*.json"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range matches {
		out = append(out, strings.TrimSuffix(filepath.Base(m), ".json"))
	}
	sort.Strings(out)
	return out, nil
}

// ChecklistPath is the path of CHECKLIST.md.
func ChecklistPath() string { return filepath.Join(moduleDir(), "CHECKLIST.md") }
