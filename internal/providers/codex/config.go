package codex

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/providers"
)

// EnvCommand overrides the app-server command line. A single word is the
// program (run as "<program> app-server"); several words are the whole
// command line.
const EnvCommand = "CODEX_APP_SERVER_COMMAND"

// EnvApprovalPolicy and EnvSandbox set the "approvalPolicy" and "sandbox"
// parameters of every thread/start and thread/resume (for example
// CODEX_APPROVAL_POLICY=untrusted, CODEX_SANDBOX_MODE=workspace-write), so
// an operator can make codex ask before it runs commands without editing
// codex's config.toml, which no longer accepts approval_policy =
// "untrusted". A key already in Config.ThreadParams wins; an unset or blank
// variable adds nothing. The values are passed to codex as given; codex
// refuses one it does not know.
const (
	EnvApprovalPolicy = "CODEX_APPROVAL_POLICY"
	EnvSandbox        = "CODEX_SANDBOX_MODE"
)

// AdapterVersion is reported in the capability record.
const AdapterVersion = "1.0.0"

// Config configures an Adapter. The zero value works: it finds codex on
// PATH and uses the real clock.
type Config struct {
	// Program is the codex program (or a full command line, see
	// [EnvCommand]). Empty: $CODEX_APP_SERVER_COMMAND, then "codex" on PATH.
	Program string
	// ExtraArgs are appended to "app-server" (e.g. "--disable", "plugins").
	ExtraArgs []string
	// ThreadParams are extra parameters of every thread/start and
	// thread/resume, e.g. {"approvalPolicy": "untrusted", "sandbox":
	// "workspace-write"} (codex's own config.toml no longer accepts
	// approval_policy = "untrusted"). [EnvApprovalPolicy] and [EnvSandbox]
	// fill in the keys it does not set.
	ThreadParams map[string]any
	// Env is the environment of the process (nil: this process's).
	Env []string
	// Dir is the working directory of the process ("" = current).
	Dir string
	// LookupEnv reads configuration variables (default os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Host receives outcomes of queued operations and out-of-band events.
	Host providers.Host
	// Clock is the time source (default the wall clock).
	Clock quartz.Clock
	// ClientVersion is sent as clientInfo.version.
	ClientVersion string
	// CallTimeout bounds one request (default 15 s). A request that timed
	// out after it was written is reported as uncertain, never retried.
	CallTimeout time.Duration
	// StartTimeout bounds starting the process and the initialize handshake
	// (default 30 s).
	StartTimeout time.Duration
	// RetryAfter throttles new start attempts after a failed one (default 1.5 s).
	RetryAfter time.Duration
	// WriterWait bounds how long thread/resume is retried while another
	// app-server (one a dead runtime left behind) still holds the thread
	// (default 30 s).
	WriterWait time.Duration
	// InterruptWait is how long Cancel waits for a just-started turn to be
	// reported as started before interrupting it (default 3 s).
	InterruptWait time.Duration
	// Dial opens the link (default [StartProcess]).
	Dial Dialer
	// Logf receives diagnostics (default: discarded).
	Logf func(format string, args ...any)
}

func (c *Config) withDefaults() Config {
	cfg := *c
	if cfg.LookupEnv == nil {
		cfg.LookupEnv = os.LookupEnv
	}
	if cfg.Clock == nil {
		cfg.Clock = quartz.NewReal()
	}
	cfg.ThreadParams = threadParamsFromEnv(cfg.ThreadParams, cfg.LookupEnv)
	if cfg.ClientVersion == "" {
		cfg.ClientVersion = AdapterVersion
	}
	if cfg.WriterWait <= 0 {
		cfg.WriterWait = 30 * time.Second
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 15 * time.Second
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 30 * time.Second
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = 1500 * time.Millisecond
	}
	if cfg.InterruptWait <= 0 {
		cfg.InterruptWait = 3 * time.Second
	}
	if cfg.Dial == nil {
		cfg.Dial = StartProcess
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	return cfg
}

// threadParamsFromEnv returns params plus the thread parameters named by
// [EnvApprovalPolicy] and [EnvSandbox] that params does not set. params
// itself is never modified.
func threadParamsFromEnv(params map[string]any, lookup func(string) (string, bool)) map[string]any {
	out := params
	for _, kv := range [...]struct{ env, key string }{{EnvApprovalPolicy, "approvalPolicy"}, {EnvSandbox, "sandbox"}} {
		if _, set := params[kv.key]; set {
			continue
		}
		v, ok := lookup(kv.env)
		if v = strings.TrimSpace(v); !ok || v == "" {
			continue
		}
		if len(out) == len(params) { // copy before the first addition
			out = make(map[string]any, len(params)+2)
			for k, x := range params {
				out[k] = x
			}
		}
		out[kv.key] = v
	}
	return out
}

// errProgramMissing says codex could not be found; its text is the reason
// reported in the capability record.
type errProgramMissing struct{ detail string }

func (e *errProgramMissing) Error() string { return e.detail }

// PinnedVersion is the codex release the adapter is tested against.
const PinnedVersion = "0.171.0"

const installFix = "npm install -g @openai/codex@" + PinnedVersion + " (or set " + EnvCommand + "=/path/to/codex)"

// command resolves the app-server command line.
func (c *Config) command() ([]string, error) {
	raw := strings.TrimSpace(c.Program)
	source := "Config.Program"
	if raw == "" {
		if v, ok := c.LookupEnv(EnvCommand); ok && strings.TrimSpace(v) != "" {
			raw, source = strings.TrimSpace(v), EnvCommand
		}
	}
	if raw == "" {
		raw, source = "codex", "PATH"
	}
	words := strings.Fields(raw)
	prog, err := c.lookPath(words[0])
	if err != nil {
		return nil, &errProgramMissing{detail: fmt.Sprintf("codex program %q not found (from %s): %v", words[0], source, err)}
	}
	argv := []string{prog}
	if len(words) > 1 {
		argv = append(argv, words[1:]...)
	} else {
		argv = append(argv, "app-server")
	}
	return append(argv, c.ExtraArgs...), nil
}

func (c *Config) lookPath(name string) (string, error) {
	if strings.ContainsRune(name, filepath.Separator) {
		st, err := os.Stat(name)
		if err != nil {
			return "", err
		}
		if st.IsDir() || st.Mode()&0o111 == 0 {
			return "", errors.New("not an executable file")
		}
		return filepath.Abs(name)
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	// codex's own installer puts it in ~/.local/bin, often not on PATH.
	if home, ok := c.LookupEnv("HOME"); ok && home != "" {
		p := filepath.Join(home, ".local", "bin", name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New("not on PATH or in ~/.local/bin")
}

// endpoint names the app-server this adapter talks to. It is stable across
// process restarts (threads persist in CODEX_HOME, so a restarted server
// serves the same sessions).
func (c *Config) endpoint(argv []string) string {
	home := ""
	for _, kv := range c.Env {
		if v, ok := strings.CutPrefix(kv, "CODEX_HOME="); ok {
			home = v
		}
	}
	if home == "" && c.Env == nil {
		if v, ok := c.LookupEnv("CODEX_HOME"); ok {
			home = v
		}
	}
	ep := "stdio:" + strings.Join(argv, " ")
	if home != "" {
		ep += " (CODEX_HOME=" + home + ")"
	}
	return ep
}
