// Package adapters builds the runtime's provider adapters from one
// configuration: one per entry of the built-in agent catalog
// (spec/agents.yaml, in its order: Freebuff, OpenCode, Codex, then the ACP
// agents) and one per ACP agent of the user's agents file
// (INTEROP_AGENTS_FILE). serve, serve-http, desk (through internal/app),
// providers, sessions and doctor all get theirs here, so a new provider
// or a new setting is wired once.
//
// Building starts no process and touches no network: every adapter
// connects on first use. A bad entry of the agents file never stops the
// runtime: it becomes an adapter that reports itself unavailable with the
// file, line, field, rule and fix.
package adapters

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/acp"
	"github.com/agent-interop/runtime/internal/providers/codex"
	"github.com/agent-interop/runtime/internal/providers/freebuff"
	"github.com/agent-interop/runtime/internal/providers/opencode"
	"github.com/agent-interop/runtime/internal/security"
)

// EnvAgentsFile names the user's agents file.
const EnvAgentsFile = "INTEROP_AGENTS_FILE"

// Config is what every adapter is built from.
type Config struct {
	// LookupEnv reads the adapters' settings (default os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Host receives the outcomes of queued operations and out-of-band
	// events. nil: nothing is reported back (doctor sends nothing).
	Host providers.Host
	// Roots receives every Freebuff project as an approved root (optional).
	Roots *security.Roots
	// Logger receives diagnostics (default discarded).
	Logger *slog.Logger
	// ChildEnv is the environment of the provider programs and the agents
	// they run (nil: this process's). A team store passes one without its
	// credentials.
	ChildEnv func() []string
	// NoServe, when not empty, keeps OpenCode from starting `opencode
	// serve`; it is the reason reported instead (doctor checks a server
	// that runs, it does not leave one behind).
	NoServe string
	// FreebuffProcDir is the proc file system Freebuff's Desktop
	// discovery scans ("" = /proc, "-" = no scan).
	FreebuffProcDir string
}

// Set is the built adapters.
type Set struct {
	// Freebuff is the service behind the Freebuff tools; the Freebuff
	// adapter plugs its threads into the registry.
	Freebuff *freebuff.Service
	// All are the adapters, in the registry's order.
	All []providers.Adapter
	// AgentsFile is the user's agents file read ("" when none applies).
	AgentsFile string
	// Problems are the agents file's bad entries (each also listed as an
	// unavailable provider).
	Problems []providers.AgentProblem
}

// AgentsFilePath is the user's agents file: INTEROP_AGENTS_FILE, else
// ~/.agent-interop-runtime/agents.yaml ("" when there is no home).
func AgentsFilePath(lookupEnv func(string) (string, bool)) string {
	if p, ok := lookupEnv(EnvAgentsFile); ok && strings.TrimSpace(p) != "" {
		return strings.TrimSpace(p)
	}
	home, ok := lookupEnv("HOME")
	if !ok || home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		home = h
	}
	return filepath.Join(home, ".agent-interop-runtime", "agents.yaml")
}

// KnownIDs are the ids of every known agent, without building an adapter:
// the built-in catalog, then the user's agents file (an entry with a
// problem keeps its id when it has a usable one).
func KnownIDs(lookupEnv func(string) (string, bool)) []string {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	var out []string
	for _, id := range providers.Order() {
		out = append(out, string(id))
	}
	path := AgentsFilePath(lookupEnv)
	if path == "" {
		return out
	}
	users, problems := providers.LoadAgentsFile(path, append(providers.Order(), providers.AgentsFileProblemsID))
	for _, s := range users {
		out = append(out, string(s.ID))
	}
	for _, p := range problems {
		if p.ID != "" && !slices.Contains(out, string(p.ID)) {
			out = append(out, string(p.ID))
		}
	}
	return out
}

// New builds the adapters of the built-in catalog and of the user's
// agents file.
func New(cfg Config) Set {
	if cfg.LookupEnv == nil {
		cfg.LookupEnv = os.LookupEnv
	}
	var env []string // nil inherits this process's
	if cfg.ChildEnv != nil {
		env = cfg.ChildEnv()
	}
	fb := freebuff.New(freebuff.Config{LookupEnv: cfg.LookupEnv, Roots: cfg.Roots, Logger: cfg.Logger, Environ: cfg.ChildEnv,
		ProcDir: cfg.FreebuffProcDir})
	set := Set{Freebuff: fb}
	for _, s := range providers.BuiltinAgents() {
		switch s.Protocol {
		case providers.ProtocolFreebuff:
			set.All = append(set.All, freebuff.NewAdapter(fb, cfg.Host))
		case providers.ProtocolOpenCodeHTTP:
			oc := opencode.ConfigFromEnv(cfg.LookupEnv)
			oc.ServeEnv = env
			if cfg.NoServe != "" && !oc.DisableAutoStart {
				oc.NoStartReason = cfg.NoServe
			}
			set.All = append(set.All, opencode.New(oc, cfg.Host))
		case providers.ProtocolCodexAppServer:
			set.All = append(set.All, codex.New(codex.Config{Host: cfg.Host, LookupEnv: cfg.LookupEnv, Env: env}))
		case providers.ProtocolACP:
			set.All = append(set.All, acp.NewAgent(acp.AgentConfig{Spec: s, Host: cfg.Host, LookupEnv: cfg.LookupEnv, Env: env, Logger: cfg.Logger}))
		}
	}
	set.AgentsFile = AgentsFilePath(cfg.LookupEnv)
	if set.AgentsFile == "" {
		return set
	}
	users, problems := providers.LoadAgentsFile(set.AgentsFile, append(providers.Order(), providers.AgentsFileProblemsID))
	set.Problems = problems
	for _, s := range users {
		set.All = append(set.All, acp.NewAgent(acp.AgentConfig{Spec: s, Host: cfg.Host, LookupEnv: cfg.LookupEnv, Env: env, Logger: cfg.Logger}))
	}
	// A bad entry with a usable id is listed under it; the others under
	// one "agents-file" entry.
	var orphans []error
	for _, p := range problems {
		if p.ID != "" {
			set.All = append(set.All, Unavailable(p.ID, p))
			continue
		}
		orphans = append(orphans, p)
	}
	if len(orphans) > 0 {
		set.All = append(set.All, Unavailable(providers.AgentsFileProblemsID, orphans...))
	}
	return set
}

// Unavailable is the adapter of an agent that cannot be used: every call
// fails with why, and its capabilities say so, with the fix.
func Unavailable(id providers.ID, why ...error) providers.Adapter {
	msgs := make([]string, len(why))
	for i, w := range why {
		msgs[i] = w.Error()
	}
	err := errors.New(strings.Join(msgs, "; "))
	var fixes []string
	for _, w := range why {
		var p providers.AgentProblem
		if errors.As(w, &p) && p.Fix != "" {
			fixes = append(fixes, p.Fix)
		}
	}
	return acp.NewAdapter(acp.AdapterConfig{
		Provider:       id,
		AdapterVersion: acp.AgentVersion,
		Locate: func() (acp.Launch, error) {
			return acp.Launch{}, fmt.Errorf("agents file entry is not usable: %w", err)
		},
		MissingFix:  strings.Join(fixes, "; "),
		Limitations: []string{"declared in the agents file, not usable: " + err.Error()},
	})
}
