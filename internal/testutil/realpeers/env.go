package realpeers

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Env is an isolated process environment rooted in a temporary folder.
// Build one with NewEnv (or a provider-specific helper) and pass Environ()
// to exec.Cmd.Env.
type Env struct {
	root string
	vars map[string]string
}

// passThrough are the only variables copied from the test's environment.
var passThrough = [...]string{"PATH", "LANG", "LC_ALL", "TZ", "TMPDIR"}

// NewEnv builds an environment with its own HOME and XDG folders under a
// fresh temporary directory. The npm registry is pointed at a closed
// loopback port so a program that tries to install something fails fast
// instead of reaching the network.
func NewEnv(tb testing.TB) *Env {
	tb.Helper()
	e, err := NewEnvAt(tb.TempDir())
	if err != nil {
		tb.Fatalf("realpeers: %v", err)
	}
	return e
}

// NewEnvAt is NewEnv rooted in an existing directory.
func NewEnvAt(root string) (*Env, error) {
	e := &Env{root: root, vars: map[string]string{}}
	for _, k := range passThrough {
		if v, ok := os.LookupEnv(k); ok {
			e.vars[k] = v
		}
	}
	home := filepath.Join(root, "home")
	e.vars["HOME"] = home
	e.vars["XDG_CONFIG_HOME"] = filepath.Join(home, ".config")
	e.vars["XDG_DATA_HOME"] = filepath.Join(home, ".local", "share")
	e.vars["XDG_CACHE_HOME"] = filepath.Join(home, ".cache")
	e.vars["XDG_STATE_HOME"] = filepath.Join(home, ".local", "state")
	e.vars["NPM_CONFIG_REGISTRY"] = "http://127.0.0.1:9/"
	e.vars["NO_COLOR"] = "1"
	e.vars["TERM"] = "dumb"
	if _, ok := e.vars["LANG"]; !ok {
		e.vars["LANG"] = "C.UTF-8"
	}
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"} {
		if err := os.MkdirAll(e.vars[k], 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", k, err)
		}
	}
	return e, nil
}

// Root is the temporary folder the environment lives in.
func (e *Env) Root() string { return e.root }

// Home is the environment's HOME.
func (e *Env) Home() string { return e.vars["HOME"] }

// Set sets a variable and returns e.
func (e *Env) Set(key, value string) *Env {
	e.vars[key] = value
	return e
}

// SetJSON sets a variable to the JSON encoding of v.
func (e *Env) SetJSON(key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", key, err)
	}
	e.vars[key] = string(b)
	return nil
}

// Unset removes a variable.
func (e *Env) Unset(key string) *Env {
	delete(e.vars, key)
	return e
}

// Get returns a variable's value ("" when unset).
func (e *Env) Get(key string) string { return e.vars[key] }

// Environ returns the variables as sorted KEY=VALUE pairs.
func (e *Env) Environ() []string {
	out := make([]string, 0, len(e.vars))
	for k, v := range e.vars {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Clone returns an independent copy sharing the same root.
func (e *Env) Clone() *Env {
	c := &Env{root: e.root, vars: make(map[string]string, len(e.vars))}
	for k, v := range e.vars {
		c.vars[k] = v
	}
	return c
}

// FakeProvider is the OpenCode provider id the helpers configure, and
// FakeModel its model: OpenCode sessions use "fake/echo".
const (
	FakeProvider = "fake"
	FakeModel    = "echo"
)

// OpenCodeConfig is an opencode.json document that enables only a provider
// "fake" (openai-compatible) whose baseURL is the fake model server's
// OpenAI base URL (fakemodel.Server.BaseURL) and makes fake/echo the model.
// Callers may add keys (e.g. "permission") before encoding it.
func OpenCodeConfig(baseURL string) map[string]any {
	return map[string]any{
		"$schema":           "https://opencode.ai/config.json",
		"enabled_providers": []string{FakeProvider},
		"model":             FakeProvider + "/" + FakeModel,
		"small_model":       FakeProvider + "/" + FakeModel,
		"autoupdate":        false,
		"share":             "disabled",
		"provider": map[string]any{FakeProvider: map[string]any{
			"npm":  "@ai-sdk/openai-compatible",
			"name": "Fake",
			"options": map[string]any{
				"baseURL": baseURL,
				"apiKey":  "test",
			},
			"models": map[string]any{FakeModel: map[string]any{"name": "Echo"}},
		}},
	}
}

// OpenCodeEnv returns an isolated environment for opencode: fresh HOME/XDG,
// the OPENCODE_DISABLE_* switches and OPENCODE_CONFIG_CONTENT holding config
// (build it with OpenCodeConfig).
func OpenCodeEnv(tb testing.TB, config map[string]any) *Env {
	tb.Helper()
	e := NewEnv(tb)
	if err := SetOpenCode(e, config); err != nil {
		tb.Fatalf("realpeers: %v", err)
	}
	return e
}

// SetOpenCode adds the OpenCode variables to e.
func SetOpenCode(e *Env, config map[string]any) error {
	for _, k := range []string{
		"OPENCODE_DISABLE_AUTOUPDATE", "OPENCODE_DISABLE_MODELS_FETCH",
		"OPENCODE_DISABLE_LSP_DOWNLOAD", "OPENCODE_DISABLE_SHARE",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS",
	} {
		e.Set(k, "1")
	}
	return e.SetJSON("OPENCODE_CONFIG_CONTENT", config)
}

// CodexConfig is a Codex config.toml using the fake Responses endpoint at
// baseURL (fakemodel.Server.BaseURL).
func CodexConfig(baseURL string) string {
	return strings.Join([]string{
		`model = "echo"`,
		`model_provider = "fake"`,
		`approval_policy = "on-request"`,
		`sandbox_mode = "workspace-write"`,
		`check_for_update_on_startup = false`,
		``,
		`[analytics]`,
		`enabled = false`,
		``,
		`[model_providers.fake]`,
		`name = "Fake"`,
		fmt.Sprintf(`base_url = %q`, baseURL),
		`wire_api = "responses"`,
		`requires_openai_auth = false`,
		`request_max_retries = 0`,
		`stream_max_retries = 0`,
		``,
	}, "\n")
}

// CodexModelCatalog is a Codex model catalog (the file config key
// model_catalog_json names) describing the fake model "echo". Without it
// Codex runs echo on fallback metadata and offers no apply_patch tool, so
// a model can edit files only through the shell. The entry says what
// Codex's bundled catalog says of its GPT models on that point
// (apply_patch_tool_type "freeform"): Codex then offers its apply_patch
// tool, and a file edit is a fileChange item with its approval, as with a
// real model. The other fields are the ones Codex 0.171 requires.
const CodexModelCatalog = `{"models":[{"slug":"echo","display_name":"Echo",` +
	`"base_instructions":"You are Codex, a coding agent, answered by a fake model in a test.",` +
	`"apply_patch_tool_type":"freeform","shell_type":"shell_command",` +
	`"supported_reasoning_levels":[],"visibility":"list","supported_in_api":true,"priority":1,` +
	`"support_verbosity":false,"truncation_policy":{"mode":"tokens","limit":10000},` +
	`"experimental_supported_tools":[]}]}`

// WriteCodexHome writes into codexHome a config.toml using the fake
// Responses endpoint at baseURL (CodexConfig) and the model catalog
// CodexModelCatalog it points at.
func WriteCodexHome(codexHome, baseURL string) error {
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		return fmt.Errorf("creating CODEX_HOME: %w", err)
	}
	catalog := filepath.Join(codexHome, "fake-models.json")
	if err := os.WriteFile(catalog, []byte(CodexModelCatalog), 0o600); err != nil {
		return fmt.Errorf("writing the codex model catalog: %w", err)
	}
	config := fmt.Sprintf("model_catalog_json = %q\n", catalog) + CodexConfig(baseURL)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		return fmt.Errorf("writing the codex config: %w", err)
	}
	return nil
}

// CodexEnv returns an isolated environment for `codex app-server` (run it
// with --disable plugins): CODEX_HOME inside HOME, written by
// WriteCodexHome.
func CodexEnv(tb testing.TB, baseURL string) *Env {
	tb.Helper()
	e := NewEnv(tb)
	codexHome := filepath.Join(e.Home(), ".codex")
	if err := WriteCodexHome(codexHome, baseURL); err != nil {
		tb.Fatalf("realpeers: %v", err)
	}
	e.Set("CODEX_HOME", codexHome)
	return e
}

// ClaudeEnv returns an isolated environment for claude-agent-acp: it talks
// to the fake Anthropic endpoint at rootURL (fakemodel.Server.URL), runs as
// root (IS_SANDBOX=1) and sends no telemetry. Pass rootURL "" to leave the
// ANTHROPIC_* variables unset (the "no credentials" case).
func ClaudeEnv(tb testing.TB, rootURL string) *Env {
	tb.Helper()
	e := NewEnv(tb)
	e.Set("IS_SANDBOX", "1").
		Set("DISABLE_AUTOUPDATER", "1").
		Set("DISABLE_TELEMETRY", "1").
		Set("DISABLE_ERROR_REPORTING", "1").
		Set("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1").
		// Claude Code would retry a failing model call 10 times by itself;
		// tests count what reaches the model.
		Set("CLAUDE_CODE_MAX_RETRIES", "0")
	if rootURL != "" {
		e.Set("ANTHROPIC_BASE_URL", rootURL).Set("ANTHROPIC_API_KEY", "sk-fake")
	}
	return e
}

// QwenEnv returns an isolated environment for Qwen Code (`qwen --acp`): its
// OpenAI-compatible auth pointed at the fake model's OpenAI base URL
// (fakemodel.Server.BaseURL), model "echo", no telemetry or update check.
func QwenEnv(tb testing.TB, baseURL string) *Env {
	tb.Helper()
	e := NewEnv(tb)
	if err := SetQwen(e, baseURL); err != nil {
		tb.Fatalf("realpeers: %v", err)
	}
	return e
}

// SetQwen sets up Qwen Code in e (as QwenEnv): for an environment shared
// with other programs, such as the runtime's own.
func SetQwen(e *Env, baseURL string) error {
	e.Set("OPENAI_BASE_URL", baseURL).Set("OPENAI_API_KEY", "sk-fake").Set("OPENAI_MODEL", FakeModel)
	dir := filepath.Join(e.Home(), ".qwen")
	settings := `{"security":{"auth":{"selectedType":"openai"}},"model":{"name":"echo"},` +
		`"privacy":{"usageStatisticsEnabled":false},"general":{"disableAutoUpdate":true,"disableUpdateNag":true},` +
		`"telemetry":{"enabled":false}}`
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o600)
}

// GeminiEnv returns an isolated environment for Gemini CLI (`gemini
// --acp`): the Gemini API at the fake model's root URL
// (fakemodel.Server.URL; GOOGLE_GEMINI_BASE_URL makes it use the "gateway"
// auth type) with a fake key, the model "echo", no telemetry, update
// check or relaunch, and the environment's root folder (the workspaces
// under it) trusted: an untrusted folder runs with its project settings
// and hooks off.
func GeminiEnv(tb testing.TB, rootURL string) *Env {
	tb.Helper()
	e := NewEnv(tb)
	e.Set("GOOGLE_GEMINI_BASE_URL", rootURL).Set("GEMINI_API_KEY", "fake-key").Set("GEMINI_MODEL", FakeModel).
		Set("GEMINI_CLI_NO_RELAUNCH", "true").Set("GEMINI_TELEMETRY_ENABLED", "false")
	dir := filepath.Join(e.Home(), ".gemini")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatalf("realpeers: %v", err)
	}
	settings := `{"security":{"auth":{"selectedType":"gateway"},"folderTrust":{"enabled":false}},` +
		`"general":{"disableAutoUpdate":true,"disableUpdateNag":true},` +
		`"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},"model":{"name":"echo"}}`
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o600); err != nil {
		tb.Fatalf("realpeers: %v", err)
	}
	trusted := fmt.Sprintf(`{%q:"TRUST_FOLDER"}`, e.Root())
	if err := os.WriteFile(filepath.Join(dir, "trustedFolders.json"), []byte(trusted), 0o600); err != nil {
		tb.Fatalf("realpeers: %v", err)
	}
	return e
}
