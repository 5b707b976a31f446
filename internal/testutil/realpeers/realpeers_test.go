package realpeers

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/procgroup"
	"github.com/agent-interop/runtime/internal/testutil/proctest"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

func TestModuleRoot(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !strings.Contains(string(b), "module github.com/agent-interop/runtime") {
		t.Fatalf("go.mod at %s: %v", root, err)
	}
}

func writeExec(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestFindUsesOverrideThenCache(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("INTEROP_PROVIDER_CACHE", cache)
	t.Setenv("INTEROP_TEST_CODEX", "")
	if _, err := Find(Codex); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("empty cache: %v", err)
	}
	dir, err := Codex.InstallDir()
	if err != nil || dir != filepath.Join(cache, "@openai+codex@0.171.0") {
		t.Fatalf("InstallDir = %s, %v", dir, err)
	}
	bin := filepath.Join(dir, "node_modules", ".bin", "codex")
	writeExec(t, bin)
	if got, err := Find(Codex); err != nil || got != bin {
		t.Fatalf("Find = %s, %v", got, err)
	}
	other := filepath.Join(t.TempDir(), "my-codex")
	writeExec(t, other)
	t.Setenv("INTEROP_TEST_CODEX", other)
	if got, err := Find(Codex); err != nil || got != other {
		t.Fatalf("Find with override = %s, %v", got, err)
	}
	notExec := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(notExec, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("INTEROP_TEST_CODEX", notExec)
	if _, err := Find(Codex); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("non-executable override: %v", err)
	}
}

// recordingTB captures Skip and Fatal instead of ending the test.
type recordingTB struct {
	testing.TB
	skipped, failed string
}

func (r *recordingTB) Helper()             {}
func (r *recordingTB) Skip(args ...any)    { r.skipped = fmt.Sprint(args...) }
func (r *recordingTB) Fatal(args ...any)   { r.failed = fmt.Sprint(args...) }
func (r *recordingTB) Logf(string, ...any) {}

func TestRequireSkipsLocallyAndFailsInCI(t *testing.T) {
	t.Setenv("INTEROP_PROVIDER_CACHE", t.TempDir())
	t.Setenv("INTEROP_TEST_OPENCODE", "")
	t.Setenv("CI", "")
	rec := &recordingTB{TB: t}
	if got := require(rec, OpenCode, true); got != "" || rec.failed != "" || !strings.HasPrefix(rec.skipped, "opencode not installed; run scripts/install-providers.sh") {
		t.Fatalf("local: got %q skipped %q failed %q", got, rec.skipped, rec.failed)
	}
	t.Setenv("CI", "true")
	rec = &recordingTB{TB: t}
	if require(rec, OpenCode, true); rec.skipped != "" || !strings.Contains(rec.failed, "opencode not installed") {
		t.Fatalf("CI: skipped %q failed %q", rec.skipped, rec.failed)
	}
}

// TestRequireSkipsOutsideItsTier: without the build tag a real-program test
// is skipped, even under CI=true (the unit tier runs there too) and even
// when the program is installed.
func TestRequireSkipsOutsideItsTier(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "opencode")
	if err := os.WriteFile(bin, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("INTEROP_TEST_OPENCODE", bin)
	t.Setenv("CI", "true")
	rec := &recordingTB{TB: t}
	if got := require(rec, OpenCode, false); got != "" || rec.failed != "" || rec.skipped != TierSkip {
		t.Fatalf("got %q skipped %q failed %q", got, rec.skipped, rec.failed)
	}
	rec = &recordingTB{TB: t}
	if got := require(rec, OpenCode, true); got != bin || rec.skipped != "" || rec.failed != "" {
		t.Fatalf("in the tier: got %q skipped %q failed %q", got, rec.skipped, rec.failed)
	}
}

func TestEnvIsIsolated(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-must-not-leak")
	t.Setenv("ANTHROPIC_API_KEY", "sk-must-not-leak")
	e := OpenCodeEnv(t, OpenCodeConfig("http://127.0.0.1:1/v1"))
	env := strings.Join(e.Environ(), "\n")
	if strings.Contains(env, "sk-must-not-leak") {
		t.Fatal("the caller's credentials leaked into the environment")
	}
	if !strings.HasPrefix(e.Home(), e.Root()) || e.Get("XDG_DATA_HOME") != filepath.Join(e.Home(), ".local", "share") {
		t.Fatalf("home %s root %s", e.Home(), e.Root())
	}
	if fi, err := os.Stat(e.Get("XDG_CONFIG_HOME")); err != nil || !fi.IsDir() {
		t.Fatalf("XDG_CONFIG_HOME not created: %v", err)
	}
	var cfg map[string]any
	if err := json.Unmarshal([]byte(e.Get("OPENCODE_CONFIG_CONTENT")), &cfg); err != nil || cfg["model"] != "fake/echo" {
		t.Fatalf("config %v, %v", cfg, err)
	}
	if e.Get("OPENCODE_DISABLE_AUTOUPDATE") != "1" || e.Get("PATH") == "" {
		t.Fatalf("env %s", env)
	}

	c := ClaudeEnv(t, "http://127.0.0.1:9")
	if c.Get("IS_SANDBOX") != "1" || c.Get("ANTHROPIC_BASE_URL") != "http://127.0.0.1:9" || c.Get("ANTHROPIC_API_KEY") != "sk-fake" {
		t.Fatalf("claude env %v", c.Environ())
	}
	x := CodexEnv(t, "http://127.0.0.1:9/v1")
	b, err := os.ReadFile(filepath.Join(x.Get("CODEX_HOME"), "config.toml"))
	if err != nil || !strings.Contains(string(b), `base_url = "http://127.0.0.1:9/v1"`) || !strings.Contains(string(b), `wire_api = "responses"`) {
		t.Fatalf("codex config %s, %v", b, err)
	}
	var catalog struct {
		Models []struct {
			Slug               string `json:"slug"`
			ApplyPatchToolType string `json:"apply_patch_tool_type"`
		} `json:"models"`
	}
	cat := filepath.Join(x.Get("CODEX_HOME"), "fake-models.json")
	if raw, err := os.ReadFile(cat); err != nil || json.Unmarshal(raw, &catalog) != nil || len(catalog.Models) != 1 ||
		catalog.Models[0].Slug != FakeModel || catalog.Models[0].ApplyPatchToolType != "freeform" || !strings.Contains(string(b), fmt.Sprintf("model_catalog_json = %q", cat)) {
		t.Fatalf("codex model catalog %s: %+v, %v", b, catalog, err)
	}
}

func TestKillGroupEndsChildren(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 300 & echo $!; wait")
	procgroup.Set(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var child int
	if _, err := fmt.Fscan(out, &child); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	KillGroup(cmd.Process.Pid, exited, 2*time.Second)
	wait.For(t, fmt.Sprintf("child %d of the group to end", child), wait.Process, func() bool { return !alive(child) })
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if !proctest.Exists(pid) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) == 0 || f[0] != "Z"
}
