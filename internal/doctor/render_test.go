package doctor

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
)

var update = flag.Bool("update", false, "rewrite the 100-column doctor and providers goldens in testdata")

// longReport is a report with the long texts real programs give: a
// program path deep in a cache, a handshake error naming every place it
// looked, a fix with a command line, a shared note and a limitation.
func longReport() (Report, []providers.Capabilities) {
	ready := readyCaps("/home/someone/.cache/agent-interop-runtime/providers/node_modules/.bin/codex-app-server-wrapper", "0.171.0")
	ready.Provider = providers.Codex
	ready.Limitations = append(ready.Limitations, "events are the live notifications of this runtime's app-server; codex does not replay them after a restart of the runtime or of the program")
	gone := allCaps(providers.Capability{State: providers.Unavailable,
		Reason: "Freebuff is unavailable or read-only: No Freebuff Desktop orchestrator was found (checked FREEBUFF_DESKTOP_READINESS_FILE, FREEBUFF_ORCHESTRATOR_URL + FREEBUFF_LAUNCH_ID, orchestrator processes, orchestrator logs)",
		Fix:    "start Freebuff Desktop, or set FREEBUFF_ORCHESTRATOR_URL and FREEBUFF_LAUNCH_ID, or install the freebuff CLI (FREEBUFF_CLI_PATH)"})
	gone.Provider = providers.Freebuff
	rep := Report{Runtime: "v0.0.0-test", StartedAt: time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC), ElapsedMS: 1234,
		Store: StoreReport{Path: "/home/someone/.agent-interop-runtime/interop.db", Exists: true, Opens: true, IntegrityChecked: true,
			SchemaVersion: "0123456789abcdef0123"},
		Providers: []ProviderReport{
			{Provider: ready.Provider, Summary: SummaryReady, Authorization: ready.Authorization, Capabilities: named(ready), Limitations: ready.Limitations,
				Program:   Program{Found: true, Path: ready.Program, Version: ready.ProviderVersion, VersionSource: VersionFromFlag},
				Handshake: Handshake{Status: HandshakeOK, DurationMS: 87}},
			{Provider: gone.Provider, Summary: SummaryUnavailable, Authorization: gone.Authorization, Capabilities: named(gone),
				Handshake: Handshake{Status: HandshakeFailed, DurationMS: 187, Detail: "freebuff discovery: " + gone.Discovery.Reason +
					"; and no freebuff executable was found (set FREEBUFF_CLI_PATH, or install it into ~/.config/manicode or PATH)", Fix: gone.Discovery.Fix}},
		},
		Cleanup: []string{"the OpenCode server this check started (pid 4242, http://127.0.0.1:40961) did not stop within 5 s of SIGTERM and was killed"},
	}
	return rep, []providers.Capabilities{ready, gone}
}

// TestTextFitsOneHundredColumns: doctor's and providers' text fits a
// 100-column terminal (long texts wrap, never cut); program paths appear
// only with --verbose. The goldens show the layout (-update rewrites them).
func TestTextFitsOneHundredColumns(t *testing.T) {
	rep, list := longReport()
	path := list[0].Program
	for _, c := range []struct {
		golden string
		render func(*bytes.Buffer, TextOptions) error
		words  []string // the ends of long texts, whole after wrapping
	}{
		{"doctor.golden", func(b *bytes.Buffer, o TextOptions) error { return RenderText(b, rep, o) },
			[]string{"FREEBUFF_LAUNCH_ID,", "FREEBUFF_CLI_PATH)", "program", "killed"}},
		{"providers.golden", func(b *bytes.Buffer, o TextOptions) error { return RenderProvidersText(b, list, o) },
			[]string{"FREEBUFF_LAUNCH_ID,", "FREEBUFF_CLI_PATH)"}},
	} {
		t.Run(c.golden, func(t *testing.T) {
			var b, v bytes.Buffer
			if err := c.render(&b, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for i, l := range strings.Split(out, "\n") {
				if len([]rune(l)) > Width {
					t.Errorf("line %d is %d columns: %q", i+1, len([]rune(l)), l)
				}
			}
			if strings.Contains(out, path) {
				t.Error("the program path is printed without --verbose")
			}
			for _, word := range c.words {
				if !strings.Contains(out, word) {
					t.Errorf("wrapping lost %q", word)
				}
			}
			if err := c.render(&v, TextOptions{Verbose: true}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(v.String(), path) {
				t.Error("--verbose does not print the program path")
			}
			file := filepath.Join("testdata", c.golden)
			if *update {
				if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/doctor -update)", err)
			}
			if out != string(want) {
				t.Errorf("output differs from %s (go test ./internal/doctor -update rewrites it):\n%s", file, out)
			}
		})
	}
}

func TestWrap(t *testing.T) {
	for _, c := range []struct {
		text        string
		first, rest int
		want        []string
	}{
		{"", 20, 20, []string{""}},
		{"one two three", 20, 20, []string{"one two three"}},
		{"one two three four", 10, 12, []string{"one two", "three four"}},
		{"abcdefghijklmnopqrstuvwxyz end", 10, 10, []string{"abcdefghij", "klmnopqrst", "uvwxyz end"}},
		{"a abcdefghijklmnopqrstuvwxyz", 10, 10, []string{"a", "abcdefghij", "klmnopqrst", "uvwxyz"}},
	} {
		if got := wrap(c.text, c.first, c.rest); strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("wrap(%q, %d, %d) = %q, want %q", c.text, c.first, c.rest, got, c.want)
		}
	}
}
