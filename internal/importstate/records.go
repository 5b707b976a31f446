package importstate

import (
	"encoding/json"
	"time"

	"github.com/agent-interop/runtime/ent/schema"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/delivery"
)

// The records an import writes: the 0.3.x records checked and mapped onto
// the store's rows. Each keeps where it came from, for messages.

// origin is where a record was read.
type origin struct {
	src  *source
	path string // "works[2]"
}

// at is "state.json:12:5" for the record's field (or the record).
func (o origin) at(field string) string {
	p := o.path
	if field != "" {
		p += "." + field
	}
	e := o.src.field(p, "")
	return e.File + ":" + itoa(e.Line) + ":" + itoa(e.Column)
}

type workRec struct {
	origin
	ID                  string
	Objective           string
	AcceptanceCriteria  []string
	Risks               []string
	UnresolvedQuestions []string
	SourceSession       *string
	DestinationSession  *string
	Status              string
	ChangedFiles        []string
	DependsOn           []string // sorted, unique
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

type evidenceRec struct {
	origin
	ID          string
	WorkID      *string
	SessionID   *string
	Kind        string
	Trust       string
	Source      schema.EvidenceSource
	CapturedAt  time.Time
	Summary     string
	Data        string // canonical JSON
	ContentHash string // of Data
}

type handoffRec struct {
	origin
	ID                  string
	WorkID              string
	SourceSession       string
	DestinationSession  *string
	Objective           string
	AcceptanceCriteria  []string
	EvidenceIDs         []string
	ChangedFiles        []string
	Risks               []string
	UnresolvedQuestions []string
	AuthorityBoundaries []string
	ContinuationState   *string
	LatestValidation    *schema.HandoffValidation
	Assumptions         []string
	RollbackNotes       []string
	NextAction          *string
	RepositoryRevision  *string
	Status              string
	ContextTokens       int
	TokenBudget         int
	OmittedFields       []string
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

type reviewRec struct {
	origin
	ID                 string
	WorkID             string
	SubjectEvidenceIDs []string
	ReviewerSessionID  string
	Independence       schema.ReviewIndependence
	Findings           []schema.ReviewFinding
	Verdict            string
	EvidenceID         *string
	CreatedAt          time.Time
}

type claimRec struct {
	origin
	Claim claims.Claim // Status active or released
}

type conversationRec struct {
	origin
	ID           string
	Title        string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	LastSequence int64
}

type participantRec struct {
	origin
	ConversationID string
	ParticipantID  string
	Provider       string
	NativeID       string
	WorkspaceID    *string
	Role           *string
	JoinedAt       time.Time
}

type messageRec struct {
	origin
	ID             string
	ConversationID string
	Sequence       int64
	Sender         string
	Recipient      string
	Text           string
	ReplyTo        *string
	CreatedAt      time.Time
	IdempotencyKey string
	// Op is the delivery operation that carries the message (the 0.3.x
	// receipt); inFlight says it was imported while in flight.
	Op       delivery.ImportedOperation
	InFlight bool
}

// Snapshot is everything two 0.3.x files hold, checked and mapped: what an
// import writes, in dependency order.
type Snapshot struct {
	Files         []FileSummary
	Works         []workRec
	Evidence      []evidenceRec
	Handoffs      []handoffRec
	Reviews       []reviewRec
	Claims        []claimRec
	Conversations []conversationRec
	Participants  []participantRec
	Messages      []messageRec
	// Notes are adjustments made while mapping (a recomputed hash, a
	// normalized resource, a derived sequence, ...).
	Notes []string
	// rehashed counts evidence whose 0.3.x hash (of the data as written)
	// differs from the store's hash of the canonical form.
	rehashed int
}

// note records an adjustment at a position.
func (s *Snapshot) note(src *source, path, format string, args ...any) {
	e := src.field(path, format, args...)
	s.Notes = append(s.Notes, e.Error())
}

// FileSummary says what was read from one input file.
type FileSummary struct {
	Role  string `json:"role"` // "state" or "conversations"
	Path  string `json:"path"`
	Found bool   `json:"found"`
	// Ignored lists the top-level members that are not imported, with the
	// number of entries they hold ("sessions (3 entries)").
	Ignored []string `json:"ignored,omitempty"`
}

// rawJSON keeps a JSON value as it is when marshalled (nil stays absent).
func rawJSON(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return json.RawMessage(b)
}
