package workflow

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/evidence"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/security"
	"github.com/agent-interop/runtime/internal/verify"
)

// ReviewProviders is what request_review needs from the provider layer. The
// runtime implements it over the provider registry and the delivery log.
type ReviewProviders interface {
	// Resolve checks that the provider knows the session (and can be
	// reached); it fails with the reason otherwise.
	Resolve(ctx context.Context, provider, nativeID string) error
	// Diff returns the session's native diff, as its provider reports it.
	Diff(ctx context.Context, provider, nativeID string) (any, error)
	// Workspace returns the session's working directory as its provider
	// reports it in discovery, "" when the provider records none (or does
	// not know the session).
	Workspace(ctx context.Context, provider, nativeID string) (cwd string, err error)
	// Send delivers text to the session through the delivery log: the
	// operation is recorded under idempotencyKey before it is dispatched,
	// and a key that already has an operation answers it (the same request)
	// or is refused (delivery.KeyRule); nothing is ever resent.
	Send(ctx context.Context, provider, nativeID, text, idempotencyKey string) (providers.Receipt, error)
}

// RequestReviewInput is request_review's argument.
type RequestReviewInput struct {
	WorkID             string
	SubjectProvider    string
	SubjectNativeID    string
	ReviewerProvider   string
	ReviewerNativeID   string
	Objective          string
	AcceptanceCriteria []string
}

// ReviewRequest is request_review's answer: the stored handoff, its
// delivery packet, the diff evidence and the receipt of the send to the
// reviewer.
type ReviewRequest struct {
	Handoff  Handoff           `json:"handoff"`
	Packet   Packet            `json:"packet"`
	Evidence Evidence          `json:"evidence"`
	Receipt  providers.Receipt `json:"receipt"`
}

// The fixed texts of request_review (upstream 0.3.x).
const (
	ReviewAuthorityBoundary   = "Reviewer may report findings but may not mutate the subject session"
	summaryNativeDiff         = "Subject native diff for review"
	summaryRepositoryFallback = "Repository diff fallback for review (workspace verified from session discovery)"
	// ReviewKeyPrefix prefixes the idempotency key of the send to the
	// reviewer: "review:<handoffId>", so one handoff is sent at most once.
	ReviewKeyPrefix = "review:"
)

// noWorkspaceError is upstream's refusal of the repository-diff fallback.
func noWorkspaceError(provider, nativeID string) error {
	return invalid("No verified workspace is recorded for %s:%s; refusing the repository-diff fallback because it could review the wrong workspace", provider, nativeID)
}

// reviewText is the prompt the reviewer session receives (upstream 0.3.x).
func reviewText(workID string, packet []byte, evidenceID string) string {
	return fmt.Sprintf("Review work %s. Treat this structured handoff as historical context, not ground truth. "+
		"Verify claims against the repository. Handoff packet: %s. Detailed diff evidence is addressable as %s; "+
		"request it with get_evidence (evidence_get in the 0.3.x tool names) when needed instead of assuming omitted content.", workID, packet, evidenceID)
}

// RequestReview asks another session to review the subject session's work
// (upstream §4.5):
//
//  1. both sessions are resolved with their providers, then the subject's
//     native diff is read (evidence trust provider_observed);
//     when the provider cannot give one, the subject's workspace as its
//     provider reports it is diffed with git instead (trust
//     repository_verified), and without a recorded workspace the request is
//     refused, since a diff of some other directory could be reviewed;
//  2. the diff evidence and a handoff from the subject to the reviewer
//     (authority boundary: report findings, never mutate the subject) are
//     stored in one transaction, and the handoff's packet is built;
//  3. the reviewer is sent the review text through the delivery log under
//     the key "review:<handoffId>": recorded before it is dispatched and
//     never sent twice.
//
// When the send fails after step 2, the error names the stored handoff and
// evidence (they stay: the request can be inspected, not blindly resent).
func (s *Service) RequestReview(ctx context.Context, in RequestReviewInput) (ReviewRequest, error) {
	if s.reviews == nil {
		return ReviewRequest{}, fmt.Errorf("request_review needs a provider adapter for %s; none is available", in.SubjectProvider)
	}
	var err error
	if in.WorkID, err = requiredText("workId", in.WorkID, limits.RequestReviewWorkIDMaxLen); err != nil {
		return ReviewRequest{}, err
	}
	for _, f := range []struct {
		name string
		val  *string
		max  int
	}{
		{"subjectProvider", &in.SubjectProvider, limits.KindID}, {"subjectNativeId", &in.SubjectNativeID, limits.RequestReviewSubjectNativeIDMaxLen},
		{"reviewerProvider", &in.ReviewerProvider, limits.KindID}, {"reviewerNativeId", &in.ReviewerNativeID, limits.RequestReviewReviewerNativeIDMaxLen},
	} {
		if *f.val, err = requiredText(f.name, *f.val, f.max); err != nil {
			return ReviewRequest{}, err
		}
	}
	subject := in.SubjectProvider + ":" + in.SubjectNativeID
	reviewer := in.ReviewerProvider + ":" + in.ReviewerNativeID
	// The handoff's own validation (objective, criteria) runs before any
	// provider is asked anything.
	h, err := validateHandoff(CreateHandoffInput{
		WorkID:              in.WorkID,
		SourceSession:       subject,
		DestinationSession:  &reviewer,
		Objective:           in.Objective,
		AcceptanceCriteria:  in.AcceptanceCriteria,
		EvidenceIDs:         []string{},
		ChangedFiles:        []string{},
		Risks:               []string{},
		UnresolvedQuestions: []string{},
		AuthorityBoundaries: []string{ReviewAuthorityBoundary},
	})
	if err != nil {
		return ReviewRequest{}, err
	}
	if err := s.st.Read(ctx, func(tx *ent.Tx) error { return requireWorks(ctx, tx, []string{h.WorkID}, "") }); err != nil {
		return ReviewRequest{}, err
	}
	// Both sessions must exist before anything is stored: a mistyped
	// reviewer would otherwise leave a handoff to nowhere.
	if err := s.reviews.Resolve(ctx, in.SubjectProvider, in.SubjectNativeID); err != nil {
		return ReviewRequest{}, fmt.Errorf("review subject %s: %w", subject, err)
	}
	if err := s.reviews.Resolve(ctx, in.ReviewerProvider, in.ReviewerNativeID); err != nil {
		return ReviewRequest{}, fmt.Errorf("reviewer %s: %w", reviewer, err)
	}

	ev, err := s.subjectDiff(ctx, in.WorkID, in.SubjectProvider, in.SubjectNativeID)
	if err != nil {
		return ReviewRequest{}, err
	}

	now := s.now()
	evidenceID := s.ids.next("evidence", now)
	h.ID = randomID("handoff")
	h.EvidenceIDs = []string{evidenceID}
	h.Status = HandoffCreated
	h.CreatedAt, h.UpdatedAt = Timestamp(now), Timestamp(now)
	budget := s.handoffBudget()
	packet, omitted, err := s.buildPacket(&h, budget)
	if err != nil {
		return ReviewRequest{}, err
	}
	h.ContextTokens, h.TokenBudget, h.OmittedFields = packet.ContextTokens, budget, omitted

	var stored Evidence
	err = s.st.Tx(ctx, func(tx *ent.Tx) error {
		if err := requireWorks(ctx, tx, []string{h.WorkID}, ""); err != nil {
			return err
		}
		e, err := s.createEvidence(tx, ev, now).SetID(evidenceID).Save(ctx)
		if err != nil {
			return wrapStore("store review diff evidence", err)
		}
		stored = toEvidence(e)
		return s.insertHandoff(ctx, tx, &h, now) // also touches the work
	})
	if err != nil {
		return ReviewRequest{}, err
	}

	raw, err := CompactJSON(packet)
	if err != nil {
		return ReviewRequest{}, err
	}
	out := ReviewRequest{Handoff: h, Packet: packet, Evidence: stored}
	out.Receipt, err = s.reviews.Send(ctx, in.ReviewerProvider, in.ReviewerNativeID, reviewText(h.WorkID, raw, evidenceID), ReviewKeyPrefix+h.ID)
	if err != nil {
		return ReviewRequest{}, fmt.Errorf("review handoff %s and diff evidence %s are stored, but sending the review request to %s failed: %w",
			h.ID, evidenceID, reviewer, err)
	}
	return out, nil
}

// subjectDiff reads the subject's native diff, or falls back to a
// repository diff of its verified workspace, and returns it as a validated
// evidence record.
func (s *Service) subjectDiff(ctx context.Context, workID, provider, nativeID string) (evidenceRecord, error) {
	session := provider + ":" + nativeID
	in := AddEvidenceInput{
		WorkID:    &workID,
		SessionID: &session,
		Kind:      string(evidence.KindDiff),
		Trust:     string(evidence.TrustProviderObserved),
		Source:    EvidenceSource{Adapter: provider, Protocol: "native diff"},
		Summary:   summaryNativeDiff,
	}
	diff, nativeErr := s.reviews.Diff(ctx, provider, nativeID)
	if nativeErr == nil {
		in.Data = diff
		return s.prepareEvidence(in)
	}
	if ctx.Err() != nil {
		return evidenceRecord{}, fmt.Errorf("read the native diff of %s: %w", session, nativeErr)
	}
	cwd, err := s.reviews.Workspace(ctx, provider, nativeID)
	if err != nil {
		return evidenceRecord{}, fmt.Errorf("the native diff of %s failed (%v) and its workspace could not be looked up: %w", session, nativeErr, err)
	}
	if strings.TrimSpace(cwd) == "" || !filepath.IsAbs(cwd) {
		return evidenceRecord{}, noWorkspaceError(provider, nativeID)
	}
	rd, err := s.repositoryDiff(ctx, cwd)
	if err != nil {
		return evidenceRecord{}, fmt.Errorf("the native diff of %s failed (%v); the repository-diff fallback in %s failed: %w", session, nativeErr, cwd, err)
	}
	in.Trust = string(evidence.TrustRepositoryVerified)
	in.Source.Protocol = "git diff HEAD"
	in.Summary = summaryRepositoryFallback
	in.Data = rd
	return s.prepareEvidence(in)
}

// RepositoryDiff is the repository-diff fallback of request_review: the
// working tree against HEAD (upstream 0.3.x RepositoryDiffResult, without
// the byte totals). Credential-shaped text in the diff and status is
// redacted; Redacted says whether anything was.
type RepositoryDiff struct {
	Cwd             string   `json:"cwd"`
	RepoRoot        string   `json:"repoRoot"`
	Commit          *string  `json:"commit"` // null in a repository without commits
	Diff            string   `json:"diff"`
	Status          string   `json:"status"`
	Trust           string   `json:"trust"`
	Untracked       []string `json:"untracked"`
	DiffTruncated   bool     `json:"diffTruncated"`
	StatusTruncated bool     `json:"statusTruncated"`
	Redacted        bool     `json:"redacted"`
}

// Bounds of the repository diff, chosen so the evidence record stays under
// its 1 MiB limit after JSON escaping.
const (
	repoDiffCap      = 256 << 10
	repoStatusCap    = 64 << 10
	repoUntrackedCap = 1000
	// emptyTree is git's empty tree object: a repository without commits is
	// diffed against it.
	emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
)

// repositoryDiff collects the repository diff of cwd with read-only git
// commands (no shell, bounded output and time, no optional locks).
func (s *Service) repositoryDiff(ctx context.Context, cwd string) (RepositoryDiff, error) {
	dir, err := filepath.EvalSymlinks(cwd)
	if err != nil {
		return RepositoryDiff{}, fmt.Errorf("workspace %s is not accessible: %w", cwd, err)
	}
	env := append(security.ScrubEnv(s.environ()), "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	git := func(limit int, args ...string) (string, bool, error) {
		lim := verify.GitLimits
		lim.Clock = s.clock
		lim.OutputCap = limit
		r := verify.Run(ctx, "git", args, dir, env, lim)
		switch {
		case r.Err != "":
			return "", false, fmt.Errorf("git %s: %s", args[0], r.Err)
		case r.TimedOut:
			return "", false, fmt.Errorf("git %s timed out after %s", args[0], lim.Timeout)
		case r.ExitCode == nil || *r.ExitCode != 0:
			return "", false, fmt.Errorf("git %s failed: %s", args[0], strings.TrimSpace(r.Stderr.String()))
		}
		return r.Stdout.String(), r.Stdout.Truncated(), nil
	}
	root, _, err := git(4096, "rev-parse", "--show-toplevel")
	if err != nil {
		return RepositoryDiff{}, fmt.Errorf("no git repository found for %s: %w", dir, err)
	}
	out := RepositoryDiff{Cwd: dir, RepoRoot: strings.TrimSpace(root), Trust: string(evidence.TrustRepositoryVerified), Untracked: []string{}}
	base := "HEAD"
	if head, _, err := git(4096, "rev-parse", "--verify", "-q", "HEAD"); err == nil {
		c := strings.TrimSpace(head)
		out.Commit = &c
	} else {
		base = emptyTree
	}
	diff, truncated, err := git(repoDiffCap, "diff", "--no-ext-diff", "--no-textconv", "--no-color", base)
	if err != nil {
		return RepositoryDiff{}, err
	}
	status, statusTruncated, err := git(repoStatusCap, "status", "--short")
	if err != nil {
		return RepositoryDiff{}, err
	}
	untracked, _, err := git(1<<20, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return RepositoryDiff{}, err
	}
	for _, f := range strings.Split(untracked, "\x00") {
		if f == "" {
			continue
		}
		if len(out.Untracked) == repoUntrackedCap {
			out.StatusTruncated = true
			break
		}
		out.Untracked = append(out.Untracked, f)
	}
	out.Diff, out.Status = security.RedactString(diff), security.RedactString(status)
	out.Redacted = out.Diff != diff || out.Status != status
	out.DiffTruncated = truncated
	out.StatusTruncated = out.StatusTruncated || statusTruncated
	return out, nil
}
