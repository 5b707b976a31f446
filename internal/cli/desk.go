package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/agent-interop/runtime/handlers"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/desk"
	"github.com/agent-interop/runtime/internal/httpguard"
	"github.com/agent-interop/runtime/internal/httpserve"
	"github.com/agent-interop/runtime/internal/providers/adapters"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/workflow"
)

// DefaultDeskPort is the port `interop-runtime desk` listens on.
const DefaultDeskPort = 8789

// deskCommand is `interop-runtime desk`: the traffic desk on its own
// loopback listener, over the store every runtime process of this machine
// writes (docs/desk.md).
func deskCommand(ctx context.Context, args []string, env Env, stdio IO) int {
	fs := newFlagSet("desk")
	host := fs.String("host", httpserve.DefaultHost, "loopback host to listen on: 127.0.0.1, localhost or ::1")
	port := fs.Int("port", DefaultDeskPort, "port to listen on, 0 for any free port")
	tokenFile := fs.String("token-file", "", "where the per-boot token is written when AGENT_INTEROP_HTTP_TOKEN is unset (default ~/.agent-interop-runtime/desk-<port>.token)")
	rate := fs.Int("rate-limit", desk.DefaultRateLimit, "requests per minute per desk session or bearer token (failed sign-ins: per client address), 0 for no limit")
	lifetime := fs.Duration("stream-lifetime", desk.DefaultStreamLifetime, "how long one live stream lasts before the browser reconnects (resuming where it was; its cookie is checked again)")
	readOnly := fs.Bool("read-only", false, "show the store only: refuse to release claims (this desk never answers permission requests or cancels turns: it holds no provider connection)")
	db := dbFlag(fs)
	if code, ok := parseFlags(fs, args, stdio); !ok {
		return code
	}
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(stdio.Stderr, "interop-runtime desk: "+format+"\n", args...)
		return code
	}
	if fs.NArg() > 0 {
		return fail(2, "unexpected argument %q", fs.Arg(0))
	}
	if err := checkDeskFlags(*host, *port, *rate, *lifetime); err != nil {
		return fail(2, "%v", err)
	}
	env, err := withDB(env, *db)
	if err != nil {
		return fail(2, "%v", err)
	}
	// Only HTTP mode's token applies to the desk; its other variables
	// (port, origins, ...) are serve-http's, so their errors are not ours.
	cfg, _ := httpserve.ConfigFromEnv(env)
	logger := slog.New(slog.NewTextHandler(stdio.Stderr, &slog.HandlerOptions{Level: logLevel(env)}))
	path, err := store.ResolvePath(store.LookupEnv(env))
	if err != nil {
		return fail(1, "%v", err)
	}
	// The desk reads the store, and writes to it only when a person
	// releases a claim (claims service, with its evidence).
	st, err := store.Open(ctx, path, store.WithoutCreate(), store.WithoutUpgrade())
	if err != nil {
		return fail(1, "open the state store: %v", err)
	}
	defer st.Close()

	ln, err := net.Listen("tcp", net.JoinHostPort(trimBrackets(*host), strconv.Itoa(*port)))
	if err != nil {
		return fail(1, "listen on %s:%d: %v", *host, *port, err)
	}
	defer ln.Close()
	bound := ln.Addr().(*net.TCPAddr).Port

	token := cfg.Token
	if token == "" {
		file, err := deskTokenFile(*tokenFile, env, bound)
		if err != nil {
			return fail(2, "%v", err)
		}
		if token, err = httpguard.GenerateToken(); err != nil {
			return fail(1, "%v", err)
		}
		if err := httpguard.WriteTokenFile(file, token); err != nil {
			return fail(1, "%v", err)
		}
		defer func() {
			if err := httpguard.RemoveTokenFile(file, token); err != nil {
				logger.Warn("removing the token file failed", "path", file, "err", err)
			}
		}()
		fmt.Fprintf(stdio.Stderr, "agent-interop-runtime desk token written to %s (mode 0600, new on every start; scripts send it as 'Authorization: Bearer <token>')\n", file)
	}
	limit := guardRateLimit(*rate)
	base := "http://" + net.JoinHostPort(trimBrackets(*host), strconv.Itoa(bound))
	h, err := desk.New(desk.Options{
		Store: st, Token: httpguard.NewSecret(token), Port: bound, URL: base, RateLimit: limit, Logger: logger, StreamLifetime: *lifetime,
		Providers: adapters.KnownIDs(env),
		// A claim is released through the claims service, as
		// release_claim does; answering a permission request or
		// cancelling a turn needs the provider connection of the process
		// driving the session, which this desk does not have.
		Tools:       handlers.New(handlers.Deps{Store: st, Claims: claims.New(st), Workflow: workflow.New(st, workflow.Options{})}),
		NoProviders: true, ReadOnly: *readOnly,
		LoginLink: func(link string) {
			fmt.Fprintf(stdio.Stderr, "agent-interop-runtime desk login link (works once): %s\n", link)
		},
	})
	if err != nil {
		return fail(1, "%v", err)
	}
	defer h.Close()
	fmt.Fprintf(stdio.Stderr, "agent-interop-runtime desk on %s/desk/ (store %s)\n", base, path)
	if err := serveDesk(ctx, ln, h); err != nil {
		logger.Error("desk ended", "err", err)
		return 1
	}
	return 0
}

// checkDeskFlags checks the desk's flag values: a loopback host, a port
// number, a rate limit of 0 or more and a stream lifetime of 1s or more.
func checkDeskFlags(host string, port, rate int, lifetime time.Duration) error {
	switch {
	case !httpserve.IsLoopbackName(host):
		return fmt.Errorf("--host must be a loopback address (127.0.0.1, localhost or ::1), not %q: the desk is for this machine only", host)
	case port < 0 || port > 65535:
		return fmt.Errorf("--port must be a port number from 0 to 65535, not %d", port)
	case rate < 0:
		return fmt.Errorf("--rate-limit must be 0 (no limit) or more, not %d", rate)
	case lifetime < time.Second:
		return fmt.Errorf("--stream-lifetime must be at least 1s, not %s", lifetime)
	}
	return nil
}

// deskTokenFile is where a token generated for this run is written: the
// --token-file value, or ~/.agent-interop-runtime/desk-<port>.token.
func deskTokenFile(flagValue string, env Env, port int) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	home := homeDir(env)
	if home == "" {
		return "", fmt.Errorf("no token configured and no HOME for the token file: set %s, or --token-file", httpserve.EnvToken.Canonical)
	}
	return filepath.Join(home, ".agent-interop-runtime", fmt.Sprintf("desk-%d.token", port)), nil
}

// serveDesk serves h on ln until ctx ends. Live streams never end by
// themselves, so they are cancelled first (their requests' context derives
// from the server's base context), then in-flight requests get a grace.
func serveDesk(ctx context.Context, ln net.Listener, h http.Handler) error {
	base, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	srv := httpserve.NewHTTPServer(h, httpserve.ServeOptions{})
	srv.BaseContext = func(net.Listener) context.Context { return base }
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("serve the desk: %w", err)
	case <-ctx.Done():
	}
	cancel()
	grace, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	if err := srv.Shutdown(grace); err != nil {
		_ = srv.Close()
	}
	<-done
	return nil
}

func trimBrackets(host string) string {
	if len(host) > 1 && host[0] == '[' && host[len(host)-1] == ']' {
		return host[1 : len(host)-1]
	}
	return host
}
