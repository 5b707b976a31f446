package workflow

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/evidence"
	"github.com/agent-interop/runtime/ent/review"
)

// RecordReviewInput is record_review's argument.
type RecordReviewInput struct {
	WorkID             string
	SubjectEvidenceIDs []string
	ReviewerSessionID  string
	Independence       Independence
	Findings           []Finding
	Verdict            string // approve|changes_requested|blocked
}

// ProvenanceAgentClaim is the only provenance a recorded review has: the
// runtime did not observe the review, the caller asserts it.
const ProvenanceAgentClaim = "agent_claim"

// RecordReview stores a caller-submitted review and, in the same
// transaction, an evidence record of kind review with trust agent_claim
// (never provider_observed, upstream AI-R1) whose data is the review.
func (s *Service) RecordReview(ctx context.Context, in RecordReviewInput) (Review, error) {
	r, err := validateReview(in)
	if err != nil {
		return Review{}, err
	}
	now := s.now()
	r.ID = randomID("review")
	r.Provenance = ProvenanceAgentClaim
	r.CreatedAt = Timestamp(now)
	adapter, _, _ := strings.Cut(r.ReviewerSessionID, ":")
	ev, err := s.prepareEvidence(AddEvidenceInput{
		WorkID:    &r.WorkID,
		SessionID: &r.ReviewerSessionID,
		Kind:      string(evidence.KindReview),
		Trust:     string(evidence.TrustAgentClaim),
		Source:    EvidenceSource{Adapter: adapter, Protocol: "caller submission"},
		Summary:   "Caller-submitted review verdict " + r.Verdict + " (unverified provenance)",
		Data:      r,
	})
	if err != nil {
		return Review{}, err
	}
	err = s.st.Tx(ctx, func(tx *ent.Tx) error {
		if err := requireEvidence(ctx, tx, r.SubjectEvidenceIDs); err != nil {
			return err
		}
		e, err := s.insertEvidence(ctx, tx, ev, now) // checks the work exists
		if err != nil {
			return err
		}
		r.EvidenceID = e.ID
		err = tx.Review.Create().
			SetID(r.ID).
			SetWorkID(r.WorkID).
			SetSubjectEvidenceIds(r.SubjectEvidenceIDs).
			SetReviewerSessionID(r.ReviewerSessionID).
			SetIndependence(r.Independence).
			SetFindings(r.Findings).
			SetVerdict(review.Verdict(r.Verdict)).
			SetProvenance(review.ProvenanceAgentClaim).
			SetEvidenceID(e.ID).
			SetCreatedAt(now).
			Exec(ctx)
		if err != nil {
			return wrapStore("create review", err)
		}
		return nil
	})
	if err != nil {
		return Review{}, err
	}
	return r, nil
}

func validateReview(in RecordReviewInput) (Review, error) {
	var r Review
	var err error
	if r.WorkID, err = requiredText("workId", in.WorkID, limits.RecordReviewWorkIDMaxLen); err != nil {
		return r, err
	}
	if r.SubjectEvidenceIDs, err = idList("subjectEvidenceIds", in.SubjectEvidenceIDs, limits.RecordReviewSubjectEvidenceIdsMaxItems, limits.RecordReviewSubjectEvidenceIdsItemMaxLen); err != nil {
		return r, err
	}
	if r.ReviewerSessionID, err = requiredText("reviewerSessionId", in.ReviewerSessionID, limits.RecordReviewReviewerSessionIDMaxLen); err != nil {
		return r, err
	}
	if review.VerdictValidator(review.Verdict(in.Verdict)) != nil {
		return r, invalid("Invalid review verdict %q; expected approve, changes_requested or blocked", in.Verdict)
	}
	r.Verdict = in.Verdict
	r.Independence = in.Independence
	if len(in.Findings) > limits.RecordReviewFindingsMaxItems {
		return r, invalid("findings accepts at most %d entries; received %d", limits.RecordReviewFindingsMaxItems, len(in.Findings))
	}
	r.Findings = make([]Finding, 0, len(in.Findings))
	for i, f := range in.Findings {
		switch f.Severity {
		case "blocking", "major", "minor", "note":
		default:
			return r, invalid("Invalid findings[%d].severity %q; expected blocking, major, minor or note", i, f.Severity)
		}
		if f.ID, err = requiredText(indexed("findings", i, "id"), f.ID, limits.RecordReviewFindingsItemIDMaxLen); err != nil {
			return r, err
		}
		if f.Title, err = requiredText(indexed("findings", i, "title"), f.Title, limits.RecordReviewFindingsItemTitleMaxLen); err != nil {
			return r, err
		}
		if f.Detail, err = requiredText(indexed("findings", i, "detail"), f.Detail, limits.RecordReviewFindingsItemDetailMaxLen); err != nil {
			return r, err
		}
		if f.File = strings.TrimSpace(f.File); utf8.RuneCountInString(f.File) > limits.RecordReviewFindingsItemFileMaxLen {
			return r, invalid("findings[%d].file exceeds %d characters", i, limits.RecordReviewFindingsItemFileMaxLen)
		}
		if f.Line != nil && *f.Line < 0 {
			return r, invalid("findings[%d].line must not be negative", i)
		}
		r.Findings = append(r.Findings, f)
	}
	return r, nil
}

func indexed(list string, i int, field string) string {
	return list + "[" + itoa(i) + "]." + field
}
