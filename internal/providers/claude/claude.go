// Package claude is the Claude Code provider adapter: Claude Code driven
// through an ACP adapter program over stdio, claude-agent-acp (the
// maintained one) or the older claude-code-acp, found on PATH or named by
// CLAUDE_ACP_COMMAND. The protocol work is internal/providers/acp's; this package
// finds the program, names it and its version, and reports the
// "Authentication required" case as such, with the fix.
package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/acp"
)

// EnvCommand names the ACP adapter command to run instead of searching PATH
// (a path or a command line; split on blanks).
const EnvCommand = "CLAUDE_ACP_COMMAND"

// Programs are searched on PATH in this order.
var Programs = []string{"claude-agent-acp", "claude-code-acp"}

// AdapterVersion is this adapter's version.
const AdapterVersion = "0.1.0"

// AuthFix is the remedy shown when Claude Code has no credentials.
const AuthFix = "set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) in the runtime's environment, or log in once with `claude /login`"

// PinnedVersion is the claude-agent-acp release the adapter is tested
// against (the newest one that installs on Node 20).
const PinnedVersion = "0.49.0"

// MissingFix is the remedy shown when no adapter program is found.
const MissingFix = "npm install -g @agentclientprotocol/claude-agent-acp@" + PinnedVersion + " (or set " + EnvCommand + "=/path/to/claude-agent-acp)"

// Config configures the adapter. Zero values use the process environment,
// exec.LookPath and the wall clock.
type Config struct {
	Host       providers.Host
	LookupEnv  func(string) (string, bool) // default os.LookupEnv
	LookPath   func(string) (string, error)
	Env        []string // the agent's environment; nil inherits ours
	Clock      quartz.Clock
	Logger     *slog.Logger
	FileReader acp.FileReader
	Trace      func(acp.Direction, []byte)
	DefaultCWD string
}

// Adapter is the Claude Code provider adapter.
type Adapter struct {
	*acp.Adapter
}

// New builds the adapter; the agent starts on first use.
func New(opts Config) *Adapter {
	lookup, look := opts.LookupEnv, opts.LookPath
	if lookup == nil {
		lookup = os.LookupEnv
	}
	if look == nil {
		look = exec.LookPath
	}
	env := opts.Env
	return &Adapter{acp.NewAdapter(acp.AdapterConfig{
		Provider:       providers.ClaudeCode,
		AdapterVersion: AdapterVersion,
		Protocol:       "ACP v1 (JSON-RPC over stdio)",
		Locate: func() (acp.Launch, error) {
			l, err := Locate(lookup, look)
			l.Env = env
			return l, err
		},
		MissingFix:   MissingFix,
		AuthFix:      AuthFix,
		VersionProbe: ProbeVersion,
		Limitations: []string{
			"Claude Code runs through an ACP adapter program; IS_SANDBOX=1 is needed when it runs as root",
			"no steering over ACP; the diff is built from the diff content of completed tool calls this runtime observed",
		},
		Host: opts.Host, Clock: opts.Clock, Logger: opts.Logger, FileReader: opts.FileReader,
		Trace: opts.Trace, DefaultCWD: opts.DefaultCWD,
	})}
}

// Locate finds the adapter program: CLAUDE_ACP_COMMAND, else
// claude-agent-acp, else claude-code-acp on PATH.
func Locate(lookupEnv func(string) (string, bool), look func(string) (string, error)) (acp.Launch, error) {
	if cmd, _ := lookupEnv(EnvCommand); strings.TrimSpace(cmd) != "" {
		cmd = strings.TrimSpace(cmd)
		argv := strings.Fields(cmd)
		path, err := look(argv[0])
		if err != nil {
			return acp.Launch{}, fmt.Errorf("%s=%q: %w", EnvCommand, cmd, err)
		}
		argv[0] = path
		return acp.Launch{Argv: argv, Program: path, Label: filepath.Base(path)}, nil
	}
	var errs []error
	for _, name := range Programs {
		path, err := look(name)
		if err == nil {
			return acp.Launch{Argv: []string{path}, Program: path, Label: name}, nil
		}
		errs = append(errs, err)
	}
	return acp.Launch{}, fmt.Errorf("neither %s found on PATH: %w", strings.Join(Programs, " nor "), errors.Join(errs...))
}

var semver = regexp.MustCompile(`\b\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?\b`)

// ProbeVersion finds the program's version when initialize's agentInfo has
// none: `--version` output first (stdin closed, 5 s), else the version in
// the package.json of the npm package the program belongs to.
func ProbeVersion(ctx context.Context, l acp.Launch) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, l.Program, "--version")
	cmd.Env = l.Env
	if out, err := cmd.Output(); err == nil {
		if v := semver.FindString(string(out)); v != "" {
			return v
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
