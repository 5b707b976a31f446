package claims

import (
	"context"
	"time"

	"github.com/coder/quartz"
	"github.com/google/uuid"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/ent"
)

// Kind is what a claim covers.
type Kind string

// Claim kinds.
const (
	KindFile      Kind = "file"
	KindDirectory Kind = "directory"
	KindInterface Kind = "interface"
	KindWorkspace Kind = "workspace"
)

// Mode says whether a claim excludes other claims.
type Mode string

// Claim modes. Two shared_read claims never conflict.
const (
	ModeExclusive  Mode = "exclusive"
	ModeSharedRead Mode = "shared_read"
)

// Status is a claim's state as reported to clients.
type Status string

// Claim states. The store records active and released; expired is derived
// when an active claim's lease has ended.
const (
	StatusActive   Status = "active"
	StatusReleased Status = "released"
	StatusExpired  Status = "expired"
)

// TTL bounds in seconds.
const (
	MinTTLSeconds     = limits.AcquireClaimTTLSecondsMin
	MaxTTLSeconds     = limits.AcquireClaimTTLSecondsMax
	DefaultTTLSeconds = limits.AcquireClaimTTLSecondsDefault
	// MaxResourceLen is the longest resource accepted, in characters.
	MaxResourceLen = limits.AcquireClaimResourceMaxLen
)

// Claim is a claim as clients see it (upstream 0.3.x field names).
type Claim struct {
	ID         string     `json:"id"`
	WorkID     string     `json:"workId"`
	SessionID  string     `json:"sessionId"`
	Resource   string     `json:"resource"`
	Kind       Kind       `json:"kind"`
	Mode       Mode       `json:"mode"`
	Status     Status     `json:"status"`
	AcquiredAt time.Time  `json:"acquiredAt"`
	ExpiresAt  time.Time  `json:"expiresAt"`
	ReleasedAt *time.Time `json:"releasedAt,omitempty"`
}

// Store is the part of *store.Store the service needs: the ent client and
// one write transaction (BEGIN IMMEDIATE, so check-and-insert is atomic
// across processes).
type Store interface {
	Client() *ent.Client
	Tx(ctx context.Context, fn func(tx *ent.Tx) error) error
}

// TxFunc runs fn in one write transaction and commits when fn returns nil.
type TxFunc func(ctx context.Context, fn func(tx *ent.Tx) error) error

// Service records and checks claims.
type Service struct {
	client *ent.Client
	clock  quartz.Clock
	tx     TxFunc
	newID  func() string
}

// Option configures a Service.
type Option func(*Service)

// WithClock sets the clock (default: the wall clock). Tests inject a fake;
// nothing in this package reads the wall clock directly.
func WithClock(c quartz.Clock) Option { return func(s *Service) { s.clock = c } }

// WithIDs sets the generator of claim IDs (default: "claim_<uuid>").
func WithIDs(newID func() string) Option { return func(s *Service) { s.newID = newID } }

// New returns a Service over the store.
func New(st Store, opts ...Option) *Service {
	s := &Service{
		client: st.Client(),
		clock:  quartz.NewReal(),
		tx:     st.Tx,
		newID:  func() string { return "claim_" + uuid.NewString() },
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// now is the service time, in UTC at millisecond precision (what the store
// keeps), so a value read back compares equal to the value written.
func (s *Service) now() time.Time {
	return s.clock.Now().UTC().Truncate(time.Millisecond)
}
