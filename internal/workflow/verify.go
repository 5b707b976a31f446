package workflow

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/workitem"
	"github.com/agent-interop/runtime/internal/security"
	"github.com/agent-interop/runtime/internal/verify"
)

// EnvAllowVerification enables verify_work_item when set to "1".
const EnvAllowVerification = "INTEROP_ALLOW_VERIFICATION"

// Verification limits (upstream 0.3.x).
const maxVerifyCommands = limits.VerifyWorkItemCommandsMaxItems

// commandSlots name the commands by position; the first four are also the
// evidence kinds, the rest are recorded as typecheck evidence.
var commandSlots = [maxVerifyCommands]string{"test", "lint", "typecheck", "build", "check1", "check2", "check3", "check4"}

// VerifyCommand is one verification command (see [verify.Command]).
type VerifyCommand = verify.Command

// GitFacts describes the repository a verification ran in (see
// [verify.GitFacts]).
type GitFacts = verify.GitFacts

// VerifyInput is verify_work_item's argument.
type VerifyInput struct {
	WorkID string
	// Cwd is the workspace (absolute). Without it the workspace is the cwd
	// of the work's destination (else source) session, via SessionLookup.
	Cwd      *string
	Commands []VerifyCommand
}

// CommandEvidence is one command's run; it is also the data of the
// evidence record the run produced.
type CommandEvidence struct {
	ID              string  `json:"id"`
	Name            string  `json:"name"`
	Command         string  `json:"command"`
	Cwd             string  `json:"cwd"`
	StartedAt       string  `json:"startedAt"`
	FinishedAt      string  `json:"finishedAt"`
	DurationMs      int64   `json:"durationMs"`
	ExitCode        *int    `json:"exitCode"`
	Signal          *string `json:"signal"`
	TimedOut        bool    `json:"timedOut"`
	Stdout          string  `json:"stdout"`
	Stderr          string  `json:"stderr"`
	StdoutTruncated bool    `json:"stdoutTruncated"`
	StderrTruncated bool    `json:"stderrTruncated"`
	Error           string  `json:"error,omitempty"`
}

// VerificationResult is verify_work_item's answer (the legacy work_verify
// answer is a one-element array of it).
type VerificationResult struct {
	Commands    []CommandEvidence `json:"commands"`
	Git         *GitFacts         `json:"git"`
	EvidenceIDs []string          `json:"evidenceIds"`
	WorkStatus  string            `json:"workStatus"`
}

// Exact upstream refusals.
const (
	msgVerificationDisabled = "Verification is disabled by default; set INTEROP_ALLOW_VERIFICATION=1 only for a trusted local MCP client"
	msgNoWorkspace          = "Verification requires an explicit cwd or a work item linked to a native session with a verified workspace"
	msgNoCommands           = "Verification requires at least one command"
)

// VerifyWork runs the commands one after another (no shell, own process
// group, scrubbed environment, bounded time and output), records one
// runtime_observed evidence record per command, collects git facts, and
// sets the work to blocked (any failure) or in_progress (all passed; an
// accepted work stays accepted) — all in one transaction after the runs.
// Every check happens before the first command starts. When ctx is
// cancelled before the runs and git facts are complete, the running command
// is stopped, the rest are not started, nothing is recorded, the work's
// status is unchanged, and the error matches ErrCancelled and ctx's error.
func (s *Service) VerifyWork(ctx context.Context, in VerifyInput) (VerificationResult, error) {
	if v, _ := s.env(EnvAllowVerification); v != "1" {
		return VerificationResult{}, disabled(msgVerificationDisabled)
	}
	switch n := len(in.Commands); {
	case n == 0:
		return VerificationResult{}, invalid(msgNoCommands)
	case n > maxVerifyCommands:
		return VerificationResult{}, invalid("Verification accepts at most 8 commands; received %d. Submit the remainder separately.", n)
	}
	workID, err := requiredText("workId", in.WorkID, limits.VerifyWorkItemWorkIDMaxLen)
	if err != nil {
		return VerificationResult{}, err
	}
	cmds := make([]verify.Parsed, len(in.Commands))
	for i, c := range in.Commands {
		if cmds[i], err = verify.Parse(c); err != nil {
			return VerificationResult{}, invalid("%s", err.Error())
		}
	}
	work, err := s.st.Client().WorkItem.Get(ctx, workID)
	if ent.IsNotFound(err) {
		return VerificationResult{}, unknownWork(workID)
	}
	if err != nil {
		return VerificationResult{}, wrapStore("read work "+workID, err)
	}
	root, err := s.workspace(ctx, in.Cwd, work)
	if err != nil {
		return VerificationResult{}, err
	}
	dirs := make([]string, len(cmds))
	for i, c := range cmds {
		if dirs[i], err = insideWorkspace(root, c.Cwd); err != nil {
			return VerificationResult{}, err
		}
	}

	env := security.ScrubEnv(s.environ())
	res := VerificationResult{Commands: make([]CommandEvidence, len(cmds))}
	failed := false
	started := 0
	for i, c := range cmds {
		if ctx.Err() != nil {
			break
		}
		started++
		res.Commands[i] = s.runCommand(ctx, i, c, dirs[i], env)
		if code := res.Commands[i].ExitCode; code == nil || *code != 0 {
			failed = true
		}
	}
	// A cancelled call (the client cancelled it, or went away) is not a
	// verdict on the work: a command it cut short would read as a failure
	// and block the work. Nothing is recorded and the status stays.
	if err := ctx.Err(); err != nil {
		return VerificationResult{}, cancelled(workID, started, len(cmds), err)
	}
	res.Git = verify.Git(ctx, root, env)
	if err := ctx.Err(); err != nil {
		return VerificationResult{}, cancelled(workID, started, len(cmds), err)
	}

	recs := make([]evidenceRecord, len(res.Commands))
	for i, ce := range res.Commands {
		exit := "unknown"
		if ce.ExitCode != nil {
			exit = itoa(*ce.ExitCode)
		}
		kind := "typecheck"
		if i < 4 {
			kind = commandSlots[i]
		}
		if recs[i], err = s.prepareEvidence(AddEvidenceInput{
			WorkID:  &workID,
			Kind:    kind,
			Trust:   "runtime_observed",
			Source:  EvidenceSource{Adapter: "agent-interop-runtime", Protocol: "local process"},
			Summary: preview(ce.Command, 1000) + " exited " + exit,
			Data:    ce,
		}); err != nil {
			return VerificationResult{}, err
		}
	}
	now := s.now()
	// Every command ran to its end: the result is recorded even if the
	// caller goes away from here on.
	ctx = context.WithoutCancel(ctx)
	ranIDs := res.EvidenceIDs
	err = s.st.Tx(ctx, func(tx *ent.Tx) error {
		res.EvidenceIDs = ranIDs // a team store may run the transaction again
		rows, err := s.insertEvidenceBulk(ctx, tx, recs, now)
		if err != nil {
			return err
		}
		for _, r := range rows {
			res.EvidenceIDs = append(res.EvidenceIDs, r.ID)
		}
		w, err := tx.WorkItem.Get(ctx, workID)
		if err != nil {
			return wrapStore("read work "+workID, err)
		}
		status := workitem.StatusInProgress
		switch {
		case failed:
			status = workitem.StatusBlocked
		case w.Status == workitem.StatusAccepted:
			status = workitem.StatusAccepted
		}
		upd := w.Update().SetStatus(status).SetUpdatedAt(now)
		if res.Git != nil {
			upd.SetChangedFiles(res.Git.ChangedFiles)
		}
		if err := upd.Exec(ctx); err != nil {
			return wrapStore("update work "+workID, err)
		}
		res.WorkStatus = string(status)
		return nil
	})
	if err != nil {
		return VerificationResult{}, err
	}
	return res, nil
}

// cancelled is VerifyWork's error for a cancelled call.
func cancelled(workID string, started, total int, cause error) error {
	return &cancelError{workID: workID, started: started, total: total, cause: cause}
}

type cancelError struct {
	workID         string
	started, total int
	cause          error
}

func (e *cancelError) Error() string {
	return fmt.Sprintf("Verification of %s was cancelled (%d of %d commands started); nothing was recorded and the work's status is unchanged", e.workID, e.started, e.total)
}

func (e *cancelError) Is(target error) bool { return target == ErrCancelled }
func (e *cancelError) Unwrap() error        { return e.cause }

func (s *Service) runCommand(ctx context.Context, i int, c verify.Parsed, dir string, env []string) CommandEvidence {
	name := commandSlots[i]
	if c.Label != "" {
		name = c.Label
	}
	start := s.clock.Now()
	var r verify.Result
	if err := ctx.Err(); err != nil {
		r.Err = "not started: canceled: " + err.Error()
	} else {
		r = verify.Run(ctx, c.Exe, c.Args, dir, env, s.verify)
	}
	end := s.clock.Now()
	return CommandEvidence{
		ID:              randomID("verification"),
		Name:            name,
		Command:         c.Line,
		Cwd:             dir,
		StartedAt:       Timestamp(start),
		FinishedAt:      Timestamp(end),
		DurationMs:      end.Sub(start).Milliseconds(),
		ExitCode:        r.ExitCode,
		Signal:          r.Signal,
		TimedOut:        r.TimedOut,
		Stdout:          security.RedactString(r.Stdout.String()),
		Stderr:          security.RedactString(r.Stderr.String()),
		StdoutTruncated: r.Stdout.Truncated(),
		StderrTruncated: r.Stderr.Truncated(),
		Error:           r.Err,
	}
}

// workspace resolves the verification root: the explicit cwd, else the
// verified cwd of the work's destination (else source) session. Never the
// runtime's own working directory.
func (s *Service) workspace(ctx context.Context, cwd *string, w *ent.WorkItem) (string, error) {
	if cwd != nil && strings.TrimSpace(*cwd) != "" {
		dir := strings.TrimSpace(*cwd)
		if !filepath.IsAbs(dir) {
			return "", invalid("Verification cwd must be an absolute path: %s", dir)
		}
		return realDir(dir)
	}
	session := w.DestinationSession
	if session == nil {
		session = w.SourceSession
	}
	if session == nil || s.sessions == nil {
		return "", invalid(msgNoWorkspace)
	}
	provider, nativeID, ok := strings.Cut(*session, ":")
	if !ok || provider == "" || nativeID == "" {
		return "", invalid(msgNoWorkspace)
	}
	info, found, err := s.sessions.LookupSession(ctx, provider, nativeID)
	if err != nil || !found || info.Cwd == "" || !filepath.IsAbs(info.Cwd) {
		return "", invalid(msgNoWorkspace)
	}
	return realDir(info.Cwd)
}

// realDir returns the real path of an existing directory.
func realDir(dir string) (string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", invalid("Verification workspace %s is not accessible: %v", dir, err)
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.IsDir() {
		return "", invalid("Verification workspace %s is not a directory", dir)
	}
	return real, nil
}

// insideWorkspace resolves a command's cwd against the real workspace root
// and refuses one whose real path (symlinks followed) leaves it.
func insideWorkspace(root, cwd string) (string, error) {
	if cwd == "" {
		return root, nil
	}
	p := cwd
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", invalid("Verification cwd %s is not accessible: %v", cwd, err)
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", invalid("Verification cwd %s escapes the workspace %s", cwd, root)
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.IsDir() {
		return "", invalid("Verification cwd %s is not a directory", cwd)
	}
	return real, nil
}
