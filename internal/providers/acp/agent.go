package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/lazy"
	"github.com/agent-interop/runtime/internal/providers"
)

// AgentVersion is the version this client reports for every ACP agent entry.
const AgentVersion = "0.1.0"

// AgentConfig builds the adapter of one ACP agent entry (built-in or a
// user's). Zero values use the process environment, exec.LookPath and the
// wall clock.
type AgentConfig struct {
	Spec       providers.AgentSpec
	Host       providers.Host
	LookupEnv  func(string) (string, bool) // default os.LookupEnv
	LookPath   func(string) (string, error)
	Env        []string // the agent's environment before the entry's env; nil inherits ours
	Clock      quartz.Clock
	Logger     *slog.Logger
	FileReader FileReader
	Trace      func(Direction, []byte)
	DefaultCWD string
	// HandshakeTimeout bounds initialize (default DefaultHandshakeTimeout).
	HandshakeTimeout time.Duration
	// ParameterizedModelPicker asks a Cursor entry for its per-model
	// options (clientCapabilities._meta.parameterizedModelPicker).
	ParameterizedModelPicker bool
}

// NewAgent builds the adapter of an ACP agent entry: its program located
// from the entry's command, its environment extended with the entry's env,
// its quirks applied. Nothing starts until it is used.
func NewAgent(cfg AgentConfig) *Adapter {
	s := cfg.Spec
	lookup, look := cfg.LookupEnv, cfg.LookPath
	if lookup == nil {
		lookup = os.LookupEnv
	}
	if look == nil {
		look = exec.LookPath
	}
	env := agentEnv(cfg.Env, s.Env)
	var ext ExtensionFunc
	if s.HasQuirk(providers.QuirkCursorExtensions) {
		ext = CursorExtension
	}
	var meta map[string]any
	if cfg.ParameterizedModelPicker {
		meta = map[string]any{"parameterizedModelPicker": true}
	}
	var startMode func(l Launch, cwd string) string
	if s.HasQuirk(providers.QuirkClaudeDefaultMode) {
		startMode = func(l Launch, cwd string) string {
			cs := ClaudeSettingsFor(l.Env)
			if len(l.Argv) > 1 {
				cs.Flag, cs.FlagDir = ClaudeSettingsFlag(l.Argv[1:]), l.Dir
			}
			return cs.StartMode(cwd)
		}
	}
	limits := append([]string(nil), s.Notes...)
	limits = append(limits, "no steering over ACP; the diff is built from the diff content of completed tool calls this runtime observed")
	if s.Source != "" && s.Source != "spec/agents.yaml" {
		limits = append(limits, fmt.Sprintf("declared in %s:%d", s.Source, s.Line))
	}
	return NewAdapter(AdapterConfig{
		Provider:       s.ID,
		AdapterVersion: AgentVersion,
		Protocol:       "ACP v1 (JSON-RPC over stdio)",
		Locate: func() (Launch, error) {
			l, err := LocateAgent(s, lookup, look)
			l.Env = env
			return l, err
		},
		MissingFix:   s.InstallHint,
		AuthMethod:   s.AuthMethod,
		AuthFix:      s.AuthHow,
		VersionProbe: func(ctx context.Context, l Launch) string { return ProbeVersion(ctx, l, s.VersionArgs) },
		VersionCheck: s.VersionWarning,
		ClientMeta:   meta,
		Extension:    ext,
		Limitations:  limits,
		NoFileReads:  s.HasQuirk(providers.QuirkNoFileReads),
		StartMode:    startMode,
		Host:         cfg.Host, Clock: cfg.Clock, Logger: cfg.Logger, FileReader: cfg.FileReader,
		Trace: cfg.Trace, DefaultCWD: cfg.DefaultCWD, HandshakeTimeout: cfg.HandshakeTimeout,
	})
}

// agentEnv is base (nil: this process's environment) with extra set.
func agentEnv(base []string, extra map[string]string) []string {
	if len(extra) == 0 {
		return base
	}
	if base == nil {
		base = os.Environ()
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, over := extra[k]; !over {
			out = append(out, kv)
		}
	}
	for k, v := range extra {
		out = append(out, k+"="+v)
	}
	return out
}

// LocateAgent finds an entry's program: the command line in CommandEnv
// when set (it replaces the command's first word), else the first word on
// PATH (or as a path), else each of Programs; the rest of the command is
// kept.
func LocateAgent(s providers.AgentSpec, lookupEnv func(string) (string, bool), look func(string) (string, error)) (Launch, error) {
	if len(s.Command) == 0 {
		return Launch{}, fmt.Errorf("agent %s has no command", s.ID)
	}
	rest := s.Command[1:]
	// The label is shown in errors and endpoints: redacted and bounded.
	label := func(name string) string {
		return sanitize(strings.Join(append([]string{filepath.Base(name)}, rest...), " "))
	}
	if s.CommandEnv != "" {
		if cmd, _ := lookupEnv(s.CommandEnv); strings.TrimSpace(cmd) != "" {
			cmd = strings.TrimSpace(cmd)
			argv := strings.Fields(cmd)
			path, err := look(argv[0])
			if err != nil {
				return Launch{}, fmt.Errorf("%s=%q: %w", s.CommandEnv, sanitize(cmd), err)
			}
			argv[0] = path
			return Launch{Argv: append(argv, rest...), Program: path, Label: label(path)}, nil
		}
	}
	names := append([]string{s.Command[0]}, s.Programs...)
	var errs []error
	for _, name := range names {
		path, err := look(name)
		if err == nil {
			return Launch{Argv: append([]string{path}, rest...), Program: path, Label: label(name)}, nil
		}
		errs = append(errs, err)
	}
	return Launch{}, fmt.Errorf("%s: %s not found: %w", s.Name, strings.Join(names, " nor "), errors.Join(errs...))
}

var semver = lazy.Regexp{Expr: `\b\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?\b`}

// ProbeVersion finds the program's version when initialize's agentInfo has
// none: the output of the program run with args (when given; stdin
// closed, 5 s), else the version in the package.json of the npm package
// the program belongs to.
func ProbeVersion(ctx context.Context, l Launch, args []string) string {
	if len(args) > 0 {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, l.Program, args...)
		cmd.Env = l.Env
		if out, err := cmd.Output(); err == nil {
			if v := semver.Get().FindString(string(out)); v != "" {
				return v
			}
		}
	}
	return packageVersion(l.Program)
}

// packageVersion walks up from the program's resolved path to the nearest
// package.json and returns its version.
func packageVersion(program string) string {
	real, err := filepath.EvalSymlinks(program)
	if err != nil {
		return ""
	}
	for dir := filepath.Dir(real); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		b, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err != nil {
			continue
		}
		var pkg struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(b, &pkg) == nil {
			return pkg.Version
		}
		return ""
	}
	return ""
}
