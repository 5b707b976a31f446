// Package adapters builds the runtime's five provider adapters from one
// configuration, in the registry's order: Freebuff, OpenCode, Codex,
// Claude Code, Cursor. serve, serve-http, desk (through internal/app),
// providers, sessions and doctor all get theirs here, so a new provider
// or a new setting is wired once.
//
// Building starts no process and touches no network: every adapter
// connects on first use.
package adapters

import (
	"log/slog"
	"os"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/claude"
	"github.com/agent-interop/runtime/internal/providers/codex"
	"github.com/agent-interop/runtime/internal/providers/cursor"
	"github.com/agent-interop/runtime/internal/providers/freebuff"
	"github.com/agent-interop/runtime/internal/providers/opencode"
	"github.com/agent-interop/runtime/internal/security"
)

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
}

// New builds the five adapters.
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
	oc := opencode.ConfigFromEnv(cfg.LookupEnv)
	oc.ServeEnv = env
	if cfg.NoServe != "" && !oc.DisableAutoStart {
		oc.NoStartReason = cfg.NoServe
	}
	return Set{Freebuff: fb, All: []providers.Adapter{
		freebuff.NewAdapter(fb, cfg.Host),
		opencode.New(oc, cfg.Host),
		codex.New(codex.Config{Host: cfg.Host, LookupEnv: cfg.LookupEnv, Env: env}),
		claude.New(claude.Config{Host: cfg.Host, LookupEnv: cfg.LookupEnv, Env: env}),
		cursor.New(cursor.Config{Host: cfg.Host, LookupEnv: cfg.LookupEnv, Env: env}),
	}}
}
