package conversations

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/agent-interop/runtime/ent"
)

// Limits and timings (0.3.x values).
const (
	// MaxMessagesPerConversation is how many messages a conversation
	// retains; older ones are trimmed.
	MaxMessagesPerConversation = 500
	// MaxTitleLen is the longest stored title, in characters.
	MaxTitleLen = 300
	// MaxTextLen is the longest message text, in characters.
	MaxTextLen = 100000
	// MaxKeyLen is the longest idempotency key, in characters.
	MaxKeyLen = 200
	// DefaultReadLimit and MaxReadLimit bound a read page.
	DefaultReadLimit = 100
	MaxReadLimit     = 100
	// LeaseTTL is how long a dispatch lease lasts without renewal.
	LeaseTTL = 120 * time.Second
	// RenewEvery is how often an in-flight dispatch renews its lease.
	RenewEvery = 30 * time.Second
)

// Clock tells the time. Tests inject a fake; nothing in this package reads
// the wall clock directly (the lease-renewal ticker only paces renewals;
// the lease times themselves come from the Clock).
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Store is the part of *store.Store the service needs: the ent client, one
// write transaction (BEGIN IMMEDIATE) and one read snapshot.
type Store interface {
	Client() *ent.Client
	Tx(ctx context.Context, fn func(tx *ent.Tx) error) error
	Read(ctx context.Context, fn func(tx *ent.Tx) error) error
}

// TxFunc runs fn in one transaction.
type TxFunc func(ctx context.Context, fn func(tx *ent.Tx) error) error

// Service records conversations and delivers their messages.
type Service struct {
	client     *ent.Client
	dispatcher Dispatcher
	clock      Clock
	tx         TxFunc
	read       TxFunc
	newID      func(prefix string) string
	renewEvery time.Duration
	leaseTTL   time.Duration

	mu       sync.Mutex
	inflight map[string]struct{} // message IDs this process is dispatching
}

// Option configures a Service.
type Option func(*Service)

// WithClock sets the clock (default: the system clock).
func WithClock(c Clock) Option { return func(s *Service) { s.clock = c } }

// WithIDs sets the ID generator; it receives the prefix ("conversation",
// "message", "dispatch", "outbound") and returns a complete ID
// (default "<prefix>_<uuid>").
func WithIDs(newID func(prefix string) string) Option { return func(s *Service) { s.newID = newID } }

// WithLease sets the lease duration and renewal period (defaults
// [LeaseTTL], [RenewEvery]); tests shorten the renewal period.
func WithLease(ttl, renewEvery time.Duration) Option {
	return func(s *Service) { s.leaseTTL, s.renewEvery = ttl, renewEvery }
}

// New returns a Service over the store that delivers through d.
func New(st Store, d Dispatcher, opts ...Option) *Service {
	s := &Service{
		client:     st.Client(),
		tx:         st.Tx,
		read:       st.Read,
		dispatcher: d,
		clock:      systemClock{},
		newID:      func(prefix string) string { return prefix + "_" + uuid.NewString() },
		renewEvery: RenewEvery,
		leaseTTL:   LeaseTTL,
		inflight:   map[string]struct{}{},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// now is the service time in UTC at millisecond precision (what the store
// keeps), so values read back compare equal to values written.
func (s *Service) now() time.Time {
	return s.clock.Now().UTC().Truncate(time.Millisecond)
}

func (s *Service) markInflight(id string) {
	s.mu.Lock()
	s.inflight[id] = struct{}{}
	s.mu.Unlock()
}

func (s *Service) clearInflight(id string) {
	s.mu.Lock()
	delete(s.inflight, id)
	s.mu.Unlock()
}

func (s *Service) isInflight(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.inflight[id]
	return ok
}
