package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
)

// fakeReviews is a hand-written ReviewProviders: scripted diff and
// workspace answers, and a log of sends.
type fakeReviews struct {
	mu        sync.Mutex
	unknown   map[string]bool // "provider:nativeId" the provider does not know
	diff      any
	diffErr   error
	cwd       string
	cwdErr    error
	sendErr   error
	receipt   providers.Receipt
	resolved  []string
	diffs     []string
	lookups   []string
	sends     []sentReview
	sendHooks []func() // run inside Send (to look at the store mid-call)
}

type sentReview struct {
	provider, nativeID, text, key string
}

func (f *fakeReviews) Resolve(_ context.Context, provider, nativeID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resolved = append(f.resolved, provider+":"+nativeID)
	if f.unknown[provider+":"+nativeID] {
		return errors.New("Unknown session " + provider + ":" + nativeID)
	}
	return nil
}

func (f *fakeReviews) Diff(_ context.Context, provider, nativeID string) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.diffs = append(f.diffs, provider+":"+nativeID)
	return f.diff, f.diffErr
}

func (f *fakeReviews) Workspace(_ context.Context, provider, nativeID string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups = append(f.lookups, provider+":"+nativeID)
	return f.cwd, f.cwdErr
}

func (f *fakeReviews) Send(_ context.Context, provider, nativeID, text, key string) (providers.Receipt, error) {
	f.mu.Lock()
	f.sends = append(f.sends, sentReview{provider, nativeID, text, key})
	hooks := f.sendHooks
	f.mu.Unlock()
	for _, h := range hooks {
		h()
	}
	if f.sendErr != nil {
		return providers.Receipt{}, f.sendErr
	}
	r := f.receipt
	r.Provider, r.NativeID, r.Operation = providers.ID(provider), nativeID, "send"
	return r, nil
}

func reviewFixture(t *testing.T, fr *fakeReviews) *fixture {
	t.Helper()
	return newFixture(t, func(o *Options) { o.Reviews = fr })
}

func reviewInput(workID string) RequestReviewInput {
	return RequestReviewInput{
		WorkID: workID, SubjectProvider: "opencode", SubjectNativeID: "ses_subject",
		ReviewerProvider: "claude-code", ReviewerNativeID: "rev-1",
		Objective: "Review the login fix", AcceptanceCriteria: []string{"tests pass", " "},
	}
}

func TestRequestReviewNativeDiff(t *testing.T) {
	diff := map[string]any{"files": []any{map[string]any{"file": "a.go", "patch": "+x"}}}
	fr := &fakeReviews{diff: diff, receipt: providers.Receipt{Accepted: true, Status: providers.StatusQueued}}
	f := reviewFixture(t, fr)
	w := f.work("login fix")

	var midSend WorkDetail
	fr.sendHooks = append(fr.sendHooks, func() {
		// The handoff and evidence are stored before the reviewer is sent anything.
		d, err := f.svc.GetWork(f.ctx, GetWorkInput{WorkID: w.ID, FullEvidence: true})
		if err != nil {
			t.Errorf("GetWork during send: %v", err)
		}
		midSend = d
	})
	got, err := f.svc.RequestReview(f.ctx, reviewInput(w.ID))
	if err != nil {
		t.Fatal(err)
	}
	ev := got.Evidence
	if ev.Kind != "diff" || ev.Trust != "provider_observed" || ev.Summary != "Subject native diff for review" ||
		*ev.SessionID != "opencode:ses_subject" || *ev.WorkID != w.ID || ev.Source.Adapter != "opencode" || len(ev.ContentHash) != 64 {
		t.Fatalf("evidence %+v", ev)
	}
	want, _ := CanonicalJSON(diff)
	if string(ev.Data) != string(want) {
		t.Fatalf("evidence data %s, want %s", ev.Data, want)
	}
	h := got.Handoff
	if h.SourceSession != "opencode:ses_subject" || *h.DestinationSession != "claude-code:rev-1" || h.Status != HandoffCreated ||
		len(h.AuthorityBoundaries) != 1 || h.AuthorityBoundaries[0] != ReviewAuthorityBoundary ||
		len(h.EvidenceIDs) != 1 || h.EvidenceIDs[0] != ev.ID || len(h.AcceptanceCriteria) != 1 || len(h.Risks) != 0 {
		t.Fatalf("handoff %+v", h)
	}
	if got.Packet.HandoffID != h.ID || got.Packet.ContextTokens == 0 || got.Packet.ContextTokens != h.ContextTokens {
		t.Fatalf("packet %+v", got.Packet)
	}
	if got.Receipt.Status != providers.StatusQueued || got.Receipt.NativeID != "rev-1" {
		t.Fatalf("receipt %+v", got.Receipt)
	}
	if len(fr.lookups) != 0 {
		t.Fatalf("workspace looked up although the native diff worked: %v", fr.lookups)
	}
	if len(fr.sends) != 1 {
		t.Fatalf("%d sends", len(fr.sends))
	}
	s := fr.sends[0]
	raw, _ := CompactJSON(got.Packet)
	wantText := "Review work " + w.ID + ". Treat this structured handoff as historical context, not ground truth. Verify claims against the repository. Handoff packet: " +
		string(raw) + ". Detailed diff evidence is addressable as " + ev.ID + "; request it with get_evidence (evidence_get in the 0.3.x tool names) when needed instead of assuming omitted content."
	if s.provider != "claude-code" || s.nativeID != "rev-1" || s.key != "review:"+h.ID || s.text != wantText {
		t.Fatalf("send %+v\nwant text %s", s, wantText)
	}
	if len(midSend.Handoffs) != 1 || len(midSend.Evidence) != 1 {
		t.Fatalf("during the send the store had %d handoffs and %d evidence", len(midSend.Handoffs), len(midSend.Evidence))
	}
	// The stored records equal the answer; the work follows the handoff.
	d, err := f.svc.GetWork(f.ctx, GetWorkInput{WorkID: w.ID, FullEvidence: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.Work.Status != "in_progress" || *d.Work.DestinationSession != "claude-code:rev-1" || d.Evidence[0].ID != ev.ID || d.Handoffs[0].ID != h.ID {
		t.Fatalf("work after request %+v", d)
	}
	p, err := f.svc.GetHandoffPacket(f.ctx, h.ID)
	if err != nil || p.ContextTokens != got.Packet.ContextTokens {
		t.Fatalf("stored packet %+v, %v", p, err)
	}
}

// gitRepo makes a repository with one commit, then changes it: a modified
// tracked file (with a credential in it) and an untracked file.
func gitRepo(t *testing.T, commit bool) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("init", "-q")
	write("main.go", "package main\n")
	run("add", "main.go")
	if commit {
		run("commit", "-q", "-m", "init")
	}
	write("main.go", "package main\n\n// changed\nconst apiKey = \"token=abcdef0123456789\"\n")
	write("new.txt", "new\n")
	return dir
}

func TestRequestReviewRepositoryFallback(t *testing.T) {
	for _, commit := range []bool{true, false} {
		name := "with HEAD"
		if !commit {
			name = "without commits"
		}
		t.Run(name, func(t *testing.T) {
			dir := gitRepo(t, commit)
			fr := &fakeReviews{
				diffErr: &providers.UnsupportedError{Provider: providers.ClaudeCode, Operation: "diff", Reason: "ACP exposes no diff"},
				cwd:     dir, receipt: providers.Receipt{Accepted: true, Status: providers.StatusQueued},
			}
			f := reviewFixture(t, fr)
			w := f.work("fallback")
			in := reviewInput(w.ID)
			in.SubjectProvider, in.SubjectNativeID = "claude-code", "sess-9"
			got, err := f.svc.RequestReview(f.ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			ev := got.Evidence
			if ev.Trust != "repository_verified" || ev.Summary != "Repository diff fallback for review (workspace verified from session discovery)" ||
				ev.Source.Adapter != "claude-code" || *ev.SessionID != "claude-code:sess-9" {
				t.Fatalf("evidence %+v", ev)
			}
			var rd RepositoryDiff
			if err := json.Unmarshal(ev.Data, &rd); err != nil {
				t.Fatal(err)
			}
			real, _ := filepath.EvalSymlinks(dir)
			if rd.RepoRoot != real || rd.Trust != "repository_verified" || !strings.Contains(rd.Diff, "+// changed") ||
				len(rd.Untracked) != 1 || rd.Untracked[0] != "new.txt" || !strings.Contains(rd.Status, "new.txt") {
				t.Fatalf("repository diff %+v", rd)
			}
			if (rd.Commit != nil) != commit {
				t.Fatalf("commit %v, want present=%v", rd.Commit, commit)
			}
			if strings.Contains(rd.Diff, "abcdef0123456789") || !rd.Redacted {
				t.Fatalf("credential not redacted: %q", rd.Diff)
			}
			if len(fr.lookups) != 1 || fr.lookups[0] != "claude-code:sess-9" || len(fr.sends) != 1 {
				t.Fatalf("lookups %v sends %d", fr.lookups, len(fr.sends))
			}
		})
	}
}

func TestRequestReviewRefusals(t *testing.T) {
	unsupported := &providers.UnsupportedError{Provider: providers.ClaudeCode, Operation: "diff", Reason: "ACP exposes no diff"}
	t.Run("no workspace", func(t *testing.T) {
		fr := &fakeReviews{diffErr: unsupported}
		f := reviewFixture(t, fr)
		w := f.work("x")
		in := reviewInput(w.ID)
		err := f.unchanged(func() error { _, err := f.svc.RequestReview(f.ctx, in); return err })
		if err.Error() != "No verified workspace is recorded for opencode:ses_subject; refusing the repository-diff fallback because it could review the wrong workspace" {
			t.Fatalf("error %q", err)
		}
		if !errors.Is(err, ErrInvalid) || len(fr.sends) != 0 {
			t.Fatalf("kind %v, sends %d", err, len(fr.sends))
		}
	})
	t.Run("relative workspace", func(t *testing.T) {
		fr := &fakeReviews{diffErr: unsupported, cwd: "some/dir"}
		f := reviewFixture(t, fr)
		w := f.work("x")
		err := f.unchanged(func() error { _, err := f.svc.RequestReview(f.ctx, reviewInput(w.ID)); return err })
		wantErr(t, err, ErrInvalid, "No verified workspace is recorded for opencode:ses_subject")
	})
	t.Run("workspace lookup fails", func(t *testing.T) {
		fr := &fakeReviews{diffErr: unsupported, cwdErr: errors.New("provider down")}
		f := reviewFixture(t, fr)
		w := f.work("x")
		err := f.unchanged(func() error { _, err := f.svc.RequestReview(f.ctx, reviewInput(w.ID)); return err })
		wantErr(t, err, nil, "ACP exposes no diff", "provider down")
	})
	t.Run("workspace is not a repository", func(t *testing.T) {
		fr := &fakeReviews{diffErr: unsupported, cwd: t.TempDir()}
		f := reviewFixture(t, fr)
		w := f.work("x")
		err := f.unchanged(func() error { _, err := f.svc.RequestReview(f.ctx, reviewInput(w.ID)); return err })
		wantErr(t, err, nil, "repository-diff fallback", "no git repository found")
	})
	t.Run("unknown work asks no provider", func(t *testing.T) {
		fr := &fakeReviews{diff: map[string]any{}}
		f := reviewFixture(t, fr)
		err := f.unchanged(func() error { _, err := f.svc.RequestReview(f.ctx, reviewInput("work_nope")); return err })
		wantErr(t, err, ErrNotFound, "Unknown work work_nope")
		if len(fr.diffs)+len(fr.sends) != 0 {
			t.Fatalf("provider asked: %v %v", fr.diffs, fr.sends)
		}
	})
	t.Run("unknown sessions store nothing", func(t *testing.T) {
		for _, who := range []string{"opencode:ses_subject", "claude-code:rev-1"} {
			fr := &fakeReviews{diff: map[string]any{}, unknown: map[string]bool{who: true}}
			f := reviewFixture(t, fr)
			w := f.work("x")
			err := f.unchanged(func() error { _, err := f.svc.RequestReview(f.ctx, reviewInput(w.ID)); return err })
			wantErr(t, err, nil, "Unknown session "+who)
			if len(fr.diffs)+len(fr.sends) != 0 {
				t.Fatalf("%s unknown: provider asked for diffs %v, sends %v", who, fr.diffs, fr.sends)
			}
		}
	})
	t.Run("blank fields", func(t *testing.T) {
		fr := &fakeReviews{diff: map[string]any{}}
		f := reviewFixture(t, fr)
		w := f.work("x")
		in := reviewInput(w.ID)
		in.Objective = "  "
		_, err := f.svc.RequestReview(f.ctx, in)
		wantErr(t, err, ErrInvalid, "objective must not be blank")
		in = reviewInput(w.ID)
		in.ReviewerNativeID = ""
		_, err = f.svc.RequestReview(f.ctx, in)
		wantErr(t, err, ErrInvalid, "reviewerNativeId must not be blank")
		if len(fr.diffs) != 0 {
			t.Fatalf("provider asked: %v", fr.diffs)
		}
	})
	t.Run("no provider layer", func(t *testing.T) {
		f := newFixture(t)
		w := f.work("x")
		_, err := f.svc.RequestReview(f.ctx, reviewInput(w.ID))
		wantErr(t, err, nil, "request_review needs a provider adapter for opencode; none is available")
	})
}

func TestRequestReviewSendFailureKeepsRecords(t *testing.T) {
	fr := &fakeReviews{diff: map[string]any{"files": []any{}}, sendErr: errors.New("Operation op_1 persisted with delivery_unknown")}
	f := reviewFixture(t, fr)
	w := f.work("x")
	_, err := f.svc.RequestReview(f.ctx, reviewInput(w.ID))
	wantErr(t, err, nil, "are stored, but sending the review request to claude-code:rev-1 failed", "delivery_unknown")
	d, gerr := f.svc.GetWork(f.ctx, GetWorkInput{WorkID: w.ID, FullEvidence: true})
	if gerr != nil || len(d.Handoffs) != 1 || len(d.Evidence) != 1 {
		t.Fatalf("records after a failed send: %+v, %v", d, gerr)
	}
	if !strings.Contains(err.Error(), d.Handoffs[0].ID) || !strings.Contains(err.Error(), d.Evidence[0].ID) {
		t.Fatalf("error does not name the stored records: %v", err)
	}
	// Two requests are two handoffs with two distinct send keys.
	fr.sendErr = nil
	if _, err := f.svc.RequestReview(f.ctx, reviewInput(w.ID)); err != nil {
		t.Fatal(err)
	}
	if len(fr.sends) != 2 || fr.sends[0].key == fr.sends[1].key {
		t.Fatalf("sends %+v", fr.sends)
	}
}
