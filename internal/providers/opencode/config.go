package opencode

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/httpguard"
)

// DefaultURL is where an OpenCode server is looked for first when
// OPENCODE_SERVER_URL is not set.
const DefaultURL = "http://127.0.0.1:4096"

// PinnedVersion is the OpenCode release the adapter is tested against.
const PinnedVersion = "1.18.33"

// Config configures an Adapter. The zero value discovers a local server and
// may start one; ConfigFromEnv reads the documented environment variables.
type Config struct {
	// ServerURL is OPENCODE_SERVER_URL. When empty the adapter tries
	// DefaultURL, then loopback listeners, then starts a server.
	ServerURL string
	// Username and Password are OPENCODE_SERVER_USERNAME (default
	// "opencode") and OPENCODE_SERVER_PASSWORD, sent as HTTP Basic
	// credentials on every request, the event stream included.
	Username string
	Password string
	// AllowInsecureRemote is OPENCODE_ALLOW_INSECURE_REMOTE=1: plain HTTP to
	// a non-loopback server is then allowed.
	AllowInsecureRemote bool
	// DisableAutoStart is OPENCODE_AUTO_START=false.
	DisableAutoStart bool
	// NoStartReason, when set, also keeps the adapter from starting a
	// server and is the reason it gives for not starting one (doctor sets
	// it: it probes servers that run but never starts one).
	NoStartReason string
	// Program is the opencode executable to start (OPENCODE_COMMAND, else
	// "opencode" from PATH).
	Program string
	// ServeDir is the working directory of a started server (default: the
	// process's working directory).
	ServeDir string
	// ServeEnv is the environment of a started server (default: this
	// process's environment).
	ServeEnv []string
	// DisableScan turns off the /proc/net listener scan.
	DisableScan bool
	// ProcNetFiles are the listener tables scanned (default /proc/net/tcp
	// and /proc/net/tcp6).
	ProcNetFiles []string
	// UID is this user's id (default os.Getuid): on Linux, listeners
	// another user owns, the default URL's included, are not probed.
	UID func() int
	// DefaultURL overrides DefaultURL (tests).
	DefaultURL string

	RequestTimeout   time.Duration // per request; default 10 s
	ProbeTimeout     time.Duration // per health probe; default 1.5 s
	StartTimeout     time.Duration // wait for a started server; default 45 s
	HeartbeatTimeout time.Duration // event stream silence before reconnecting; default 30 s
	// Transport replaces the HTTP transport (tests).
	Transport http.RoundTripper
	// Clock is the adapter's source of time (default the wall clock). Tests
	// inject a fake to drive the event stream's heartbeat timeout and
	// reconnect back-off deterministically.
	Clock quartz.Clock
}

// ConfigFromEnv reads the adapter's environment variables through
// lookupEnv (os.LookupEnv in production).
func ConfigFromEnv(lookupEnv func(string) (string, bool)) Config {
	getenv := func(k string) string { v, _ := lookupEnv(k); return v }
	c := Config{
		ServerURL: strings.TrimSpace(getenv("OPENCODE_SERVER_URL")),
		Username:  getenv("OPENCODE_SERVER_USERNAME"),
		Password:  getenv("OPENCODE_SERVER_PASSWORD"),
		Program:   getenv("OPENCODE_COMMAND"),
	}
	c.AllowInsecureRemote = getenv("OPENCODE_ALLOW_INSECURE_REMOTE") == "1"
	c.DisableAutoStart = strings.EqualFold(strings.TrimSpace(getenv("OPENCODE_AUTO_START")), "false")
	return c
}

func (c Config) withDefaults() Config {
	if c.Username == "" {
		c.Username = "opencode"
	}
	if c.Program == "" {
		c.Program = "opencode"
	}
	if c.DefaultURL == "" {
		c.DefaultURL = DefaultURL
	}
	if len(c.ProcNetFiles) == 0 {
		c.ProcNetFiles = []string{"/proc/net/tcp", "/proc/net/tcp6"}
	}
	if c.UID == nil {
		c.UID = os.Getuid
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 10 * time.Second
	}
	if c.ProbeTimeout <= 0 {
		c.ProbeTimeout = 1500 * time.Millisecond
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = 45 * time.Second
	}
	if c.HeartbeatTimeout <= 0 {
		c.HeartbeatTimeout = 30 * time.Second
	}
	if c.Clock == nil {
		c.Clock = quartz.NewReal()
	}
	return c
}

// normalizeURL validates a server URL and strips a trailing slash. Remote
// (non-loopback) servers need HTTPS, unless allowInsecure, and credentials.
func normalizeURL(raw string, hasPassword, allowInsecure bool) (base string, loopback bool, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", false, fmt.Errorf("OPENCODE_SERVER_URL %q is not a URL: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", false, fmt.Errorf("OPENCODE_SERVER_URL %q must use http or https", raw)
	}
	if u.Host == "" || u.Hostname() == "" {
		return "", false, fmt.Errorf("OPENCODE_SERVER_URL %q has no host", raw)
	}
	if u.User != nil {
		return "", false, fmt.Errorf("OPENCODE_SERVER_URL must not embed credentials; set OPENCODE_SERVER_USERNAME and OPENCODE_SERVER_PASSWORD")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", false, fmt.Errorf("OPENCODE_SERVER_URL %q must not have a query or fragment", raw)
	}
	loopback = httpguard.IsLoopbackHost(u.Hostname())
	if !loopback {
		if u.Scheme != "https" && !allowInsecure {
			return "", false, fmt.Errorf("OpenCode remote endpoint %s must use https (set OPENCODE_ALLOW_INSECURE_REMOTE=1 to allow plain http)", u.Host)
		}
		if !hasPassword {
			return "", false, fmt.Errorf("OpenCode remote endpoint requires OPENCODE_SERVER_USERNAME and OPENCODE_SERVER_PASSWORD (%s is not a loopback address)", u.Host)
		}
	}
	return strings.TrimRight(u.Scheme+"://"+u.Host+u.EscapedPath(), "/"), loopback, nil
}
