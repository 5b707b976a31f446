package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/testutil/e2etest"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
)

// runtimeBuild is the interop-runtime binary the real-client tests of this
// package share: built once (a -race link of the server costs seconds of
// CPU), removed by TestMain after the tests.
var runtimeBuild struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// buildRuntime builds interop-runtime once for the tests that need a real
// server binary for a client to start: with -race when the test runs under
// it, and the test fails when a run of that server reported a data race
// (any run so far: the tests share the binary and its race logs).
func buildRuntime(t *testing.T) string {
	t.Helper()
	b := &runtimeBuild
	b.once.Do(func() {
		root, err := realpeers.ModuleRoot()
		if err != nil {
			b.err = err
			return
		}
		if b.dir, b.err = os.MkdirTemp("", "cli-runtime-"); b.err != nil {
			return
		}
		b.bin, b.err = e2etest.Build(root, b.dir, "interop-runtime", "./cmd/interop-runtime")
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	t.Cleanup(func() {
		if races, err := e2etest.RaceReports(b.dir); err != nil || races != "" {
			t.Errorf("the interop-runtime server reported data races (%v):\n%s", err, races)
		}
	})
	return b.bin
}

// removeRuntimeBuild removes the shared interop-runtime build, if any.
func removeRuntimeBuild() {
	if runtimeBuild.dir != "" {
		_ = os.RemoveAll(runtimeBuild.dir)
	}
}

// runSetupCLI runs the command line in env and returns exit code, stdout
// and stderr.
func runSetupCLI(t *testing.T, env *realpeers.Env, dir string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	lookup := func(k string) (string, bool) {
		v := env.Get(k)
		return v, v != ""
	}
	if dir != "" {
		t.Chdir(dir)
	}
	code := Do(context.Background(), args, lookup, IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

// runClient runs a client program in env, offline, bounded in time.
func runClient(t *testing.T, env *realpeers.Env, dir, program string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Env = env.Environ()
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func copyFixture(t *testing.T, fixture, dst string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "clientsetup", "testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCodexAcceptsInstalledEntry writes the Codex entry with `install
// --write` into fixture config.toml files and asks the real codex to read
// them back (`codex mcp get --json`), offline in a private CODEX_HOME.
func TestCodexAcceptsInstalledEntry(t *testing.T) {
	codex := realpeers.Require(t, realpeers.Codex)
	bin := buildRuntime(t)
	get := func(t *testing.T, env *realpeers.Env, name string) map[string]any {
		t.Helper()
		out, err := runClient(t, env, env.Home(), codex, "mcp", "get", name, "--json")
		if err != nil {
			t.Fatalf("codex mcp get %s: %v\n%s", name, err, out)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &v); err != nil {
			t.Fatalf("codex mcp get output: %v\n%s", err, out)
		}
		return v
	}
	for _, tc := range []struct {
		fixture string
		symlink bool
		keep    string // another server the fixture has, which must survive
	}{
		{fixture: ""},
		{fixture: "codex/unrelated.toml", keep: "docs"},
		{fixture: "codex/repair.toml", keep: "other", symlink: true},
		{fixture: "codex/dotted.toml", keep: "keep"},
		{fixture: "codex/inline-in-parent.toml", keep: "docs"},
	} {
		t.Run(filepath.Base(tc.fixture), func(t *testing.T) {
			env := realpeers.NewEnv(t)
			codexHome := filepath.Join(env.Home(), ".codex")
			env.Set("CODEX_HOME", codexHome)
			cfg := filepath.Join(codexHome, "config.toml")
			if tc.fixture != "" {
				dst := cfg
				if tc.symlink {
					dst = filepath.Join(env.Root(), "dotfiles", "codex.toml")
				}
				copyFixture(t, tc.fixture, dst)
				if tc.symlink {
					_ = os.MkdirAll(codexHome, 0o700)
					if err := os.Symlink(dst, cfg); err != nil {
						t.Fatal(err)
					}
				}
			}
			code, stdout, stderr := runSetupCLI(t, env, "", "install", "--write", "--read-only", "--profile", "core", "--command", bin)
			if code != 0 {
				t.Fatalf("install exit %d: %s%s", code, stdout, stderr)
			}
			got := get(t, env, "agent_interop")
			tr, _ := got["transport"].(map[string]any)
			envs, _ := tr["env"].(map[string]any)
			if tr["type"] != "stdio" || tr["command"] != bin || strings.Join(toStrings(tr["args"]), " ") != "serve --profile core" || envs["INTEROP_READ_ONLY"] != "1" || got["enabled"] != true {
				t.Fatalf("codex reads the entry as %v", got)
			}
			if tc.keep != "" {
				if other := get(t, env, tc.keep); other["name"] != tc.keep {
					t.Fatalf("server %s lost: %v", tc.keep, other)
				}
			}
			if tc.symlink {
				if fi, err := os.Lstat(cfg); err != nil || fi.Mode()&os.ModeSymlink == 0 {
					t.Fatalf("config.toml is no longer a symlink: %v", err)
				}
			}
			// The approval setting is parsed, not ignored: codex refuses a
			// wrong value in the same place.
			b, _ := os.ReadFile(cfg)
			bad := strings.Replace(string(b), "default_tools_approval_mode = 'approve'", "default_tools_approval_mode = 'bogus'", 1)
			if bad == string(b) {
				t.Fatalf("no approval setting in:\n%s", b)
			}
			if err := os.WriteFile(cfg, []byte(bad), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := runClient(t, env, env.Home(), codex, "mcp", "list"); err == nil || !strings.Contains(out, "default_tools_approval_mode") {
				t.Fatalf("codex accepted a bogus approval mode (err %v):\n%s", err, out)
			}
		})
	}
	t.Run("http", func(t *testing.T) {
		env := realpeers.NewEnv(t)
		env.Set("CODEX_HOME", filepath.Join(env.Home(), ".codex"))
		if code, o, e := runSetupCLI(t, env, "", "setup", "codex", "--http", "--write"); code != 0 {
			t.Fatalf("exit %d: %s%s", code, o, e)
		}
		tr, _ := get(t, env, "agent_interop")["transport"].(map[string]any)
		if tr["type"] != "streamable_http" || tr["url"] != "http://127.0.0.1:8788/mcp" || tr["bearer_token_env_var"] != "AGENT_INTEROP_HTTP_TOKEN" {
			t.Fatalf("codex reads the HTTP entry as %v", tr)
		}
	})
	t.Run("malformed and read-only files are refused and kept", func(t *testing.T) {
		for _, tc := range []struct {
			fixture string
			mode    os.FileMode
		}{{"codex/malformed.toml", 0o600}, {"codex/unrelated.toml", 0o444}} {
			env := realpeers.NewEnv(t)
			codexHome := filepath.Join(env.Home(), ".codex")
			env.Set("CODEX_HOME", codexHome)
			cfg := filepath.Join(codexHome, "config.toml")
			before := copyFixture(t, tc.fixture, cfg)
			if err := os.Chmod(cfg, tc.mode); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := runSetupCLI(t, env, "", "install", "--write", "--command", bin)
			after, _ := os.ReadFile(cfg)
			if code != 1 || !bytes.Equal(before, after) || !strings.Contains(stderr, cfg) {
				t.Fatalf("%s: exit %d, changed %v, stderr %q", tc.fixture, code, !bytes.Equal(before, after), stderr)
			}
			if entries, _ := os.ReadDir(codexHome); len(entries) != 1 {
				t.Fatalf("%s: left %d files in CODEX_HOME", tc.fixture, len(entries))
			}
		}
	})
}

func toStrings(v any) []string {
	a, _ := v.([]any)
	var out []string
	for _, x := range a {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// addStoreEnv adds INTEROP_DB to the entry's environment object in a JSON
// config (key envKey) so the test can see the client pass it: the server
// opens (creates) its store at start.
func addStoreEnv(t *testing.T, file, container, name, envKey, db string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	entry := doc[container].(map[string]any)[name].(map[string]any)
	envs, _ := entry[envKey].(map[string]any)
	if envs["INTEROP_READ_ONLY"] != "1" {
		t.Fatalf("%s: %s holds %v", file, envKey, entry[envKey])
	}
	envs["INTEROP_DB"] = db
	out, _ := json.Marshal(doc)
	if err := os.WriteFile(file, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestOpenCodeConnectsToWrittenEntry writes the OpenCode entry into a
// symlinked opencode.json that has other settings, and the real
// `opencode mcp list` starts the server from it and connects. The
// environment key is "environment": the store path put there reaches the
// server.
func TestOpenCodeConnectsToWrittenEntry(t *testing.T) {
	opencode := realpeers.Require(t, realpeers.OpenCode)
	bin := buildRuntime(t)
	env := realpeers.NewEnv(t)
	env.Set("OPENCODE_DISABLE_AUTOUPDATE", "1").Set("OPENCODE_DISABLE_MODELS_FETCH", "1")
	cfg := filepath.Join(env.Get("XDG_CONFIG_HOME"), "opencode", "opencode.json")
	real := filepath.Join(env.Root(), "dotfiles", "opencode.json")
	copyFixture(t, "json/opencode-other.json", real)
	_ = os.MkdirAll(filepath.Dir(cfg), 0o700)
	if err := os.Symlink(real, cfg); err != nil {
		t.Fatal(err)
	}
	if code, o, e := runSetupCLI(t, env, "", "setup", "opencode", "--read-only", "--write", "--command", bin); code != 0 {
		t.Fatalf("exit %d: %s%s", code, o, e)
	}
	db := filepath.Join(env.Root(), "opencode-started.db")
	addStoreEnv(t, real, "mcp", "agent-interop", "environment", db)
	out, err := runClient(t, env, env.Home(), opencode, "mcp", "list")
	if err != nil {
		t.Fatalf("opencode mcp list: %v\n%s", err, out)
	}
	line := lineWith(out, "agent-interop")
	if !strings.Contains(line, "connected") {
		t.Fatalf("opencode does not list agent-interop as connected:\n%s", out)
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("the server OpenCode started did not get the entry's environment (no %s): %v\n%s", db, err, out)
	}
}

// claudeCLI is the Claude Code program the claude-agent-acp package ships
// (its platform SDK package), if installed.
func claudeCLI(t *testing.T) string {
	t.Helper()
	dir, err := realpeers.ClaudeACP.InstallDir()
	if err == nil {
		matches, _ := filepath.Glob(filepath.Join(dir, "node_modules", "@anthropic-ai", "claude-agent-sdk-*", "claude"))
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && fi.Mode()&0o111 != 0 {
				return m
			}
		}
	}
	realpeers.Require(t, realpeers.ClaudeACP) // skips (or fails in CI) when the package is missing
	t.Fatalf("claude-agent-acp is installed in %s but ships no claude program", dir)
	return ""
}

// TestClaudeConnectsToWrittenEntry writes the user-scope entry into a
// ~/.claude.json with other settings, and the real `claude mcp list`
// starts the server from it and connects.
func TestClaudeConnectsToWrittenEntry(t *testing.T) {
	claude := claudeCLI(t)
	bin := buildRuntime(t)
	env := realpeers.NewEnv(t)
	cfg := filepath.Join(env.Home(), ".claude.json")
	copyFixture(t, "json/claude-existing.json", cfg)
	if code, o, e := runSetupCLI(t, env, "", "setup", "claude", "--read-only", "--profile", "minimal", "--write", "--command", bin); code != 0 {
		t.Fatalf("exit %d: %s%s", code, o, e)
	}
	db := filepath.Join(env.Root(), "claude-started.db")
	addStoreEnv(t, cfg, "mcpServers", "agent-interop", "env", db)
	out, err := runClient(t, env, env.Home(), claude, "mcp", "list")
	if err != nil {
		t.Fatalf("claude mcp list: %v\n%s", err, out)
	}
	if line := lineWith(out, "agent-interop:"); !strings.Contains(line, "Connected") || !strings.Contains(line, bin) {
		t.Fatalf("claude does not list agent-interop as connected:\n%s", out)
	}
	if !strings.Contains(out, "docs:") {
		t.Fatalf("the other server is gone:\n%s", out)
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("the server Claude started did not get the entry's env: %v", err)
	}
	// User scope: `claude mcp get` from another directory still finds it.
	other := t.TempDir()
	if out, err := runClient(t, env, other, claude, "mcp", "get", "agent-interop"); err != nil || !strings.Contains(out, "User config") {
		t.Fatalf("claude mcp get from another directory: %v\n%s", err, out)
	}
}

func lineWith(out, s string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
