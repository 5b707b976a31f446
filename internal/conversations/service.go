package conversations

import (
	"context"
	"time"

	"github.com/coder/quartz"
	"github.com/google/uuid"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/internal/delivery"
)

// Limits (0.3.x values).
const (
	// MaxMessagesPerConversation is how many messages a conversation
	// retains; older ones are trimmed.
	MaxMessagesPerConversation = 500
	// MaxTitleLen is the longest stored title, in characters.
	MaxTitleLen = limits.CreateConversationTitleMaxLen
	// MaxTextLen is the longest message text, in characters.
	MaxTextLen = limits.SendConversationMessageTextMaxLen
	// MaxKeyLen is the longest idempotency key, in characters.
	MaxKeyLen = limits.SendConversationMessageIdempotencyKeyMaxLen
	// DefaultReadLimit (the 0.3.x conversation_read default, for callers
	// that pass none) and MaxReadLimit bound a read page.
	DefaultReadLimit = 100
	MaxReadLimit     = limits.ReadConversationLimitMax
)

// Store is the part of *store.Store the service needs: the ent client, one
// write transaction (BEGIN IMMEDIATE) and one read snapshot.
type Store interface {
	Client() *ent.Client
	Tx(ctx context.Context, fn func(tx *ent.Tx) error) error
	Read(ctx context.Context, fn func(tx *ent.Tx) error) error
}

// TxFunc runs fn in one transaction.
type TxFunc func(ctx context.Context, fn func(tx *ent.Tx) error) error

// Service records conversations and delivers their messages through the
// delivery ledger.
type Service struct {
	client *ent.Client
	ledger *delivery.Service
	clock  quartz.Clock
	tx     TxFunc
	read   TxFunc
	newID  func(prefix string) string
	budget Budget
	// retain is how many messages a conversation keeps:
	// MaxMessagesPerConversation, lowered only by the package's tests
	// (export_test.go) to show trimming without sending 500 messages.
	retain int
}

// Option configures a Service.
type Option func(*Service)

// WithClock sets the clock (default: the wall clock). Tests inject a fake;
// nothing in this package reads the wall clock directly.
func WithClock(c quartz.Clock) Option { return func(s *Service) { s.clock = c } }

// WithIDs sets the ID generator; it receives the prefix ("conversation",
// "message", "outbound") and returns a complete ID (default
// "<prefix>_<uuid>").
func WithIDs(newID func(prefix string) string) Option { return func(s *Service) { s.newID = newID } }

// New returns a Service over the store that delivers through the ledger
// (the delivery service over the same store).
func New(st Store, ledger *delivery.Service, opts ...Option) *Service {
	s := &Service{
		client: st.Client(),
		tx:     st.Tx,
		read:   st.Read,
		ledger: ledger,
		clock:  quartz.NewReal(),
		newID:  func(prefix string) string { return prefix + "_" + uuid.NewString() },
		budget: DefaultBudget,
		retain: MaxMessagesPerConversation,
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
