package workflow

import (
	"encoding/json"

	"github.com/agent-interop/runtime/ent/schema"
	"github.com/agent-interop/runtime/internal/paging"
)

// Work is a work item (upstream 0.3.x shape).
type Work struct {
	ID                  string   `json:"id"`
	Objective           string   `json:"objective"`
	AcceptanceCriteria  []string `json:"acceptanceCriteria"`
	SourceSession       *string  `json:"sourceSession,omitempty"`
	DestinationSession  *string  `json:"destinationSession,omitempty"`
	Status              string   `json:"status"`
	ChangedFiles        []string `json:"changedFiles"`
	Risks               []string `json:"risks"`
	UnresolvedQuestions []string `json:"unresolvedQuestions"`
	EvidenceIDs         []string `json:"evidenceIds"`
	// EvidenceCount is set when evidenceIds lists only the newest
	// MaxEmbeddedEvidenceIDs of more records (list_evidence pages them).
	EvidenceCount int      `json:"evidenceCount,omitempty"`
	DependsOn     []string `json:"dependsOn,omitempty"`
	CreatedAt     string   `json:"createdAt"`
	UpdatedAt     string   `json:"updatedAt"`
}

// WorkPreview is a work item as list_work_items shows it: without the
// objective, criteria, risks and questions, plus a 200-character objective
// preview and the number of criteria.
type WorkPreview struct {
	ID                      string   `json:"id"`
	SourceSession           *string  `json:"sourceSession,omitempty"`
	DestinationSession      *string  `json:"destinationSession,omitempty"`
	Status                  string   `json:"status"`
	ChangedFiles            []string `json:"changedFiles"`
	EvidenceIDs             []string `json:"evidenceIds"`
	EvidenceCount           int      `json:"evidenceCount,omitempty"`
	DependsOn               []string `json:"dependsOn,omitempty"`
	CreatedAt               string   `json:"createdAt"`
	UpdatedAt               string   `json:"updatedAt"`
	ObjectivePreview        string   `json:"objectivePreview"`
	AcceptanceCriteriaCount int      `json:"acceptanceCriteriaCount"`
}

// WorkList is list_work_items' answer: one page, newest first, with the
// cursor of the next page while more exist.
type WorkList struct {
	Works      []WorkPreview `json:"works"`
	NextCursor string        `json:"nextCursor,omitempty"`

	filter paging.Filter
}

// PageLen implements paging.Cuttable.
func (l WorkList) PageLen() int { return len(l.Works) }

// CutPage implements paging.Cuttable.
func (l WorkList) CutPage(n int) any {
	last := l.Works[n-1]
	l.Works = l.Works[:n]
	l.NextCursor = workCursor(l.filter, last.UpdatedAt, last.ID)
	return l
}

// WorkDetail is get_work_item's answer: the work in full and a page of each
// kind of related record, newest first (evidence as metadata; get_evidence
// has the data). NextCursor pages the related records of all three kinds.
type WorkDetail struct {
	Work       Work             `json:"work"`
	Evidence   []EvidenceRecord `json:"evidence"`
	Handoffs   []Handoff        `json:"handoffs"`
	Reviews    []Review         `json:"reviews"`
	NextCursor string           `json:"nextCursor,omitempty"`

	workID string
	// more[i] reports records of kind i (evidence, handoffs, reviews)
	// beyond this page; after[i] is the cursor key this page started after.
	more  [3]bool
	after [3]string
}

// EvidenceRecord is evidence metadata and, in the 0.3.x work_get shape,
// the data too.
type EvidenceRecord struct {
	EvidenceMeta
	Data json.RawMessage `json:"data,omitempty"`
}

// EvidenceSource says where evidence came from.
type EvidenceSource = schema.EvidenceSource

// Evidence is a full evidence record.
type Evidence struct {
	ID          string          `json:"id"`
	WorkID      *string         `json:"workId,omitempty"`
	SessionID   *string         `json:"sessionId,omitempty"`
	Kind        string          `json:"kind"`
	Trust       string          `json:"trust"`
	Source      EvidenceSource  `json:"source"`
	CapturedAt  string          `json:"capturedAt"`
	Summary     string          `json:"summary"`
	Data        json.RawMessage `json:"data"`
	ContentHash string          `json:"contentHash"`
}

// EvidenceMeta is an evidence record without its data, plus the size of the
// data (list_evidence, the work graph).
type EvidenceMeta struct {
	ID          string         `json:"id"`
	WorkID      *string        `json:"workId,omitempty"`
	SessionID   *string        `json:"sessionId,omitempty"`
	Kind        string         `json:"kind"`
	Trust       string         `json:"trust"`
	Source      EvidenceSource `json:"source"`
	CapturedAt  string         `json:"capturedAt"`
	Summary     string         `json:"summary"`
	ContentHash string         `json:"contentHash"`
	DataBytes   int            `json:"dataBytes"`
}

// EvidenceList is list_evidence's answer: one page, newest first.
type EvidenceList struct {
	Evidence   []EvidenceMeta `json:"evidence"`
	NextCursor string         `json:"nextCursor,omitempty"`

	filter paging.Filter
}

// PageLen implements paging.Cuttable.
func (l EvidenceList) PageLen() int { return len(l.Evidence) }

// CutPage implements paging.Cuttable.
func (l EvidenceList) CutPage(n int) any {
	last := l.Evidence[n-1]
	l.Evidence = l.Evidence[:n]
	l.NextCursor = paging.Encode(toolListEvidence, l.filter, last.CapturedAt, last.ID)
	return l
}

// Validation is a handoff's latest validation.
type Validation = schema.HandoffValidation

// Handoff is the durable handoff record: every input field, including the
// ones its packet left out.
type Handoff struct {
	ID                  string      `json:"id"`
	WorkID              string      `json:"workId"`
	SourceSession       string      `json:"sourceSession"`
	DestinationSession  *string     `json:"destinationSession,omitempty"`
	Objective           string      `json:"objective"`
	AcceptanceCriteria  []string    `json:"acceptanceCriteria"`
	EvidenceIDs         []string    `json:"evidenceIds"`
	ChangedFiles        []string    `json:"changedFiles"`
	Risks               []string    `json:"risks"`
	UnresolvedQuestions []string    `json:"unresolvedQuestions"`
	AuthorityBoundaries []string    `json:"authorityBoundaries"`
	ContinuationState   *string     `json:"continuationState,omitempty"`
	LatestValidation    *Validation `json:"latestValidation,omitempty"`
	Assumptions         []string    `json:"assumptions,omitempty"`
	RollbackNotes       []string    `json:"rollbackNotes,omitempty"`
	NextAction          *string     `json:"nextAction,omitempty"`
	RepositoryRevision  *string     `json:"repositoryRevision,omitempty"`
	Status              string      `json:"status"`
	ContextTokens       int         `json:"contextTokens"`
	TokenBudget         int         `json:"tokenBudget"`
	OmittedFields       []string    `json:"omittedFields"`
	CreatedAt           string      `json:"createdAt"`
	UpdatedAt           string      `json:"updatedAt"`
}

// Independence is what a review's caller asserts about the reviewer.
type Independence = schema.ReviewIndependence

// Finding is one review finding.
type Finding = schema.ReviewFinding

// Review is a caller-submitted review. Provenance is always agent_claim.
type Review struct {
	ID                 string       `json:"id"`
	WorkID             string       `json:"workId"`
	SubjectEvidenceIDs []string     `json:"subjectEvidenceIds"`
	ReviewerSessionID  string       `json:"reviewerSessionId"`
	Independence       Independence `json:"independence"`
	Findings           []Finding    `json:"findings"`
	Verdict            string       `json:"verdict"`
	Provenance         string       `json:"provenance"`
	EvidenceID         string       `json:"evidenceId,omitempty"`
	CreatedAt          string       `json:"createdAt"`
}
