package importstate

import "encoding/json"

// The 0.3.x file shapes (../shared/reference/upstream-0.3.md §4.1-4.12, as
// upstream wrote them with JSON.stringify). Unknown members are ignored, as
// upstream's reader ignored them; a member of the wrong JSON type is refused.
// Optional members that upstream added over time (dependsOn, claims, the
// handoff continuation fields, message sequences, idempotency keys, dispatch
// leases, receipts, lastSequence, version) may be missing.

// stateFile is ~/.agent-interop-runtime/state.json.
type stateFile struct {
	Works    []work03     `json:"works"`
	Evidence []evidence03 `json:"evidence"`
	Handoffs []handoff03  `json:"handoffs"`
	Reviews  []review03   `json:"reviews"`
	Claims   []claim03    `json:"claims"`
}

// stateKeys are the members of state.json that are imported.
var stateKeys = []string{"works", "evidence", "handoffs", "reviews", "claims"}

type work03 struct {
	ID                  string   `json:"id"`
	Objective           string   `json:"objective"`
	AcceptanceCriteria  []string `json:"acceptanceCriteria"`
	SourceSession       *string  `json:"sourceSession"`
	DestinationSession  *string  `json:"destinationSession"`
	Status              string   `json:"status"`
	ChangedFiles        []string `json:"changedFiles"`
	Risks               []string `json:"risks"`
	UnresolvedQuestions []string `json:"unresolvedQuestions"`
	EvidenceIDs         []string `json:"evidenceIds"`
	DependsOn           []string `json:"dependsOn"`
	CreatedAt           string   `json:"createdAt"`
	UpdatedAt           string   `json:"updatedAt"`
}

type evidenceSource03 struct {
	Adapter       string `json:"adapter"`
	Protocol      string `json:"protocol"`
	NativeEventID string `json:"nativeEventId"`
}

type evidence03 struct {
	ID          string           `json:"id"`
	WorkID      *string          `json:"workId"`
	SessionID   *string          `json:"sessionId"`
	Kind        string           `json:"kind"`
	Trust       string           `json:"trust"`
	Source      evidenceSource03 `json:"source"`
	CapturedAt  string           `json:"capturedAt"`
	Summary     string           `json:"summary"`
	Data        json.RawMessage  `json:"data"`
	ContentHash string           `json:"contentHash"`
}

type validation03 struct {
	Label      string `json:"label"`
	Command    string `json:"command"`
	Outcome    string `json:"outcome"`
	ObservedAt string `json:"observedAt"`
}

type handoff03 struct {
	ID                  string        `json:"id"`
	WorkID              string        `json:"workId"`
	SourceSession       string        `json:"sourceSession"`
	DestinationSession  *string       `json:"destinationSession"`
	Objective           string        `json:"objective"`
	AcceptanceCriteria  []string      `json:"acceptanceCriteria"`
	EvidenceIDs         []string      `json:"evidenceIds"`
	ChangedFiles        []string      `json:"changedFiles"`
	Risks               []string      `json:"risks"`
	UnresolvedQuestions []string      `json:"unresolvedQuestions"`
	AuthorityBoundaries []string      `json:"authorityBoundaries"`
	ContinuationState   *string       `json:"continuationState"`
	LatestValidation    *validation03 `json:"latestValidation"`
	Assumptions         []string      `json:"assumptions"`
	RollbackNotes       []string      `json:"rollbackNotes"`
	NextAction          *string       `json:"nextAction"`
	RepositoryRevision  *string       `json:"repositoryRevision"`
	Status              string        `json:"status"`
	ContextTokens       *int          `json:"contextTokens"`
	TokenBudget         *int          `json:"tokenBudget"`
	OmittedFields       []string      `json:"omittedFields"`
	CreatedAt           string        `json:"createdAt"`
	UpdatedAt           string        `json:"updatedAt"`
}

type independence03 struct {
	DifferentSession  bool `json:"differentSession"`
	DifferentProvider bool `json:"differentProvider"`
	FreshContext      bool `json:"freshContext"`
	WriteAccess       bool `json:"writeAccess"`
}

type finding03 struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Title    string `json:"title"`
	Detail   string `json:"detail"`
	File     string `json:"file"`
	Line     *int   `json:"line"`
}

type review03 struct {
	ID                 string         `json:"id"`
	WorkID             string         `json:"workId"`
	SubjectEvidenceIDs []string       `json:"subjectEvidenceIds"`
	ReviewerSessionID  string         `json:"reviewerSessionId"`
	Independence       independence03 `json:"independence"`
	Findings           []finding03    `json:"findings"`
	Verdict            string         `json:"verdict"`
	Provenance         string         `json:"provenance"`
	EvidenceID         *string        `json:"evidenceId"`
	CreatedAt          string         `json:"createdAt"`
}

type claim03 struct {
	ID         string  `json:"id"`
	WorkID     string  `json:"workId"`
	SessionID  string  `json:"sessionId"`
	Resource   string  `json:"resource"`
	Kind       string  `json:"kind"`
	Mode       string  `json:"mode"`
	Status     string  `json:"status"`
	AcquiredAt string  `json:"acquiredAt"`
	ExpiresAt  string  `json:"expiresAt"`
	ReleasedAt *string `json:"releasedAt"`
}

// conversationsFile is ~/.agent-interop-runtime/conversations.json.
type conversationsFile struct {
	Version       *int             `json:"version"`
	Conversations []conversation03 `json:"conversations"`
}

// conversationsKeys are the members of conversations.json that are read.
var conversationsKeys = []string{"version", "conversations"}

type conversation03 struct {
	ID           string          `json:"id"`
	Title        string          `json:"title"`
	Participants []participant03 `json:"participants"`
	Messages     []message03     `json:"messages"`
	CreatedAt    string          `json:"createdAt"`
	UpdatedAt    string          `json:"updatedAt"`
	LastSequence *int64          `json:"lastSequence"`
}

type participant03 struct {
	ID          string  `json:"id"`
	Provider    string  `json:"provider"`
	NativeID    string  `json:"nativeId"`
	WorkspaceID *string `json:"workspaceId"`
	Role        *string `json:"role"`
}

type lease03 struct {
	ID        string `json:"id"`
	StartedAt string `json:"startedAt"`
	ExpiresAt string `json:"expiresAt"`
}

type receipt03 struct {
	Provider      string          `json:"provider"`
	NativeID      string          `json:"nativeId"`
	Operation     string          `json:"operation"`
	Accepted      *bool           `json:"accepted"`
	Status        string          `json:"status"`
	ProviderState string          `json:"providerState"`
	Detail        json.RawMessage `json:"detail"`
}

type message03 struct {
	ID                string     `json:"id"`
	ConversationID    string     `json:"conversationId"`
	Sender            string     `json:"sender"`
	Recipient         string     `json:"recipient"`
	Text              string     `json:"text"`
	ReplyTo           *string    `json:"replyTo"`
	CreatedAt         string     `json:"createdAt"`
	Sequence          *int64     `json:"sequence"`
	Delivery          string     `json:"delivery"`
	DeliveryUnknownAt *string    `json:"deliveryUnknownAt"`
	IdempotencyKey    *string    `json:"idempotencyKey"`
	DispatchLease     *lease03   `json:"dispatchLease"`
	Receipt           *receipt03 `json:"receipt"`
}

// rawMessages re-reads conversations.json for the receipts and leases as
// upstream wrote them (kept verbatim in the imported operations).
type rawMessages struct {
	Conversations []struct {
		Messages []rawMessage `json:"messages"`
	} `json:"conversations"`
}

type rawMessage struct {
	Receipt       json.RawMessage `json:"receipt"`
	DispatchLease json.RawMessage `json:"dispatchLease"`
}
