package core

import (
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/security"
)

// Environment variables read through Config.LookupEnv.
const (
	EnvCLIMode         = "FREEBUFF_MCP_CLI_MODE"           // "pty" forces the CLI path
	EnvCLIPath         = "FREEBUFF_CLI_PATH"               // the freebuff executable
	EnvProjectRoot     = "FREEBUFF_PROJECT_ROOT"           // CLI project root (default: WorkDir)
	EnvProjectKey      = "FREEBUFF_PROJECT_KEY"            // CLI history folder override
	EnvOrchestratorURL = "FREEBUFF_ORCHESTRATOR_URL"       // Desktop base URL (loopback only)
	EnvLaunchID        = "FREEBUFF_LAUNCH_ID"              // Desktop launch id
	EnvReadinessFile   = "FREEBUFF_DESKTOP_READINESS_FILE" // deployment-supplied readiness JSON
	EnvReadyPattern    = "FREEBUFF_CLI_READY_PATTERN"      // CLI readiness regex override
	EnvTakeover        = "FREEBUFF_CLI_TAKEOVER"           // "1" answers the lock screen with Enter
)

// Defaults.
const (
	DefaultRequestTimeout = 5 * time.Second
	DefaultProbeTimeout   = 1500 * time.Millisecond
	DefaultReadyTimeout   = 12 * time.Second
)

// Config configures the Freebuff service and its backends. Zero fields
// take the defaults noted.
type Config struct {
	// LookupEnv looks up environment variables (os.LookupEnv when nil).
	LookupEnv security.LookupEnv
	// Environ is the environment given to a managed CLI (os.Environ when nil).
	Environ func() []string
	// Clock is the time source (the wall clock when nil).
	Clock quartz.Clock
	// Roots receives every Freebuff project as an approved root (optional).
	Roots *security.Roots
	// HomeDir locates ~/.config/manicode and the Desktop logs
	// (os.UserHomeDir when empty).
	HomeDir string
	// WorkDir is the default CLI project root (os.Getwd when empty).
	WorkDir string
	// ProcDir is the proc file system scanned for the Desktop orchestrator
	// ("/proc" when empty; "-" disables the scan).
	ProcDir string
	// Logger receives diagnostics (discarded when nil).
	Logger *slog.Logger
	// RequestTimeout bounds one Desktop request (5 s).
	RequestTimeout time.Duration
	// ProbeTimeout bounds one discovery probe (1.5 s).
	ProbeTimeout time.Duration
	// ReadyTimeout bounds the CLI start-up until its ready screen (12 s).
	ReadyTimeout time.Duration
	// PTYProbe replaces the start-up PTY probe (tests).
	PTYProbe func() error
}

// WithDefaults returns a copy of c with every default filled in.
func (c Config) WithDefaults() Config {
	if c.LookupEnv == nil {
		c.LookupEnv = os.LookupEnv
	}
	if c.Environ == nil {
		c.Environ = os.Environ
	}
	if c.Clock == nil {
		c.Clock = quartz.NewReal()
	}
	if c.HomeDir == "" {
		c.HomeDir, _ = os.UserHomeDir()
	}
	if c.WorkDir == "" {
		c.WorkDir, _ = os.Getwd()
	}
	if c.ProcDir == "" {
		c.ProcDir = "/proc"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.ProbeTimeout <= 0 {
		c.ProbeTimeout = DefaultProbeTimeout
	}
	if c.ReadyTimeout <= 0 {
		c.ReadyTimeout = DefaultReadyTimeout
	}
	return c
}

// Env returns the trimmed value of key, "" when unset.
func (c Config) Env(key string) string {
	v, _ := c.LookupEnv(key)
	return strings.TrimSpace(v)
}
