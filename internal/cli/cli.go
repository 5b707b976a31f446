// Package cli is the interop-runtime command line: `serve` (stdio MCP),
// `version`, and the subcommands a person uses at a terminal. Do is the
// whole program, so tests drive it without a process.
package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"syscall"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/handlers"
	"github.com/agent-interop/runtime/internal/app"
	_ "github.com/agent-interop/runtime/internal/growstack/atinit" // the main goroutine's stack grows before the other initializers run
	"github.com/agent-interop/runtime/internal/interrupt"
	"github.com/agent-interop/runtime/internal/server"
	stdiotransport "github.com/agent-interop/runtime/internal/stdio"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/version"
	"github.com/agent-interop/runtime/internal/workcli"
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

// command is one entry of the command table: its name, a synopsis of its
// arguments, one line of help, and the function that runs it.
type command struct {
	name, args, help string
	run              func(ctx context.Context, args []string, env Env, stdio IO) int
	// waitsForSignals: the command waits for its SIGINT and SIGTERM
	// handlers itself (interrupt.Wait) before it answers anyone; Do waits
	// for them before running any other command.
	waitsForSignals bool
}

// commands is the command table, in the order help lists it. Adding a
// command is one line here.
func commands() []command {
	return []command{
		{"serve", "[--profile P] [--read-only] [--http [--host H] [--port N] ...]", "serve MCP over stdio (the default; waits silently for a client on stdin), or over Streamable HTTP with --http", serve, true},
		{"serve-http", "[serve's flags]", "serve MCP over Streamable HTTP (the same as serve --http; see docs/http.md)", serveHTTPCommand, true},
		{"doctor", "[--json | --verbose] [--timeout D]", "check providers (program, handshake, capabilities) and the store", doctor, false},
		{"providers", "[--json | --verbose] [--timeout D]", "list the providers' capabilities, with reasons and fixes", providersCmd, false},
		{"agents", "[--timeout D] [--db PATH]", "the 0.3.x name of providers --json (it takes the same flags)", agents, false},
		{"sessions", "[--provider P] [--json] [--timeout D]", "list the provider sessions (list_agent_sessions)", sessions, false},
		{"work", "list|show <id>|graph [flags] [--db PATH]", "inspect the coordination store", work, false},
		{"setup", "claude|opencode|codex|cursor [--profile P] [--read-only] [--http] [--write]", "print or write a client's MCP entry", setupCommand, false},
		{"install", "[--write]", "print or write the Codex entry (= setup codex)", installCommand, false},
		{"cursor-setup", "[--project] [--read-only] [--write]", "print or write the Cursor entry (= setup cursor)", cursorSetupCommand, false},
		{"migrate", "import-state [--state FILE] [--conversations FILE] [--dry-run] [--json] [--db PATH]", "bring a 0.3.x state.json and conversations.json into the store (docs/import.md)", migrate, false},
		{"desk", "[--host H] [--port N] [--token-file P] [--db PATH]", "serve the traffic desk: a live web page of sessions, receipts, work and claims, which can release a claim (--read-only: not even that; see docs/desk.md)", deskCommand, false},
		{"version", "", "print the version", printVersion, false},
		{"help", "[command]", "list the commands, or show one command's flags", help, false},
	}
}

func lookupCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// usageLine is the one-line usage 0.3.x printed for an unknown command.
func usageLine() string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return "usage: interop-runtime [" + strings.Join(names, "|") + "]"
}

// Main runs the command line as the binary does and returns the exit code:
// SIGINT and SIGTERM end the command's context. Their handlers are
// installed before a command runs, except serve's (see package
// interrupt): serve over stdio answers initialize first, unless a person
// runs it on a terminal, and serve-http installs them before it listens.
func Main(args []string, env Env, stdio IO) int {
	ctx, stop := interrupt.Notify(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Do(ctx, args, env, stdio)
}

// Do runs the command line and returns the exit code.
func Do(ctx context.Context, args []string, env Env, stdio IO) int {
	if len(args) == 0 {
		return serve(ctx, nil, env, stdio)
	}
	switch args[0] {
	case "-h", "-help", "--help":
		return help(ctx, args[1:], env, stdio)
	case "-version", "--version":
		return printVersion(ctx, args[1:], env, stdio)
	}
	if strings.HasPrefix(args[0], "-") {
		// serve's flags without the word serve, as clients configure it.
		return serve(ctx, args, env, stdio)
	}
	if c, ok := lookupCommand(args[0]); ok {
		if !c.waitsForSignals {
			interrupt.Wait(ctx)
		}
		return c.run(ctx, args[1:], env, stdio)
	}
	fmt.Fprintf(stdio.Stderr, "interop-runtime: unknown command %q\n%s\nRun 'interop-runtime help' for what each command does.\n", args[0], usageLine())
	return 2
}

// help prints every command with its one line, or one command's help.
func help(_ context.Context, args []string, _ Env, stdio IO) int {
	if len(args) > 0 && !isHelpFlag(args[0]) {
		c, ok := lookupCommand(args[0])
		if !ok {
			fmt.Fprintf(stdio.Stderr, "interop-runtime help: unknown command %q\n%s\n", args[0], usageLine())
			return 2
		}
		if c.name == "help" {
			return help(context.Background(), nil, nil, stdio)
		}
		return c.run(context.Background(), []string{"--help"}, func(string) (string, bool) { return "", false }, stdio)
	}
	var b strings.Builder
	b.WriteString("interop-runtime " + version.Version + ": a local MCP server that lets one coding agent drive and\ncoordinate the other coding-agent sessions on this computer.\n\n")
	b.WriteString("usage: interop-runtime [command] [flags]    (no command: serve)\n\ncommands:\n")
	wide := 0
	for _, c := range commands() {
		wide = max(wide, len(c.name))
	}
	for _, c := range commands() {
		b.WriteString(workcli.WrapHanging(fmt.Sprintf("  %-*s  ", wide, c.name), c.help, workcli.HelpWidth))
	}
	b.WriteString("\n'interop-runtime <command> --help' shows a command's flags. Docs: README.md, docs/http.md.\n")
	fmt.Fprint(stdio.Stdout, b.String())
	return 0
}

func printVersion(_ context.Context, args []string, _ Env, stdio IO) int {
	if len(args) > 0 && isHelpFlag(args[0]) {
		commandHelp(stdio.Stdout, "version", nil)
		return 0
	}
	fmt.Fprintln(stdio.Stdout, version.Version)
	return 0
}

func isHelpFlag(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

// newFlagSet is a command's flag set; parse it with parseFlags.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() { commandHelp(fs.Output(), name, fs) }
	return fs
}

// parseFlags parses args; when ok is false the command returns code:
// 0 after --help (printed on stdout), 2 after a bad flag (on stderr).
func parseFlags(fs *flag.FlagSet, args []string, stdio IO) (code int, ok bool) {
	var out bytes.Buffer
	fs.SetOutput(&out)
	err := fs.Parse(args)
	fs.SetOutput(stdio.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		stdio.Stdout.Write(out.Bytes())
		return 0, false
	case err != nil:
		stdio.Stderr.Write(out.Bytes())
		return 2, false
	}
	return 0, true
}

// commandHelp prints a command's synopsis, its line of help and its flags.
func commandHelp(w io.Writer, name string, fs *flag.FlagSet) {
	c, _ := lookupCommand(name)
	fmt.Fprint(w, workcli.WrapHanging("usage: interop-runtime "+name+" ", c.args, workcli.HelpWidth))
	fmt.Fprint(w, "\n"+strings.Join(workcli.Wrap(c.help, workcli.HelpWidth), "\n")+"\n")
	if fs == nil {
		return
	}
	var n int
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintln(w, "\nflags:")
		workcli.PrintFlags(w, fs)
	}
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
	return runServe(ctx, args, env, stdio, false)
}

func serveHTTPCommand(ctx context.Context, args []string, env Env, stdio IO) int {
	return runServe(ctx, args, env, stdio, true)
}

// serveFlags are serve's flags; the HTTP ones apply with --http only.
type serveFlags struct {
	profile  string
	readOnly bool
	http     bool
	httpFlags
}

func runServe(ctx context.Context, args []string, env Env, stdio IO, httpMode bool) int {
	name := "serve"
	if httpMode {
		name = "serve-http"
	}
	fs := newFlagSet(name)
	var f serveFlags
	fs.StringVar(&f.profile, "profile", "", "tool profile: minimal, core, freebuff, legacy or full (also INTEROP_TOOLS_PROFILE; default full)")
	fs.BoolVar(&f.readOnly, "read-only", false, "serve read tools only (also INTEROP_READ_ONLY=1)")
	if !httpMode {
		fs.BoolVar(&f.http, "http", false, "serve Streamable HTTP instead of stdio (as serve-http)")
	}
	f.httpFlags.register(fs)
	db := dbFlag(fs)
	if code, ok := parseFlags(fs, args, stdio); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stdio.Stderr, "interop-runtime %s: unexpected argument %q\n", name, fs.Arg(0))
		return 2
	}
	env, err := withDB(env, *db)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "interop-runtime %s: %v\n", name, err)
		return 2
	}
	profile, err := ResolveProfile(f.profile, env)
	if err != nil {
		fmt.Fprintln(stdio.Stderr, err)
		return 2
	}
	readOnly := f.readOnly || env.get("INTEROP_READ_ONLY") == "1"
	if httpMode || f.http {
		return serveHTTP(ctx, fs, f, profile, readOnly, env, stdio)
	}
	if set := f.httpFlags.given(fs); set != "" {
		fmt.Fprintf(stdio.Stderr, "interop-runtime serve: --%s applies to HTTP mode; add --http (or run serve-http)\n", set)
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stdio.Stderr, &slog.HandlerOptions{Level: logLevel(env)}))

	// The store opens now (a store that cannot be used stops serve here);
	// the rest of the runtime is assembled by the first tool call, or by
	// the settlement once a gone process may have left work.
	a, err := app.OpenDeferred(ctx, app.Config{Env: app.Env(env), Logger: logger, Runtime: runtimeInfo(profile, readOnly)})
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "interop-runtime: %v\n", err)
		return 1
	}
	defer a.Close()
	srv := server.New(server.Options{
		Profile:         profile,
		ReadOnly:        readOnly,
		Version:         version.Version,
		OpenHandlers:    a.Handlers,
		Logger:          logger,
		AfterInitialize: a.AfterInitialize,
		Signals:         interrupt.From(ctx), // nil outside Main: its methods then do nothing
	})
	if hintOnTerminal(stdio) {
		interrupt.Wait(ctx) // a person's Ctrl-C stops serve quietly (exit 0)
	}
	// Ctrl-C (ctx ends) stops the input like stdin EOF does: answers in
	// flight are written (briefly), background work stops, and the server
	// exits 0. The SDK only sees the end of its input.
	t := stdiotransport.New(stdio.Stdin, stdio.Stdout, stdiotransport.Options{})
	stop := context.AfterFunc(ctx, t.Interrupt)
	defer stop()
	if err := srv.Run(context.WithoutCancel(ctx), t); err != nil && !errors.Is(err, io.EOF) {
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

// runtimeInfo describes the server for get_runtime_status.
func runtimeInfo(profile catalogs.Profile, readOnly bool) handlers.RuntimeInfo {
	return handlers.RuntimeInfo{
		Version:            version.Version,
		Profile:            profile.Name,
		ProfileDescription: profile.Description,
		ReadOnly:           readOnly,
		Tools:              len(profile.Entries(readOnly)),
	}
}

// hintOnTerminal tells a person who ran serve at a terminal what it is
// waiting for; an MCP client's stdin is a pipe, so clients never see it.
// hintOnTerminal tells a person who ran serve on a terminal what it is
// waiting for, and reports whether stdin is one.
func hintOnTerminal(stdio IO) bool {
	f, ok := stdio.Stdin.(*os.File)
	if !ok {
		return false
	}
	if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		fmt.Fprintln(stdio.Stderr, "interop-runtime: serving MCP over stdio, waiting for a client on stdin (Ctrl-C stops; 'interop-runtime help' lists the commands)")
		return true
	}
	return false
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
	for _, a := range args {
		if isHelpFlag(a) || a == "help" {
			// workcli prints its forms and every flag, --db included.
			commandHelp(stdio.Stdout, "work", nil)
			fmt.Fprintln(stdio.Stdout)
			return workcli.Run(ctx, nil, []string{"--help"}, stdio.Stdout, stdio.Stderr)
		}
	}
	args, db, err := takeDB(args)
	if err == nil {
		env, err = withDB(env, db)
	}
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "interop-runtime work: %v\n", err)
		return 2
	}
	// work only reads: a missing store is an error, never created.
	a, err := app.Open(ctx, app.Config{Env: app.Env(env), ExistingStore: true})
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "interop-runtime: %v\n", err)
		return 1
	}
	defer a.Close()
	return workcli.Run(ctx, a.Workflow, args, stdio.Stdout, stdio.Stderr, workcli.WithTotals(a.Delivery.WorkTotals))
}

// takeDB removes --db (-db, --db=V) from args, which may stand anywhere
// among work's subcommand words, and returns its value.
func takeDB(args []string) (rest []string, db string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(rest, args[i:]...), db, nil
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "db" {
			rest = append(rest, a)
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return nil, "", errors.New("--db needs a value: a SQLite file or a postgres:// URL")
			}
			i++
			value = args[i]
		}
		db = value
	}
	return rest, db, nil
}
