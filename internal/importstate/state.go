package importstate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"time"

	"github.com/agent-interop/runtime/ent/schema"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/workflow"
)

// Allowed values (ent/schema; 0.3.x used the same words).
var (
	workStatuses      = []string{"open", "in_progress", "blocked", "accepted", "rejected"}
	evidenceKinds     = []string{"diff", "file_change", "command", "test", "build", "review", "artifact", "approval", "lint", "typecheck", "session"}
	evidenceTrusts    = []string{"agent_claim", "provider_observed", "runtime_observed", "repository_verified", "external_verified", "human_accepted"}
	handoffStatuses   = []string{"created", "accepted", "applied", "verified", "completed", "blocked", "superseded"}
	continuations     = []string{"not_started", "in_progress", "needs_completion", "likely_complete", "existing_behavior_broken"}
	verdicts          = []string{"approve", "changes_requested", "blocked"}
	claimKinds        = []string{"file", "directory", "interface", "workspace"}
	claimModes        = []string{"exclusive", "shared_read"}
	claimStatuses     = []string{"active", "released", "expired"}
	defaultBudget     = 2000 // INTEROP_HANDOFF_TOKEN_BUDGET's default, 0.3.x and here
	provenanceAllowed = []string{"agent_claim"}
)

// parseState checks state.json and maps its records into snap.
func parseState(src *source, snap *Snapshot, now time.Time) error {
	var f stateFile
	if err := src.decode(&f); err != nil {
		return err
	}
	c := &checker{src: src}
	works, evidence := map[string]bool{}, map[string]bool{}
	for i, w := range f.Works {
		c.unique(works, index("works", i), "work", w.ID)
	}
	for i, e := range f.Evidence {
		c.unique(evidence, index("evidence", i), "evidence", e.ID)
	}
	// A work's evidenceIds are derived from the evidence records here; an
	// evidence record without a workId takes the one work listing it.
	listedBy := map[string][]string{}
	for i, w := range f.Works {
		p := index("works", i)
		for _, id := range c.refs(p+".evidenceIds", w.EvidenceIDs, evidence, "evidence") {
			listedBy[id] = append(listedBy[id], w.ID)
		}
	}
	for i, w := range f.Works {
		snap.Works = append(snap.Works, c.work(index("works", i), w, works))
	}
	checkCycles(c, snap.Works)
	for i, e := range f.Evidence {
		snap.Evidence = append(snap.Evidence, c.evidence(snap, index("evidence", i), e, works, listedBy[e.ID]))
	}
	seen := map[string]bool{}
	for i, h := range f.Handoffs {
		c.unique(seen, index("handoffs", i), "handoff", h.ID)
		snap.Handoffs = append(snap.Handoffs, c.handoff(snap, index("handoffs", i), h, works, evidence))
	}
	seen = map[string]bool{}
	reviewEvidence := reviewEvidenceByReview(f.Evidence)
	for i, r := range f.Reviews {
		c.unique(seen, index("reviews", i), "review", r.ID)
		snap.Reviews = append(snap.Reviews, c.review(index("reviews", i), r, works, evidence, reviewEvidence[r.ID]))
	}
	seen = map[string]bool{}
	for i, cl := range f.Claims {
		c.unique(seen, index("claims", i), "claim", cl.ID)
		snap.Claims = append(snap.Claims, c.claim(snap, index("claims", i), cl, works, now))
	}
	return c.err()
}

func (c *checker) work(p string, w work03, works map[string]bool) workRec {
	r := workRec{origin: origin{c.src, p}}
	r.ID = c.id(p+".id", w.ID)
	r.Objective = c.required(p+".objective", w.Objective, 0)
	const cw, ch = "create_work_item", "create_handoff"
	c.chars(p+".objective", w.Objective, cw, "objective")
	c.items(p+".acceptanceCriteria", w.AcceptanceCriteria, cw, "acceptanceCriteria")
	c.items(p+".risks", w.Risks, cw, "risks")
	c.items(p+".unresolvedQuestions", w.UnresolvedQuestions, cw, "unresolvedQuestions")
	c.items(p+".dependsOn", w.DependsOn, cw, "dependsOn")
	c.items(p+".changedFiles", w.ChangedFiles, ch, "changedFiles")
	c.optChars(p+".sourceSession", w.SourceSession, cw, "sourceSession")
	r.AcceptanceCriteria = list(w.AcceptanceCriteria)
	r.Risks = list(w.Risks)
	r.UnresolvedQuestions = list(w.UnresolvedQuestions)
	r.ChangedFiles = list(w.ChangedFiles)
	r.SourceSession = c.optional(p+".sourceSession", w.SourceSession, maxSessionBytes)
	r.DestinationSession = c.optional(p+".destinationSession", w.DestinationSession, maxSessionBytes)
	r.Status = c.enum(p+".status", w.Status, "", workStatuses...)
	r.CreatedAt = c.time(p+".createdAt", w.CreatedAt)
	r.UpdatedAt = c.timeOr(p+".updatedAt", w.UpdatedAt, r.CreatedAt)
	r.DependsOn = c.refs(p+".dependsOn", w.DependsOn, works, "work")
	for i, d := range r.DependsOn {
		if d == w.ID {
			c.fail(index(p+".dependsOn", i), "a work cannot depend on itself")
		}
	}
	sort.Strings(r.DependsOn)
	return r
}

// checkCycles refuses a dependsOn cycle (0.3.x could not create one: a
// work depends only on works that existed before it).
func checkCycles(c *checker, works []workRec) {
	deps := map[string][]string{}
	for _, w := range works {
		if _, dup := deps[w.ID]; !dup {
			deps[w.ID] = w.DependsOn
		}
	}
	const (
		unseen = iota
		active
		done
	)
	state := map[string]int{}
	var visit func(id string) bool
	visit = func(id string) bool {
		switch state[id] {
		case active:
			return false
		case done:
			return true
		}
		state[id] = active
		for _, d := range deps[id] {
			if !visit(d) {
				return false
			}
		}
		state[id] = done
		return true
	}
	for _, w := range works {
		if state[w.ID] == unseen && !visit(w.ID) {
			c.fail(w.path+".dependsOn", "work %q is part of a dependency cycle", w.ID)
			return
		}
	}
}

func (c *checker) evidence(snap *Snapshot, p string, e evidence03, works map[string]bool, listedBy []string) evidenceRec {
	r := evidenceRec{origin: origin{c.src, p}}
	r.ID = c.id(p+".id", e.ID)
	r.WorkID = c.optional(p+".workId", e.WorkID, maxIDBytes)
	if r.WorkID != nil && !works[*r.WorkID] {
		c.fail(p+".workId", "names work %q, which is not in %s", *r.WorkID, c.src.name())
	}
	switch {
	case r.WorkID == nil && len(listedBy) == 1:
		w := listedBy[0]
		r.WorkID = &w
		snap.note(c.src, p, "evidence %s has no workId; it takes work %s, whose evidenceIds list it", e.ID, w)
	case r.WorkID == nil && len(listedBy) > 1:
		snap.note(c.src, p, "evidence %s has no workId and works %v list it; it stays without a work (the store derives a work's evidenceIds from the evidence)", e.ID, listedBy)
	case r.WorkID != nil:
		for _, w := range listedBy {
			if w != *r.WorkID {
				snap.note(c.src, p, "evidence %s belongs to work %s but work %s lists it too; only %s lists it after the import", e.ID, *r.WorkID, w, *r.WorkID)
			}
		}
	}
	r.SessionID = c.optional(p+".sessionId", e.SessionID, maxSessionBytes)
	r.Kind = c.enum(p+".kind", e.Kind, "", evidenceKinds...)
	r.Trust = c.enum(p+".trust", e.Trust, "", evidenceTrusts...)
	r.Source = schema.EvidenceSource{Adapter: c.required(p+".source.adapter", e.Source.Adapter, 0), Protocol: e.Source.Protocol, NativeEventID: e.Source.NativeEventID}
	r.CapturedAt = c.time(p+".capturedAt", e.CapturedAt)
	r.Summary = e.Summary
	data := []byte(e.Data)
	if len(data) == 0 {
		data = []byte("null")
	}
	canonical, err := workflow.Canonicalize(data)
	if err != nil {
		c.fail(p+".data", "%v", err)
	}
	r.Data, r.ContentHash = string(canonical), workflow.ContentHash(canonical)
	if e.ContentHash != "" && e.ContentHash != r.ContentHash {
		// 0.3.x hashed the data as JSON.stringify wrote it; the store hashes
		// its canonical form. A hash that matches neither means the data
		// changed after it was recorded.
		var compact bytes.Buffer
		_ = json.Compact(&compact, data)
		sum := sha256.Sum256(compact.Bytes())
		if hex.EncodeToString(sum[:]) == e.ContentHash {
			snap.rehashed++
		} else {
			snap.note(c.src, p+".contentHash", "evidence %s: the 0.3.x contentHash %s does not match its data (edited after it was recorded?); the store keeps the hash of the data as imported, %s",
				e.ID, e.ContentHash, r.ContentHash)
		}
	}
	return r
}

func (c *checker) handoff(snap *Snapshot, p string, h handoff03, works, evidence map[string]bool) handoffRec {
	r := handoffRec{origin: origin{c.src, p}}
	r.ID = c.id(p+".id", h.ID)
	r.WorkID = c.required(p+".workId", h.WorkID, maxIDBytes)
	if r.WorkID != "" && !works[r.WorkID] {
		c.fail(p+".workId", "names work %q, which is not in %s", r.WorkID, c.src.name())
	}
	r.SourceSession = c.required(p+".sourceSession", h.SourceSession, maxSessionBytes)
	r.DestinationSession = c.optional(p+".destinationSession", h.DestinationSession, maxSessionBytes)
	r.Objective = c.required(p+".objective", h.Objective, 0)
	const ch = "create_handoff"
	c.chars(p+".objective", h.Objective, ch, "objective")
	c.chars(p+".sourceSession", h.SourceSession, ch, "sourceSession")
	c.optChars(p+".destinationSession", h.DestinationSession, ch, "destinationSession")
	c.items(p+".acceptanceCriteria", h.AcceptanceCriteria, ch, "acceptanceCriteria")
	c.items(p+".evidenceIds", h.EvidenceIDs, ch, "evidenceIds")
	c.items(p+".changedFiles", h.ChangedFiles, ch, "changedFiles")
	c.items(p+".risks", h.Risks, ch, "risks")
	c.items(p+".unresolvedQuestions", h.UnresolvedQuestions, ch, "unresolvedQuestions")
	c.items(p+".authorityBoundaries", h.AuthorityBoundaries, ch, "authorityBoundaries")
	c.items(p+".assumptions", h.Assumptions, ch, "assumptions")
	c.items(p+".rollbackNotes", h.RollbackNotes, ch, "rollbackNotes")
	c.optChars(p+".nextAction", h.NextAction, ch, "nextAction")
	c.optChars(p+".repositoryRevision", h.RepositoryRevision, ch, "repositoryRevision")
	r.AcceptanceCriteria = list(h.AcceptanceCriteria)
	r.EvidenceIDs = c.refs(p+".evidenceIds", h.EvidenceIDs, evidence, "evidence")
	r.ChangedFiles = list(h.ChangedFiles)
	r.Risks = list(h.Risks)
	r.UnresolvedQuestions = list(h.UnresolvedQuestions)
	r.AuthorityBoundaries = list(h.AuthorityBoundaries)
	if h.ContinuationState != nil && *h.ContinuationState != "" {
		v := c.enum(p+".continuationState", *h.ContinuationState, "", continuations...)
		r.ContinuationState = &v
	}
	if v := h.LatestValidation; v != nil {
		r.LatestValidation = &schema.HandoffValidation{Label: v.Label, Command: v.Command, Outcome: v.Outcome, ObservedAt: v.ObservedAt}
	}
	r.Assumptions = optionalList(h.Assumptions)
	r.RollbackNotes = optionalList(h.RollbackNotes)
	r.NextAction = c.optional(p+".nextAction", h.NextAction, 0)
	r.RepositoryRevision = c.optional(p+".repositoryRevision", h.RepositoryRevision, maxRevisionBytes)
	r.Status = c.enum(p+".status", h.Status, "", handoffStatuses...)
	switch {
	case h.ContextTokens == nil:
		snap.note(c.src, p, "handoff %s has no contextTokens; it is imported with 0", h.ID)
	case *h.ContextTokens < 0:
		c.fail(p+".contextTokens", "must not be negative; found %d", *h.ContextTokens)
	default:
		r.ContextTokens = *h.ContextTokens
	}
	switch {
	case h.TokenBudget == nil:
		r.TokenBudget = defaultBudget
		snap.note(c.src, p, "handoff %s has no tokenBudget; it is imported with the default %d", h.ID, defaultBudget)
	case *h.TokenBudget <= 0:
		c.fail(p+".tokenBudget", "must be positive; found %d", *h.TokenBudget)
	default:
		r.TokenBudget = *h.TokenBudget
	}
	r.OmittedFields = list(h.OmittedFields)
	r.CreatedAt = c.time(p+".createdAt", h.CreatedAt)
	r.UpdatedAt = c.timeOr(p+".updatedAt", h.UpdatedAt, r.CreatedAt)
	return r
}

// reviewEvidenceByReview finds the review evidence record 0.3.x wrote with
// each review (kind review, data = the review), by review id.
func reviewEvidenceByReview(all []evidence03) map[string]string {
	out := map[string]string{}
	for _, e := range all {
		if e.Kind != "review" || len(e.Data) == 0 {
			continue
		}
		var d struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(e.Data, &d) == nil && d.ID != "" {
			if _, dup := out[d.ID]; !dup {
				out[d.ID] = e.ID
			}
		}
	}
	return out
}

func (c *checker) review(p string, r03 review03, works, evidence map[string]bool, found string) reviewRec {
	r := reviewRec{origin: origin{c.src, p}}
	r.ID = c.id(p+".id", r03.ID)
	r.WorkID = c.required(p+".workId", r03.WorkID, maxIDBytes)
	if r.WorkID != "" && !works[r.WorkID] {
		c.fail(p+".workId", "names work %q, which is not in %s", r.WorkID, c.src.name())
	}
	r.SubjectEvidenceIDs = c.refs(p+".subjectEvidenceIds", r03.SubjectEvidenceIDs, evidence, "evidence")
	r.ReviewerSessionID = c.required(p+".reviewerSessionId", r03.ReviewerSessionID, maxSessionBytes)
	r.Independence = schema.ReviewIndependence(r03.Independence)
	r.Findings = make([]schema.ReviewFinding, 0, len(r03.Findings))
	for _, f := range r03.Findings {
		r.Findings = append(r.Findings, schema.ReviewFinding{ID: f.ID, Severity: f.Severity, Title: f.Title, Detail: f.Detail, File: f.File, Line: f.Line})
	}
	r.Verdict = c.enum(p+".verdict", r03.Verdict, "", verdicts...)
	c.enum(p+".provenance", r03.Provenance, "agent_claim", provenanceAllowed...)
	switch {
	case r03.EvidenceID != nil && *r03.EvidenceID != "":
		id := *r03.EvidenceID
		if !evidence[id] {
			c.fail(p+".evidenceId", "names evidence %q, which is not in %s", id, c.src.name())
		}
		r.EvidenceID = &id
	case found != "":
		r.EvidenceID = &found
	}
	r.CreatedAt = c.time(p+".createdAt", r03.CreatedAt)
	return r
}

func (c *checker) claim(snap *Snapshot, p string, cl claim03, works map[string]bool, now time.Time) claimRec {
	r := claimRec{origin: origin{c.src, p}}
	k := claims.Claim{
		ID:        c.id(p+".id", cl.ID),
		WorkID:    c.required(p+".workId", cl.WorkID, maxIDBytes),
		SessionID: c.required(p+".sessionId", cl.SessionID, maxSessionBytes),
		Kind:      claims.Kind(c.enum(p+".kind", cl.Kind, "file", claimKinds...)),
		Mode:      claims.Mode(c.enum(p+".mode", cl.Mode, "exclusive", claimModes...)),
		Status:    claims.Status(c.enum(p+".status", cl.Status, "active", claimStatuses...)),
	}
	if k.WorkID != "" && !works[k.WorkID] {
		c.fail(p+".workId", "names work %q, which is not in %s", k.WorkID, c.src.name())
	}
	c.required(p+".resource", cl.Resource, claims.MaxResourceLen)
	k.Resource = claims.NormalizeResource(k.Kind, cl.Resource)
	if k.Resource != cl.Resource && cl.Resource != "" {
		snap.note(c.src, p+".resource", "claim %s: resource %q is stored as %q (claims keep cleaned paths)", cl.ID, cl.Resource, k.Resource)
	}
	k.AcquiredAt = c.time(p+".acquiredAt", cl.AcquiredAt)
	k.ExpiresAt = c.time(p+".expiresAt", cl.ExpiresAt)
	switch k.Status {
	case claims.StatusReleased:
		if cl.ReleasedAt == nil || *cl.ReleasedAt == "" {
			c.fail(p+".releasedAt", "required for a released claim")
			break
		}
		t := c.timeValue(p+".releasedAt", *cl.ReleasedAt)
		k.ReleasedAt = &t
	case claims.StatusExpired:
		// The store derives expired from the lease (lazy expiry).
		k.Status = claims.StatusActive
		if t := now; k.ExpiresAt.After(t) {
			k.Status, k.ReleasedAt = claims.StatusReleased, &t
			snap.note(c.src, p, "claim %s is marked expired but its lease ends at %s; it is imported as released", cl.ID, workflow.Timestamp(k.ExpiresAt))
		}
	}
	r.Claim = k
	return r
}
