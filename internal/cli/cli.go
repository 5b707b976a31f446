// Package cli is the interop-runtime command line: `serve` (stdio MCP),
// `version`, and the subcommands a person uses at a terminal. Do is the
// whole program, so tests drive it without a process.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/handlers"
	"github.com/agent-interop/runtime/internal/app"
	"github.com/agent-interop/runtime/internal/server"
	stdiotransport "github.com/agent-interop/runtime/internal/stdio"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/version"
	"github.com/agent-interop/runtime/internal/workflow"
)

// Env looks up an environment variable (os.LookupEnv).
type Env func(string) (string, bool)

func (e Env) get(key string) string {
	v, _ := e(key)
	return v
}

// IO is the process's standard streams.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

const usage = `usage: interop-runtime [command]

commands:
  serve [--profile P] [--read-only]   serve MCP over stdio (default)
  work list|show <id>|graph [--json]  inspect the coordination store
  doctor [--json] [--timeout D]       check providers (program, handshake, capabilities) and the store
  providers [--json]                  list the providers' capabilities, with reasons and fixes
  sessions [--provider P] [--json]    list the provider sessions (list_agent_sessions)
  setup claude|opencode|codex|cursor [--profile P] [--read-only] [--http] [--write]   print or write a client's MCP entry
  install [--write]                   the Codex entry (= setup codex)
  cursor-setup [--project] [--read-only] [--write]   the Cursor entry (= setup cursor)
  version                             print the version

serve, doctor, providers and sessions take --db FILE|postgres://URL (as INTEROP_DB;
a URL given there must not carry a password: docs/team.md)
`

// Do runs the command line and returns the exit code.
func Do(ctx context.Context, args []string, env Env, stdio IO) int {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, env, stdio)
	case "work":
		return work(ctx, args, env, stdio)
	case "doctor":
		return doctor(ctx, args, env, stdio)
	case "providers":
		return providersCmd(ctx, args, env, stdio)
	case "sessions":
		return sessions(ctx, args, env, stdio)
	case "setup":
		return setupCmd(args, env, stdio)
	case "install":
		return installCmd(args, env, stdio)
	case "cursor-setup":
		return cursorSetupCmd(args, env, stdio)
	case "version", "--version":
		fmt.Fprintln(stdio.Stdout, version.Version)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdio.Stdout, usage)
		return 0
	}
	fmt.Fprintf(stdio.Stderr, "interop-runtime: unknown command %q\n%s", cmd, usage)
	return 2
}

// ResolveProfile picks the profile from the flag, else INTEROP_TOOLS_PROFILE,
// else the default, the way 0.3.x parsed it (trimmed, case-insensitive).
func ResolveProfile(flagValue string, env Env) (catalogs.Profile, error) {
	v := flagValue
	if v == "" {
		v = env.get("INTEROP_TOOLS_PROFILE")
	}
	name := strings.ToLower(strings.TrimSpace(v))
	if name == "" {
		name = catalogs.DefaultProfile
	}
	p, ok := catalogs.LookupProfile(name)
	if !ok {
		var names []string
		for _, p := range catalogs.Profiles() {
			names = append(names, p.Name)
		}
		return catalogs.Profile{}, fmt.Errorf("Unknown toolset profile '%s'. Supported profiles: %s. Set INTEROP_TOOLS_PROFILE or pass --profile.", v, strings.Join(names, ", "))
	}
	return p, nil
}

func serve(ctx context.Context, args []string, env Env, stdio IO) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stdio.Stderr)
	profileFlag := fs.String("profile", "", "tool profile: minimal, core, freebuff, legacy or full")
	readOnlyFlag := fs.Bool("read-only", false, "serve read tools only (also INTEROP_READ_ONLY=1)")
	db := dbFlag(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	env, err := withDB(env, *db)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "interop-runtime serve: %v\n", err)
		return 2
	}
	profile, err := ResolveProfile(*profileFlag, env)
	if err != nil {
		fmt.Fprintln(stdio.Stderr, err)
		return 2
	}
	readOnly := *readOnlyFlag || env.get("INTEROP_READ_ONLY") == "1"
	logger := slog.New(slog.NewTextHandler(stdio.Stderr, &slog.HandlerOptions{Level: logLevel(env)}))

	a, err := app.Open(ctx, app.Config{Env: app.Env(env), Logger: logger, Runtime: handlers.RuntimeInfo{
		Version:            version.Version,
		Profile:            profile.Name,
		ProfileDescription: profile.Description,
		ReadOnly:           readOnly,
		Tools:              len(profile.Entries(readOnly)),
	}})
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "interop-runtime: %v\n", err)
		return 1
	}
	defer a.Close()
	srv := server.New(server.Options{
		Profile:         profile,
		ReadOnly:        readOnly,
		Version:         version.Version,
		Handlers:        a.Handlers,
		Logger:          logger,
		AfterInitialize: a.AfterInitialize,
	})
	if err := srv.Run(ctx, stdiotransport.Transport(stdio.Stdin, stdio.Stdout)); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		logger.Error("serve ended", "err", err)
		return 1
	}
	return 0
}

// dbFlag adds --db, which overrides INTEROP_DB.
func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", "", "the store: a SQLite file, or a postgres:// URL of a team store (overrides "+store.EnvDB+
		"; no password here, it would show in the process list)")
}

// withDB returns env with INTEROP_DB set to db (when given). A PostgreSQL
// URL carrying a password is refused: command lines are visible to every
// user of the machine.
func withDB(env Env, db string) (Env, error) {
	if db == "" {
		return env, nil
	}
	if store.IsPostgres(db) && store.HasPassword(db) {
		return nil, fmt.Errorf("--db %s carries a password, which would show in the process list; "+
			"put the URL in %s, or keep the password in PGPASSFILE (~/.pgpass) or PGPASSWORD", store.RedactDSN(db), store.EnvDB)
	}
	return func(key string) (string, bool) {
		if key == store.EnvDB {
			return db, true
		}
		return env(key)
	}, nil
}

func logLevel(env Env) slog.Level {
	switch strings.ToLower(env.get("INTEROP_LOG_LEVEL")) {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "info":
		return slog.LevelInfo
	case "error":
		return slog.LevelError
	}
	return slog.LevelWarn
}

func work(ctx context.Context, args []string, env Env, stdio IO) int {
	a, err := app.Open(ctx, app.Config{Env: app.Env(env)})
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "interop-runtime: %v\n", err)
		return 1
	}
	defer a.Close()
	return workflow.RunWorkCLI(ctx, a.Workflow, args, stdio.Stdout, stdio.Stderr)
}
