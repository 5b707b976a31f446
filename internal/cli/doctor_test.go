package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/catalogs"
	doctorpkg "github.com/agent-interop/runtime/internal/doctor"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/codex"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// isolate makes vars the whole process environment for the test (the
// provider programs doctor starts inherit it), restoring the old one at
// cleanup, and returns the lookup the command line gets.
func isolate(t *testing.T, vars map[string]string) Env {
	t.Helper()
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, keep := vars[k]; !keep && k != "" {
			t.Setenv(k, os.Getenv(k)) // registers the restore
			os.Unsetenv(k)
		}
	}
	for k, v := range vars {
		t.Setenv(k, v)
	}
	return os.LookupEnv
}

func envMap(e *realpeers.Env) map[string]string {
	m := map[string]string{}
	for _, kv := range e.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// processesWithHome returns the pids (other than this process) whose
// environment has HOME=home: the programs doctor started there.
func processesWithHome(home string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(b, []byte{0}) {
			if string(kv) == "HOME="+home {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

func newStore(t *testing.T, path string) {
	t.Helper()
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDoctorJSONWithRealPrograms runs `doctor --json` against the pinned
// codex and claude-agent-acp (scripts/install-providers.sh), in an isolated
// HOME where Cursor and Freebuff cannot be found.
func TestDoctorJSONWithRealPrograms(t *testing.T) {
	codexPath := realpeers.Require(t, realpeers.Codex)
	claudePath := realpeers.Require(t, realpeers.ClaudeACP)
	node, err := exec.LookPath("node")
	if err != nil {
		if realpeers.InCI() {
			t.Fatalf("node is needed by the codex and claude-agent-acp launchers: %v", err)
		}
		t.Skipf("node not on PATH (needed by the codex and claude-agent-acp launchers): %v", err)
	}

	e := realpeers.ClaudeEnv(t, "") // isolated HOME, IS_SANDBOX=1, no credentials
	codexHome := filepath.Join(e.Home(), ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(e.Root(), "state", "interop.db")
	newStore(t, db)
	e.Set("CODEX_HOME", codexHome).
		Set("PATH", filepath.Dir(node)). // node only: no agent, cursor-agent or freebuff
		Set(store.EnvDB, db).
		Set(codex.EnvCommand, codexPath).
		Set("CLAUDE_ACP_COMMAND", claudePath).
		Set("OPENCODE_DISABLE_AUTOUPDATE", "1")
	env := isolate(t, envMap(e))

	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := runDoctor(context.Background(), []string{"--json"}, env, IO{Stdout: &stdout, Stderr: &stderr},
		doctorSeams{freebuffProcDir: "-"})
	elapsed := time.Since(start)
	if code != 0 {
		t.Fatalf("doctor --json exited %d; stderr: %s", code, stderr.String())
	}
	// A bound, not a measure: doctor must not wait past its own timeout
	// for a provider, with room for a loaded machine.
	if elapsed > doctorpkg.DefaultTimeout+60*time.Second {
		t.Fatalf("doctor took %s", elapsed)
	}
	out := stdout.Bytes()
	t.Logf("doctor --json (%s): %s", elapsed, out)
	if bytes.Count(out, []byte("\n")) != 1 {
		t.Fatalf("--json must print one compact line:\n%s", out)
	}
	var rep doctorpkg.Report
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	get := func(id providers.ID) doctorpkg.ProviderReport {
		for _, p := range rep.Providers {
			if p.Provider == id {
				return p
			}
		}
		t.Fatalf("no %s in %s", id, out)
		return doctorpkg.ProviderReport{}
	}
	if len(rep.Providers) != len(providers.Order()) {
		t.Fatalf("%d providers in %s", len(rep.Providers), out)
	}
	for i, id := range providers.Order() {
		if rep.Providers[i].Provider != id {
			t.Fatalf("provider %d = %s, want %s (registry order)", i, rep.Providers[i].Provider, id)
		}
	}

	for _, tc := range []struct {
		id      providers.ID
		program string
		version string
	}{
		{providers.Codex, codexPath, realpeers.Codex.Spec().Version},
		{providers.ClaudeCode, claudePath, realpeers.ClaudeACP.Spec().Version},
	} {
		p := get(tc.id)
		if !p.Program.Found || p.Program.Path != tc.program {
			t.Errorf("%s program = %+v, want %s", tc.id, p.Program, tc.program)
		}
		if p.Program.Version != tc.version {
			t.Errorf("%s version = %q (%s), want %s", tc.id, p.Program.Version, p.Program.VersionSource, tc.version)
		}
		if p.Handshake.Status != doctorpkg.HandshakeOK {
			t.Errorf("%s handshake = %+v, want ok", tc.id, p.Handshake)
		}
		if d, _ := p.Capability("discovery"); d.State == providers.Unavailable || d.State == providers.Unknown {
			t.Errorf("%s discovery = %+v after a good handshake", tc.id, d)
		}
	}

	for _, id := range []providers.ID{providers.Cursor, providers.Freebuff} {
		p := get(id)
		if p.Summary != doctorpkg.SummaryUnavailable {
			t.Errorf("%s summary = %s, want unavailable", id, p.Summary)
		}
		if p.Handshake.Status == doctorpkg.HandshakeOK || p.Handshake.Detail == "" || p.Handshake.Fix == "" {
			t.Errorf("%s handshake = %+v, want a failure with its reason and a fix", id, p.Handshake)
		}
		for _, c := range p.Capabilities {
			if c.State != providers.Unavailable || c.Reason == "" {
				t.Errorf("%s %s = %+v, want unavailable with a reason", id, c.Name, c.Capability)
			}
		}
		if d, _ := p.Capability("discovery"); d.Fix == "" {
			t.Errorf("%s discovery has no fix: %+v", id, d)
		}
	}

	// OpenCode is never started by doctor: a server that runs may answer
	// (another process's), otherwise the handshake is skipped with why.
	if o := get(providers.OpenCode); o.Handshake.Status != doctorpkg.HandshakeOK &&
		(o.Handshake.Status != doctorpkg.HandshakeSkipped || !strings.Contains(o.Handshake.Detail, openCodeNoStart)) {
		t.Errorf("opencode handshake = %+v", o.Handshake)
	}

	if !rep.Store.Opens || !rep.Store.IntegrityChecked || rep.Store.Path != db || rep.Store.SchemaVersion != store.SchemaVersion() || rep.Store.Recovery != nil {
		t.Errorf("store = %+v", rep.Store)
	}
	if len(rep.Cleanup) != 0 {
		t.Errorf("cleanup = %v", rep.Cleanup)
	}

	// Everything doctor started is gone.
	var left []int
	if !wait.Until(wait.Process, func() bool { left = processesWithHome(e.Home()); return len(left) == 0 }) {
		t.Fatalf("processes started by doctor still run after %v: %v", wait.Process, left)
	}
}

// TestDoctorWithoutPrograms prints the human table when nothing is
// installed: every provider is reported with a reason, and the exit code
// is 0 (a missing provider is not an error of doctor).
func TestDoctorWithoutPrograms(t *testing.T) {
	root := t.TempDir()
	env := isolate(t, map[string]string{
		"HOME": filepath.Join(root, "home"),
		"PATH": filepath.Join(root, "empty-bin"),
	})
	var stdout, stderr bytes.Buffer
	code := runDoctor(context.Background(), nil, env, IO{Stdout: &stdout, Stderr: &stderr}, doctorSeams{freebuffProcDir: "-"})
	if code != 0 {
		t.Fatalf("doctor exited %d; stderr: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"PROVIDER", "SUMMARY", "HANDSHAKE", "not created yet",
		"freebuff: unavailable", "codex: unavailable", "claude-code: unavailable", "cursor: unavailable",
		"npm install -g @openai/codex", "npm install -g @agentclientprotocol/claude-agent-acp", "CURSOR_AGENT_COMMAND"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "home", store.DefaultDir)); err == nil {
		t.Error("doctor created the store directory")
	}
}

func TestDoctorUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Do(context.Background(), []string{"doctor", "--bogus"}, os.LookupEnv, IO{Stdout: &stdout, Stderr: &stderr}); code != 2 {
		t.Fatalf("doctor --bogus exited %d", code)
	}
	if code := Do(context.Background(), []string{"doctor", "extra"}, os.LookupEnv, IO{Stdout: &stdout, Stderr: &stderr}); code != 2 {
		t.Fatalf("doctor extra exited %d", code)
	}
	for _, cmd := range []string{"doctor [--json | --verbose]", "providers [--json | --verbose]", "sessions [--provider P] [--json]"} {
		stdout.Reset()
		name, _, _ := strings.Cut(cmd, " ")
		if code := Do(context.Background(), []string{name, "--help"}, os.LookupEnv, IO{Stdout: &stdout, Stderr: &stderr}); code != 0 || !strings.Contains(flat(stdout.String()), "usage: interop-runtime "+cmd) {
			t.Errorf("%s --help exited %d:\n%s", name, code, stdout.String())
		}
	}
}

// TestProvidersAndSessionsCommands drives `providers` and `sessions`
// where no provider program is installed.
func TestProvidersAndSessionsCommands(t *testing.T) {
	root := t.TempDir()
	env := isolate(t, map[string]string{
		"HOME":                filepath.Join(root, "home"),
		"PATH":                filepath.Join(root, "empty-bin"),
		store.EnvDB:           filepath.Join(root, "interop.db"),
		"OPENCODE_AUTO_START": "false",
	})
	ctx := context.Background()
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := Do(ctx, args, env, IO{Stdout: &stdout, Stderr: &stderr})
		return code, stdout.String(), stderr.String()
	}

	code, out, errOut := run("providers", "--json", "--timeout", "10s")
	if code != 0 {
		t.Fatalf("providers --json exited %d: %s", code, errOut)
	}
	var list struct {
		Providers []providers.Capabilities `json:"providers"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Providers) != len(providers.Order()) {
		t.Fatalf("providers --json = %s (%v)", out, err)
	}
	for i, id := range providers.Order() {
		if list.Providers[i].Provider != id {
			t.Fatalf("provider %d = %s, want %s", i, list.Providers[i].Provider, id)
		}
	}
	if c := list.Providers[4]; c.Discovery.State != providers.Unavailable || c.Discovery.Fix == "" {
		t.Fatalf("cursor = %+v", c.Discovery)
	}

	code, out, errOut = run("providers")
	if code != 0 || !strings.Contains(out, "PROVIDER") || !strings.Contains(out, "cursor") || !strings.Contains(out, "fix: ") {
		t.Fatalf("providers exited %d:\n%s\n%s", code, out, errOut)
	}

	code, _, errOut = run("sessions", "--provider", "bogus")
	if code != 2 || !strings.Contains(errOut, "Unknown provider bogus") {
		t.Fatalf("sessions --provider bogus exited %d: %s", code, errOut)
	}

	code, out, errOut = run("sessions", "--provider", "cursor", "--json")
	if code != 0 {
		t.Fatalf("sessions --json exited %d: %s", code, errOut)
	}
	var sl struct {
		Sessions       []providers.Session `json:"sessions"`
		ProviderErrors []struct{ Provider, Error string }
	}
	if err := json.Unmarshal([]byte(out), &sl); err != nil || sl.Sessions == nil || len(sl.Sessions) != 0 ||
		len(sl.ProviderErrors) != 1 || sl.ProviderErrors[0].Provider != "cursor" || sl.ProviderErrors[0].Error == "" {
		t.Fatalf("sessions --json = %s (%v)", out, err)
	}

	code, out, _ = run("sessions", "--provider", "cursor")
	if code != 0 || !strings.Contains(out, "no sessions") || !strings.Contains(out, "cursor: ") {
		t.Fatalf("sessions exited %d:\n%s", code, out)
	}
}

// TestDoctorNamesModernTools: doctor's report (text and JSON) names tools
// by their modern names; a 0.3.x name appears only as "(<name> in 0.3.x)".
func TestDoctorNamesModernTools(t *testing.T) {
	root := t.TempDir()
	env := isolate(t, map[string]string{
		"HOME": filepath.Join(root, "home"),
		"PATH": filepath.Join(root, "empty-bin"),
	})
	modern := map[string]bool{}
	full, _ := catalogs.LookupProfile("full")
	for _, e := range full.Entries(false) {
		modern[e.Name] = true
	}
	legacy, _ := catalogs.LookupProfile("legacy")
	var old []string
	for _, e := range legacy.Entries(false) {
		if !modern[e.Name] {
			old = append(old, regexp.QuoteMeta(e.Name))
		}
	}
	if len(old) < 30 {
		t.Fatalf("only %d 0.3.x-only names found", len(old))
	}
	oldName := regexp.MustCompile(`\b(` + strings.Join(old, "|") + `)\b( in 0\.3\.x)?`)
	for _, args := range [][]string{nil, {"--json"}} {
		var stdout, stderr bytes.Buffer
		if code := runDoctor(context.Background(), args, env, IO{Stdout: &stdout, Stderr: &stderr}, doctorSeams{freebuffProcDir: "-"}); code != 0 {
			t.Fatalf("doctor %v exited %d: %s", args, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), "send_session_message") {
			t.Errorf("doctor %v no longer names send_session_message; the check below may be vacuous", args)
		}
		for _, m := range oldName.FindAllStringSubmatch(stdout.String(), -1) {
			if m[2] == "" {
				t.Errorf("doctor %v names the 0.3.x tool %s without saying so", args, m[1])
			}
		}
	}
}
