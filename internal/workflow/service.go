package workflow

import (
	"context"
	"os"
	"time"

	"entgo.io/ent/dialect"
	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/verify"
)

// LookupEnv has the signature of os.LookupEnv.
type LookupEnv func(key string) (string, bool)

// SessionInfo is what the provider layer knows about a native session.
type SessionInfo struct {
	// Cwd is the session's verified workspace ("" when unknown).
	Cwd string
	// ParentNativeID is the native ID of the session that spawned this one
	// (sub-agents), "" when none.
	ParentNativeID string
}

// SessionLookup resolves a provider session. The provider registry
// implements it; found is false when the session is not discovered.
type SessionLookup interface {
	LookupSession(ctx context.Context, provider, nativeID string) (info SessionInfo, found bool, err error)
}

// Store is the part of *store.Store the service needs.
type Store interface {
	Client() *ent.Client
	Tx(ctx context.Context, fn func(tx *ent.Tx) error) error
	Read(ctx context.Context, fn func(tx *ent.Tx) error) error
	Recovery(ctx context.Context) (*store.Recovery, error)
}

// Options configures a Service. Zero values pick production defaults.
type Options struct {
	// Clock defaults to the wall clock.
	Clock quartz.Clock
	// LookupEnv reads INTEROP_HANDOFF_TOKEN_BUDGET and
	// INTEROP_ALLOW_VERIFICATION; defaults to os.LookupEnv.
	LookupEnv LookupEnv
	// Environ is the environment verification commands inherit (after
	// credential scrubbing); defaults to os.Environ.
	Environ func() []string
	// Sessions resolves session workspaces; nil means none are known.
	Sessions SessionLookup
	// Reviews gives request_review native diffs, workspaces and sends;
	// nil makes request_review refuse with the reason.
	Reviews ReviewProviders
	// VerifyTimeout bounds each verification command (default 5 minutes).
	VerifyTimeout time.Duration
	// KillGrace is the wait between SIGTERM and SIGKILL (default 250 ms).
	KillGrace time.Duration
	// OutputCap bounds captured stdout and stderr per command (default 64 KiB).
	OutputCap int
	// Tokens counts o200k tokens; defaults to NewO200k.
	Tokens TokenCounter
}

// Verification defaults (upstream 0.3.x).
const (
	DefaultVerifyTimeout = 5 * time.Minute
	DefaultKillGrace     = 250 * time.Millisecond
	DefaultOutputCap     = 64 << 10
)

// Service implements the coordination tools over a store.
type Service struct {
	st       Store
	clock    quartz.Clock
	env      LookupEnv
	environ  func() []string
	sessions SessionLookup
	reviews  ReviewProviders
	tokens   TokenCounter
	ids      *idSource
	verify   verify.Limits
	// directSQL runs list_work_items' statements on the transaction
	// itself (direct.go): set on SQLite, when the store reports it.
	// PostgreSQL's store transactions do not expose QueryContext, and a
	// store that reports no dialect keeps ent's path.
	directSQL bool
}

// New returns a Service over st.
func New(st Store, o Options) *Service {
	s := &Service{
		st:       st,
		clock:    o.Clock,
		env:      o.LookupEnv,
		environ:  o.Environ,
		sessions: o.Sessions,
		reviews:  o.Reviews,
		tokens:   o.Tokens,
		ids:      newIDSource(),
		verify:   verify.Limits{Timeout: o.VerifyTimeout, KillGrace: o.KillGrace, OutputCap: o.OutputCap},
	}
	if d, ok := st.(interface{ Dialect() string }); ok && d.Dialect() == dialect.SQLite {
		s.directSQL = true
	}
	if s.clock == nil {
		s.clock = quartz.NewReal()
	}
	s.verify.Clock = s.clock
	if s.env == nil {
		s.env = os.LookupEnv
	}
	if s.environ == nil {
		s.environ = os.Environ
	}
	if s.tokens == nil {
		s.tokens = NewO200k()
	}
	if s.verify.Timeout <= 0 {
		s.verify.Timeout = DefaultVerifyTimeout
	}
	if s.verify.KillGrace <= 0 {
		s.verify.KillGrace = DefaultKillGrace
	}
	if s.verify.OutputCap <= 0 {
		s.verify.OutputCap = DefaultOutputCap
	}
	return s
}

// now is the service time: UTC, millisecond precision (what upstream's
// ISO timestamps carry), so a value read back equals the value written.
func (s *Service) now() time.Time { return s.clock.Now().UTC().Truncate(time.Millisecond) }

// Timestamp formats t as upstream does (Date.toISOString: UTC, milliseconds).
func Timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
