package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agent-interop/runtime/handlers"
	"github.com/agent-interop/runtime/internal/app"
	doctorpkg "github.com/agent-interop/runtime/internal/doctor"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/adapters"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/version"
)

// openCodeNoStart is why doctor reports OpenCode's handshake as skipped
// when no server runs: doctor never starts a long-lived server.
const openCodeNoStart = "doctor does not start opencode serve; set OPENCODE_SERVER_URL or run opencode serve"

// doctorSeams are what tests of the doctor command replace.
type doctorSeams struct {
	// freebuffProcDir is the proc file system the Freebuff Desktop
	// discovery scans ("" = /proc, "-" = no scan).
	freebuffProcDir string
}

// doctor is `interop-runtime doctor [--json | --verbose] [--timeout D]`: it checks every
// provider (program, a bounded handshake, capabilities with reasons and
// fixes) and the store, prints the report, and stops every process it
// started. The exit code is 1 when the store exists but does not open.
func doctor(ctx context.Context, args []string, env Env, stdio IO) int {
	return runDoctor(ctx, args, env, stdio, doctorSeams{})
}

func runDoctor(ctx context.Context, args []string, env Env, stdio IO, seams doctorSeams) int {
	fs := newFlagSet("doctor")
	jsonOut := fs.Bool("json", false, "print the report as compact JSON")
	verbose := fs.Bool("verbose", false, "also print program paths (the text otherwise fits 100 columns)")
	timeout := fs.Duration("timeout", doctorpkg.DefaultTimeout, "bound on the whole check, cleanup included")
	db := dbFlag(fs)
	if code, ok := parseFlags(fs, args, stdio); !ok {
		return code
	}
	env, err := withDB(env, *db)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "interop-runtime doctor: %v\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stdio.Stderr, "interop-runtime doctor: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *timeout <= 0 {
		fmt.Fprintln(stdio.Stderr, "interop-runtime doctor: --timeout must be positive")
		return 2
	}
	providerTimeout := min(doctorpkg.DefaultProviderTimeout, *timeout*3/4)
	rep := doctorpkg.Run(ctx, doctorpkg.Options{
		Runtime:         version.Version,
		Adapters:        doctorAdapters(env, seams),
		Store:           doctorpkg.CheckStore(store.LookupEnv(env), nil),
		Timeout:         *timeout,
		ProviderTimeout: providerTimeout,
	})
	if *jsonOut {
		err = doctorpkg.RenderJSON(stdio.Stdout, rep)
	} else {
		err = doctorpkg.RenderText(stdio.Stdout, rep, doctorpkg.TextOptions{Verbose: *verbose})
	}
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "interop-runtime doctor: %v\n", err)
		return 1
	}
	if rep.Store.Exists && !rep.Store.Opens {
		return 1
	}
	return 0
}

// doctorAdapters builds the five adapters the way the runtime does
// (internal/providers/adapters), except that OpenCode never starts a
// server: doctor checks a server that runs, it does not leave one behind.
// No host gets their reports: doctor sends nothing.
func doctorAdapters(env Env, seams doctorSeams) []providers.Adapter {
	return adapters.New(adapters.Config{LookupEnv: env, NoServe: openCodeNoStart, FreebuffProcDir: seams.freebuffProcDir}).All
}

// providersCmd is `interop-runtime providers [--json]`: the capability
// records list_providers answers, as a table. No separate handshake is
// made, but an adapter may start its program to learn what is true now
// (as list_providers does); everything is stopped before it returns.
func providersCmd(ctx context.Context, args []string, env Env, stdio IO) int {
	fs := newFlagSet("providers")
	jsonOut := fs.Bool("json", false, "print compact JSON ({\"providers\":[...]}, as list_providers)")
	verbose := fs.Bool("verbose", false, "also print each provider's program path (the table otherwise fits 100 columns)")
	timeout := fs.Duration("timeout", 20*time.Second, "bound on the listing")
	a, code := openForCommand(ctx, fs, args, env, stdio)
	if a == nil {
		return code
	}
	defer a.Close()
	lctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	list := a.Registry.ListProviders(lctx)
	var err error
	if *jsonOut {
		err = writeJSON(stdio.Stdout, handlers.ProvidersAnswer(list))
	} else {
		err = doctorpkg.RenderProvidersText(stdio.Stdout, list, doctorpkg.TextOptions{Verbose: *verbose})
	}
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "interop-runtime providers: %v\n", err)
		return 1
	}
	return 0
}

// sessions is `interop-runtime sessions [--provider P] [--json]`: what
// list_agent_sessions answers, as a table. Each provider's failure is
// printed on its own; only an unknown provider name is an error.
func sessions(ctx context.Context, args []string, env Env, stdio IO) int {
	fs := newFlagSet("sessions")
	provider := fs.String("provider", "", "only this provider: "+strings.Join(providerNames(), ", "))
	jsonOut := fs.Bool("json", false, "print compact JSON, as list_agent_sessions")
	timeout := fs.Duration("timeout", 30*time.Second, "bound on the listing")
	a, code := openForCommand(ctx, fs, args, env, stdio)
	if a == nil {
		return code
	}
	defer a.Close()
	lctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	list, err := a.Registry.ListSessions(lctx, *provider)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "interop-runtime sessions: %v\n", err)
		var unknown *registry.UnknownProviderError
		if errors.As(err, &unknown) {
			return 2
		}
		return 1
	}
	if *jsonOut {
		err = writeJSON(stdio.Stdout, list)
	} else {
		err = renderSessions(stdio.Stdout, list)
	}
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "interop-runtime sessions: %v\n", err)
		return 1
	}
	return 0
}

func providerNames() []string {
	var out []string
	for _, id := range providers.Order() {
		out = append(out, string(id))
	}
	return out
}

// writeJSON writes v as one line of compact JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

// renderSessions prints a session listing: one row per session, then each
// provider's failure.
func renderSessions(w io.Writer, list registry.SessionList) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(list.Sessions) == 0 {
		fmt.Fprintln(tw, "no sessions")
	} else {
		hosts := false
		for _, s := range list.Sessions {
			hosts = hosts || s.Host != ""
		}
		if hosts { // a team store: say which machine runs each session
			fmt.Fprintln(tw, "SESSION\tHOST\tSTATE\tTITLE\tMODEL\tCWD")
		} else {
			fmt.Fprintln(tw, "SESSION\tSTATE\tTITLE\tMODEL\tCWD")
		}
		for _, s := range list.Sessions {
			host := ""
			if hosts {
				host = dash(s.Host) + "\t"
			}
			fmt.Fprintf(tw, "%s\t%s%s\t%s\t%s\t%s\n", s.ID, host, dash(s.State), dash(clip(s.Title, 48)), dash(s.Model), dash(s.CWD))
		}
	}
	if len(list.ProviderErrors) > 0 {
		fmt.Fprintln(tw, "\nnot listed:")
		for _, e := range list.ProviderErrors {
			fmt.Fprintf(tw, "  %s: %s\n", e.Provider, oneLine(e.Error))
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write sessions: %w", err)
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// clip shortens s to n runes, single line.
func clip(s string, n int) string {
	s = oneLine(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// oneLine folds line breaks and tabs (a tab would break the table).
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// openForCommand parses a subcommand's flags (no positional arguments) and
// opens the App; on failure it returns nil and the exit code.
func openForCommand(ctx context.Context, fs *flag.FlagSet, args []string, env Env, stdio IO) (*scratchApp, int) {
	db := dbFlag(fs)
	if code, ok := parseFlags(fs, args, stdio); !ok {
		return nil, code
	}
	env, err := withDB(env, *db)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "interop-runtime %s: %v\n", fs.Name(), err)
		return nil, 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stdio.Stderr, "interop-runtime %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return nil, 2
	}
	a, err := openScratch(ctx, env)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "interop-runtime: %v\n", err)
		return nil, 1
	}
	return &a, 0
}

// scratchApp is an App over a throw-away store, removed with it.
type scratchApp struct {
	*app.App
	dir string
}

// Close closes the App and removes its throw-away store.
func (s scratchApp) Close() error {
	err := s.App.Close()
	if s.dir != "" {
		if rerr := os.RemoveAll(s.dir); rerr != nil && err == nil {
			err = rerr
		}
	}
	return err
}

// openScratch opens the App over the existing store; providers and
// sessions only read and learn what they list from the providers, so
// when the store does not exist they run over a throw-away one in a
// temporary directory instead of creating it (serve creates it).
func openScratch(ctx context.Context, env Env) (scratchApp, error) {
	a, err := app.Open(ctx, app.Config{Env: app.Env(env), ExistingStore: true})
	if err == nil || !errors.Is(err, store.ErrNoStore) {
		return scratchApp{App: a}, err
	}
	dir, derr := os.MkdirTemp("", "interop-scratch-store")
	if derr != nil {
		return scratchApp{}, fmt.Errorf("%w (and no throw-away store: %v)", err, derr)
	}
	scratch, _ := withDB(env, filepath.Join(dir, "interop.db"))
	a, err = app.Open(ctx, app.Config{Env: app.Env(scratch)})
	if err != nil {
		_ = os.RemoveAll(dir)
		return scratchApp{}, err
	}
	return scratchApp{App: a, dir: dir}, nil
}
