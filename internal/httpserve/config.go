package httpserve

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agent-interop/runtime/internal/httpguard"
)

// Defaults of HTTP mode (0.3.x's).
const (
	DefaultHost = "127.0.0.1"
	DefaultPort = 8788
)

// The variables of HTTP mode: each canonical name with its 0.3.x alias
// (FREEBUFF_MCP_*). The canonical name wins when both are set; an empty
// value counts as unset.
var (
	EnvToken          = envName{"AGENT_INTEROP_HTTP_TOKEN", "FREEBUFF_MCP_TOKEN"}
	EnvHost           = envName{"AGENT_INTEROP_HTTP_HOST", "FREEBUFF_MCP_HOST"}
	EnvPort           = envName{"AGENT_INTEROP_HTTP_PORT", "FREEBUFF_MCP_PORT"}
	EnvAllowedOrigins = envName{"AGENT_INTEROP_HTTP_ALLOWED_ORIGINS", "FREEBUFF_MCP_ALLOWED_ORIGINS"}
	EnvAllowRemote    = envName{"AGENT_INTEROP_HTTP_ALLOW_REMOTE", "FREEBUFF_MCP_ALLOW_REMOTE"}
	// Beyond 0.3.x (no alias): where the per-boot token is written, and
	// the rate limit.
	EnvTokenFile = envName{Canonical: "AGENT_INTEROP_HTTP_TOKEN_FILE"}
	EnvRateLimit = envName{Canonical: "AGENT_INTEROP_HTTP_RATE_LIMIT"}
)

// RemoteRefused is 0.3.x's start-up error for a non-loopback host.
const RemoteRefused = "Refusing non-loopback HTTP host; set AGENT_INTEROP_HTTP_ALLOW_REMOTE=1 only behind trusted HTTPS and authentication."

type envName struct{ Canonical, Alias string }

// lookup returns the variable's value and the name it came from.
func (n envName) lookup(env func(string) (string, bool)) (value, from string) {
	for _, name := range []string{n.Canonical, n.Alias} {
		if name == "" {
			continue
		}
		if v, ok := env(name); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v), name
		}
	}
	return "", ""
}

// Config is HTTP mode's configuration.
type Config struct {
	Host string
	Port int // 0 picks a free port
	// Token is the bearer token clients must send. Empty means none was
	// configured: the command line then generates one per boot and writes
	// it to TokenFile (see docs/http.md).
	Token string
	// TokenFile is where a generated token is written; empty means
	// DefaultTokenFile.
	TokenFile      string
	AllowedOrigins []string
	AllowRemote    bool
	// RateLimit is /mcp requests per minute per MCP session (a token
	// bucket with a burst of as many, see Options.RateLimit); 0 disables it.
	RateLimit int
}

// ConfigFromEnv reads the variables of HTTP mode over the defaults. A
// malformed value is an error naming the variable and the rule.
func ConfigFromEnv(env func(string) (string, bool)) (Config, error) {
	c := Config{Host: DefaultHost, Port: DefaultPort, AllowedOrigins: httpguard.DefaultAllowedOrigins(), RateLimit: DefaultRateLimit}
	c.Token, _ = EnvToken.lookup(env)
	if v, _ := EnvHost.lookup(env); v != "" {
		c.Host = v
	}
	var errs []error
	if v, from := EnvPort.lookup(env); v != "" {
		p, err := ParsePort(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", from, err))
		}
		c.Port = p
	}
	if v, from := EnvAllowedOrigins.lookup(env); v != "" {
		origins, err := ParseOrigins(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", from, err))
		}
		c.AllowedOrigins = origins
	}
	if v, _ := EnvAllowRemote.lookup(env); v == "1" {
		c.AllowRemote = true
	}
	c.TokenFile, _ = EnvTokenFile.lookup(env)
	if v, from := EnvRateLimit.lookup(env); v != "" {
		n, err := ParseRateLimit(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", from, err))
		}
		c.RateLimit = n
	}
	return c, errors.Join(errs...)
}

// ParsePort reads a TCP port number, 0 to 65535.
func ParsePort(v string) (int, error) {
	p, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || p < 0 || p > 65535 {
		return 0, fmt.Errorf("must be a port number from 0 to 65535, not %q", v)
	}
	return p, nil
}

// ParseRateLimit reads a number of requests per minute, 0 (no limit) or
// more.
func ParseRateLimit(v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("must be a whole number of requests per minute, 0 for no limit, not %q", v)
	}
	return n, nil
}

// ParseOrigins reads a comma-separated list of origins
// (scheme://host[:port]); blank entries are skipped.
func ParseOrigins(v string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		n, ok := httpguard.NormalizeOrigin(part)
		if !ok {
			return nil, fmt.Errorf("%q is not an origin (scheme://host[:port], http or https, no path)", part)
		}
		out = append(out, n)
	}
	return out, nil
}

// IsLoopbackName reports a host 0.3.x accepted without ALLOW_REMOTE:
// exactly 127.0.0.1, localhost or ::1.
func IsLoopbackName(host string) bool {
	switch strings.TrimSuffix(strings.TrimPrefix(host, "["), "]") {
	case "127.0.0.1", "localhost", "::1":
		return true
	}
	return false
}

// Validate refuses a non-loopback host unless AllowRemote is set, with
// 0.3.x's message.
func (c Config) Validate() error {
	if c.Host == "" {
		return errors.New("the HTTP host must not be empty")
	}
	if !IsLoopbackName(c.Host) && !c.AllowRemote {
		return errors.New(RemoteRefused)
	}
	return nil
}

// Loopback reports whether the server listens on a loopback host.
func (c Config) Loopback() bool { return IsLoopbackName(c.Host) }

// Addr is the host:port to listen on.
func (c Config) Addr() string {
	return net.JoinHostPort(strings.TrimSuffix(strings.TrimPrefix(c.Host, "["), "]"), strconv.Itoa(c.Port))
}

// OwnOrigins are the browser origins of the server itself, listening on
// host and port: on a loopback host every loopback name with that port
// (http://127.0.0.1:<port>, http://localhost:<port>, http://[::1]:<port>),
// else http://<host>:<port>. A page the server serves (the desk) or a
// client that names the server's own address as its Origin is accepted.
func OwnOrigins(host string, port int) []string {
	p := strconv.Itoa(port)
	if IsLoopbackName(host) {
		return []string{"http://127.0.0.1:" + p, "http://localhost:" + p, "http://[::1]:" + p}
	}
	o, ok := httpguard.NormalizeOrigin("http://" + net.JoinHostPort(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), p))
	if !ok {
		return nil
	}
	return []string{o}
}

// DefaultTokenFile is where a generated token goes when no file was
// named: ~/.agent-interop-runtime/http-<port>.token, beside the store.
func DefaultTokenFile(home string, port int) string {
	return filepath.Join(home, ".agent-interop-runtime", fmt.Sprintf("http-%d.token", port))
}

// EndpointURL is the MCP endpoint's address on host and port, as the
// start-up line names it.
func EndpointURL(host string, port int) string {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return "http://" + net.JoinHostPort(host, strconv.Itoa(port)) + "/mcp"
}
