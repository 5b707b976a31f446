package workflow

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/evidence"
	"github.com/agent-interop/runtime/ent/workitem"
	"github.com/agent-interop/runtime/internal/paging"
)

// AddEvidenceInput describes one evidence record. Data is any value
// encoding/json can marshal (a json.RawMessage is taken as is); it is
// stored in canonical form (see [Canonicalize]) and hashed.
type AddEvidenceInput struct {
	WorkID    *string
	SessionID *string
	Kind      string // diff|file_change|command|test|build|review|artifact|approval|lint|typecheck|session
	Trust     string // agent_claim|provider_observed|runtime_observed|repository_verified|external_verified|human_accepted
	Source    EvidenceSource
	Summary   string
	Data      any
}

// AddEvidence stores one evidence record; with a work ID it also bumps the
// work's updatedAt (the work's evidenceIds are derived from the records).
func (s *Service) AddEvidence(ctx context.Context, in AddEvidenceInput) (Evidence, error) {
	rec, err := s.prepareEvidence(in)
	if err != nil {
		return Evidence{}, err
	}
	now := s.now()
	var out Evidence
	err = s.st.Tx(ctx, func(tx *ent.Tx) error {
		e, err := s.insertEvidence(ctx, tx, rec, now)
		if err != nil {
			return err
		}
		out = toEvidence(e)
		return nil
	})
	return out, err
}

// AddEvidenceBatch stores several records in one transaction (all or none).
func (s *Service) AddEvidenceBatch(ctx context.Context, in []AddEvidenceInput) ([]Evidence, error) {
	recs := make([]evidenceRecord, len(in))
	for i, e := range in {
		r, err := s.prepareEvidence(e)
		if err != nil {
			return nil, err
		}
		recs[i] = r
	}
	now := s.now()
	out := make([]Evidence, 0, len(in))
	err := s.st.Tx(ctx, func(tx *ent.Tx) error {
		out = out[:0] // a team store may run the transaction again
		rows, err := s.insertEvidenceBulk(ctx, tx, recs, now)
		if err != nil {
			return err
		}
		for _, e := range rows {
			out = append(out, toEvidence(e))
		}
		return nil
	})
	return out, err
}

// evidenceRecord is a validated AddEvidenceInput.
type evidenceRecord struct {
	workID, sessionID *string
	kind              evidence.Kind
	trust             evidence.Trust
	source            EvidenceSource
	summary           string
	data              []byte // canonical
	hash              string
}

func (s *Service) prepareEvidence(in AddEvidenceInput) (evidenceRecord, error) {
	var r evidenceRecord
	var err error
	if r.workID, err = optionalText("workId", in.WorkID, maxEvidenceWork); err != nil {
		return r, err
	}
	if r.sessionID, err = optionalText("sessionId", in.SessionID, maxEvidenceSession); err != nil {
		return r, err
	}
	r.kind = evidence.Kind(in.Kind)
	if evidence.KindValidator(r.kind) != nil {
		return r, invalid("Invalid evidence kind %q", in.Kind)
	}
	r.trust = evidence.Trust(in.Trust)
	if evidence.TrustValidator(r.trust) != nil {
		return r, invalid("Invalid evidence trust %q", in.Trust)
	}
	r.source = in.Source
	if r.source.Adapter = strings.TrimSpace(r.source.Adapter); r.source.Adapter == "" {
		return r, invalid("evidence source.adapter must not be blank")
	}
	if r.summary, err = requiredText("summary", in.Summary, maxSummary); err != nil {
		return r, err
	}
	if raw, ok := in.Data.(json.RawMessage); ok {
		r.data, err = Canonicalize(raw)
	} else {
		r.data, err = CanonicalJSON(in.Data)
	}
	if err != nil {
		return r, invalid("%s", err.Error())
	}
	if len(r.data) > maxEvidenceRaw {
		return r, invalid("Evidence data exceeds %d bytes (%d in canonical form)", maxEvidenceRaw, len(r.data))
	}
	r.hash = ContentHash(r.data)
	return r, nil
}

func (s *Service) createEvidence(tx *ent.Tx, r evidenceRecord, now time.Time) *ent.EvidenceCreate {
	return tx.Evidence.Create().
		SetID(s.ids.next("evidence", now)).
		SetNillableWorkID(r.workID).
		SetNillableSessionID(r.sessionID).
		SetKind(r.kind).
		SetTrust(r.trust).
		SetSource(r.source).
		SetCapturedAt(now).
		SetSummary(r.summary).
		SetData(string(r.data)).
		SetDataBytes(len(r.data)).
		SetContentHash(r.hash)
}

// insertEvidence stores one validated record inside tx.
func (s *Service) insertEvidence(ctx context.Context, tx *ent.Tx, r evidenceRecord, now time.Time) (*ent.Evidence, error) {
	rows, err := s.insertEvidenceBulk(ctx, tx, []evidenceRecord{r}, now)
	if err != nil {
		return nil, err
	}
	return rows[0], nil
}

// insertEvidenceBulk stores validated records inside tx, checking every
// referenced work exists and bumping those works' updatedAt. The existence
// check is the UPDATE's row count (one statement instead of two).
func (s *Service) insertEvidenceBulk(ctx context.Context, tx *ent.Tx, recs []evidenceRecord, now time.Time) ([]*ent.Evidence, error) {
	var works []string
	seen := map[string]bool{}
	for _, r := range recs {
		if r.workID != nil && !seen[*r.workID] {
			seen[*r.workID] = true
			works = append(works, *r.workID)
		}
	}
	if len(works) > 0 {
		n, err := tx.WorkItem.Update().Where(workitem.IDIn(works...)).SetUpdatedAt(now).Save(ctx)
		if err != nil {
			return nil, wrapStore("touch work", err)
		}
		if n != len(works) {
			if err := requireWorks(ctx, tx, works, ""); err != nil {
				return nil, err
			}
		}
	}
	builders := make([]*ent.EvidenceCreate, len(recs))
	for i, r := range recs {
		builders[i] = s.createEvidence(tx, r, now)
	}
	rows, err := tx.Evidence.CreateBulk(builders...).Save(ctx)
	if err != nil {
		return nil, wrapStore("store evidence", err)
	}
	return rows, nil
}

// ListEvidenceInput is list_evidence's argument.
type ListEvidenceInput struct {
	// WorkID keeps one work's records (the work must exist).
	WorkID *string
	// Session keeps the records of one session.
	Session string
	// Limit is the page size (0 means DefaultListLimit).
	Limit int64
	// Cursor is a nextCursor of an earlier page of the same filter.
	Cursor string
}

// ListEvidence returns one page of evidence metadata (no data, plus
// dataBytes), newest first, keyset-paged on (captured_at, id).
func (s *Service) ListEvidence(ctx context.Context, in ListEvidenceInput) (EvidenceList, error) {
	limit, err := paging.Limit(toolListEvidence, in.Limit, DefaultListLimit, MaxPageLimit)
	if err != nil {
		return EvidenceList{}, err
	}
	workID := ""
	if in.WorkID != nil {
		workID = *in.WorkID
	}
	f := paging.F("workId", workID, "session", in.Session)
	after, err := decodeTimeKey(toolListEvidence, f, in.Cursor)
	if err != nil {
		return EvidenceList{}, err
	}
	out := EvidenceList{Evidence: []EvidenceMeta{}, filter: f}
	err = s.st.Read(ctx, func(tx *ent.Tx) error {
		q := tx.Evidence.Query()
		if in.WorkID != nil {
			if err := requireWorks(ctx, tx, []string{workID}, ""); err != nil {
				return err
			}
			q = q.Where(evidence.WorkID(workID))
		}
		if in.Session != "" {
			q = q.Where(evidence.SessionID(in.Session))
		}
		if after.set() {
			q = q.Where(keysetBefore(evidence.FieldCapturedAt, evidence.FieldID, after))
		}
		rows, err := q.Order(evidenceNewestFirst()...).Limit(limit + 1).Select(evidenceMetaFields()...).All(ctx)
		if err != nil {
			return wrapStore("list evidence", err)
		}
		more := len(rows) > limit
		for _, e := range rows[:min(len(rows), limit)] {
			out.Evidence = append(out.Evidence, toEvidenceMeta(e))
		}
		if more {
			last := out.Evidence[len(out.Evidence)-1]
			out.NextCursor = paging.Encode(toolListEvidence, f, last.CapturedAt, last.ID)
		}
		return nil
	})
	return out, err
}

// GetEvidence returns one full record, data and contentHash included.
func (s *Service) GetEvidence(ctx context.Context, evidenceID string) (Evidence, error) {
	id := strings.TrimSpace(evidenceID)
	if id == "" {
		return Evidence{}, invalid("evidenceId must not be blank")
	}
	e, err := s.st.Client().Evidence.Get(ctx, id)
	if ent.IsNotFound(err) {
		return Evidence{}, unknownEvidence(id)
	}
	if err != nil {
		return Evidence{}, wrapStore("read evidence "+id, err)
	}
	return toEvidence(e), nil
}

// requireEvidence fails with "Unknown evidence <id>" for the first ID that
// does not exist.
func requireEvidence(ctx context.Context, tx *ent.Tx, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	found, err := tx.Evidence.Query().Where(evidence.IDIn(ids...)).IDs(ctx)
	if err != nil {
		return wrapStore("check evidence ids", err)
	}
	have := make(map[string]bool, len(found))
	for _, id := range found {
		have[id] = true
	}
	for _, id := range ids {
		if !have[id] {
			return unknownEvidence(id)
		}
	}
	return nil
}
