package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/app"
	"github.com/agent-interop/runtime/internal/desk"
	"github.com/agent-interop/runtime/internal/httpguard"
	"github.com/agent-interop/runtime/internal/httpserve"
	"github.com/agent-interop/runtime/internal/interrupt"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/server"
	"github.com/agent-interop/runtime/internal/version"
)

// httpFlags are serve's HTTP-mode flags. A flag that is given wins over
// its variable (AGENT_INTEROP_HTTP_*, then the FREEBUFF_MCP_* alias),
// which wins over the default. There is deliberately no token flag: a
// process's arguments are visible to every user of the machine.
type httpFlags struct {
	host, origins, tokenFile string
	port, rateLimit          int
	allowRemote              bool
}

func (h *httpFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&h.host, "host", httpserve.DefaultHost, "HTTP: host to listen on; not loopback needs --allow-remote (AGENT_INTEROP_HTTP_HOST)")
	fs.IntVar(&h.port, "port", httpserve.DefaultPort, "HTTP: port to listen on, 0 for any free port (AGENT_INTEROP_HTTP_PORT)")
	fs.StringVar(&h.origins, "allowed-origins", "http://127.0.0.1,http://localhost", "HTTP: comma-separated browser origins allowed (AGENT_INTEROP_HTTP_ALLOWED_ORIGINS)")
	fs.BoolVar(&h.allowRemote, "allow-remote", false, "HTTP: allow a non-loopback host, only behind trusted HTTPS and authentication (AGENT_INTEROP_HTTP_ALLOW_REMOTE=1)")
	fs.StringVar(&h.tokenFile, "token-file", "", "HTTP: where the per-boot token is written when AGENT_INTEROP_HTTP_TOKEN is unset (default ~/.agent-interop-runtime/http-<port>.token)")
	fs.IntVar(&h.rateLimit, "rate-limit", httpserve.DefaultRateLimit, "HTTP: /mcp requests per minute per MCP session (a burst of as many), 0 for no limit (AGENT_INTEROP_HTTP_RATE_LIMIT)")
}

var httpFlagNames = []string{"host", "port", "allowed-origins", "allow-remote", "token-file", "rate-limit"}

// given names the first HTTP flag on the command line, or "".
func (h *httpFlags) given(fs *flag.FlagSet) string {
	var name string
	fs.Visit(func(f *flag.Flag) {
		for _, n := range httpFlagNames {
			if f.Name == n && name == "" {
				name = n
			}
		}
	})
	return name
}

// apply puts the flags that were given over c.
func (h *httpFlags) apply(fs *flag.FlagSet, c *httpserve.Config) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "host":
			c.Host = h.host
		case "port":
			if h.port < 0 || h.port > 65535 {
				err = fmt.Errorf("--port must be a port number from 0 to 65535, not %d", h.port)
			}
			c.Port = h.port
		case "allowed-origins":
			var origins []string
			if origins, err = httpserve.ParseOrigins(h.origins); err != nil {
				err = fmt.Errorf("--allowed-origins: %w", err)
			}
			c.AllowedOrigins = origins
		case "allow-remote":
			c.AllowRemote = h.allowRemote
		case "token-file":
			c.TokenFile = h.tokenFile
		case "rate-limit":
			if h.rateLimit < 0 {
				err = fmt.Errorf("--rate-limit must be 0 (no limit) or more, not %d", h.rateLimit)
			}
			c.RateLimit = h.rateLimit
		}
	})
	return err
}

// serveHTTP is serve --http: one App and one MCP server behind the HTTP
// guard, until ctx ends.
func serveHTTP(ctx context.Context, fs *flag.FlagSet, f serveFlags, profile catalogs.Profile, readOnly bool, env Env, stdio IO) int {
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(stdio.Stderr, "interop-runtime serve-http: "+format+"\n", args...)
		return code
	}
	cfg, err := httpserve.ConfigFromEnv(env)
	if err != nil {
		return fail(2, "%v", err)
	}
	if err := f.httpFlags.apply(fs, &cfg); err != nil {
		return fail(2, "%v", err)
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(stdio.Stderr, err) // 0.3.x's message, verbatim
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stdio.Stderr, &slog.HandlerOptions{Level: logLevel(env)}))

	interrupt.Wait(ctx) // SIGTERM stops a server that listens (exit 0)
	ln, err := net.Listen("tcp", cfg.Addr())
	if err != nil {
		return fail(1, "listen on %s: %v", cfg.Addr(), err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port

	// No token configured: 0.3.x refused every request. Here a token is
	// generated for this run and written to a 0600 file, and that token
	// is then the configured one: a request without it is still 401.
	token := cfg.Token
	if token == "" {
		path, err := tokenFilePath(cfg, port, env)
		if err != nil {
			return fail(2, "%v", err)
		}
		if token, err = httpguard.GenerateToken(); err != nil {
			return fail(1, "%v", err)
		}
		if err := httpguard.WriteTokenFile(path, token); err != nil {
			return fail(1, "%v", err)
		}
		defer func() {
			if err := httpguard.RemoveTokenFile(path, token); err != nil {
				logger.Warn("removing the token file failed", "path", path, "err", err)
			}
		}()
		fmt.Fprintf(stdio.Stderr, "agent-interop-runtime HTTP token written to %s (mode 0600, new on every start; clients send it as 'Authorization: Bearer <token>')\n", path)
	}

	a, err := app.Open(ctx, app.Config{Env: app.Env(env), Logger: logger, Runtime: runtimeInfo(profile, readOnly)})
	if err != nil {
		return fail(1, "%v", err)
	}
	defer a.Close()
	srv := newMCPServer(a, profile, readOnly, logger)
	rate := guardRateLimit(cfg.RateLimit)
	// The rate limit of /mcp is the handler's, per session; the guard keeps
	// none per address (every local client has the same one).
	guard := httpguard.New(httpguard.Options{
		AllowedOrigins:   append(append([]string{}, cfg.AllowedOrigins...), httpserve.OwnOrigins(cfg.Host, port)...),
		LoopbackHostOnly: cfg.Loopback() && !cfg.AllowRemote,
		RateLimit:        -1,
	})
	dk, err := openDesk(a, cfg, token, port, rate, readOnly, logger, stdio.Stderr)
	if err != nil {
		return fail(1, "%v", err)
	}
	defer dk.Close()
	go func() { <-ctx.Done(); dk.Close() }() // end the desk's live streams, so shutdown does not wait for them
	h := newHTTPHandler(srv, guard, dk, cfg, token, readOnly, logger)
	fmt.Fprintf(stdio.Stderr, "agent-interop-runtime HTTP listening on %s\n", httpserve.EndpointURL(cfg.Host, port))
	if err := httpserve.Serve(ctx, ln, h, httpserve.ServeOptions{}); err != nil && !errors.Is(err, net.ErrClosed) {
		logger.Error("serve-http ended", "err", err)
		return 1
	}
	return 0
}

// newMCPServer is the MCP server over a's handlers, one session ID per
// HTTP session.
func newMCPServer(a *app.App, profile catalogs.Profile, readOnly bool, logger *slog.Logger) *server.Server {
	return server.New(server.Options{
		Profile:         profile,
		ReadOnly:        readOnly,
		Version:         version.Version,
		Handlers:        a.Handlers,
		Logger:          logger,
		AfterInitialize: a.AfterInitialize,
		SessionID:       uuid.NewString,
	})
}

// newHTTPHandler puts the MCP endpoint and the desk behind the guard and
// the token; health needs the token too when the address is not loopback.
func newHTTPHandler(srv *server.Server, guard *httpguard.Guard, dk *desk.Handler, cfg httpserve.Config, token string, readOnly bool, logger *slog.Logger) *httpserve.Handler {
	return httpserve.NewHandler(httpserve.Options{
		MCP: srv.StreamableHTTPHandler(&mcp.StreamableHTTPOptions{
			Logger: logger,
			// The guard checks Host itself (and answers 0.3.x-style JSON).
			DisableLocalhostProtection: true,
			MaxRequestBodyBytes:        guard.MaxBodyBytes(),
		}),
		Guard:            guard,
		Token:            httpguard.NewSecret(token),
		RateLimit:        guardRateLimit(cfg.RateLimit),
		HealthNeedsToken: !cfg.Loopback(),
		ReadOnly:         readOnly,
		Logger:           logger,
		Desk:             dk,
	})
}

// tokenFilePath is where a token generated for this run is written: the
// configured token file, or the default one under the home directory.
func tokenFilePath(cfg httpserve.Config, port int, env Env) (string, error) {
	if cfg.TokenFile != "" {
		return cfg.TokenFile, nil
	}
	home := homeDir(env)
	if home == "" {
		return "", fmt.Errorf("no token configured and no HOME for the token file: set %s, or %s", httpserve.EnvToken.Canonical, httpserve.EnvTokenFile.Canonical)
	}
	return httpserve.DefaultTokenFile(home, port), nil
}

// guardRateLimit is a configured rate limit (requests per minute) in the
// guard's terms: 0, no limit, is the guard's -1.
func guardRateLimit(rate int) int {
	if rate == 0 {
		return -1
	}
	return rate
}

// openDesk opens the traffic desk at /desk, over the same store and
// token. The sessions this process drives get their liveness from its
// registry (the adapters' memory, which alone can say dead); the others,
// and these when another live process drives them now, are inferred from
// the store. Its one-time login links go to stderr.
func openDesk(a *app.App, cfg httpserve.Config, token string, port, rate int, readOnly bool, logger *slog.Logger, stderr io.Writer) (*desk.Handler, error) {
	base := "http://" + net.JoinHostPort(trimBrackets(cfg.Host), strconv.Itoa(port))
	return desk.New(desk.Options{
		Store: a.Store, Token: httpguard.NewSecret(token), Port: port, URL: base, RateLimit: rate, Logger: logger,
		Liveness: desk.RuntimeLiveness(a.Registry.Liveness), Owner: a.Delivery.Owner(),
		// A person signed in to the desk may answer permission requests,
		// cancel turns and release claims through the same handlers as
		// the MCP tools; never under --read-only.
		Tools: a.Handlers, ReadOnly: readOnly,
		Providers: providerIDs(a.Registry.IDs()),
		LoginLink: func(link string) {
			fmt.Fprintf(stderr, "agent-interop-runtime desk login link (works once): %s\n", link)
		},
	})
}

// providerIDs are the registry's provider ids as strings, for the desk.
func providerIDs(ids []providers.ID) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, string(id))
	}
	return out
}

func homeDir(env Env) string {
	for _, k := range []string{"HOME", "USERPROFILE"} {
		if v := env.get(k); v != "" {
			return v
		}
	}
	return ""
}

// agents is 0.3.x's name for the capability listing as JSON.
func agents(ctx context.Context, args []string, env Env, stdio IO) int {
	for _, a := range args {
		if isHelpFlag(a) {
			commandHelp(stdio.Stdout, "agents", nil)
			return 0
		}
	}
	return providersCmd(ctx, append([]string{"--json"}, args...), env, stdio)
}
