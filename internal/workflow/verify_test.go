package workflow

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/testutil/e2etest"
)

func verifyFixture(t *testing.T, mod ...func(*Options)) (*fixture, Work, string) {
	t.Helper()
	f := newFixture(t, mod...)
	f.env[EnvAllowVerification] = "1"
	w := f.work("verify me")
	return f, w, t.TempDir()
}

func text(s string) VerifyCommand { return VerifyCommand{Text: &s} }

func TestVerifyRefusals(t *testing.T) {
	f, w, dir := verifyFixture(t)
	nine := make([]VerifyCommand, 9)
	for i := range nine {
		nine[i] = text("true")
	}
	tests := []struct {
		name string
		env  string
		in   VerifyInput
		kind error
		msg  string
	}{
		{"disabled", "0", VerifyInput{WorkID: w.ID, Cwd: &dir, Commands: []VerifyCommand{text("true")}}, ErrDisabled,
			"Verification is disabled by default; set INTEROP_ALLOW_VERIFICATION=1 only for a trusted local MCP client"},
		{"no commands", "1", VerifyInput{WorkID: w.ID, Cwd: &dir}, ErrInvalid, "Verification requires at least one command"},
		{"nine commands", "1", VerifyInput{WorkID: w.ID, Cwd: &dir, Commands: nine}, ErrInvalid,
			"Verification accepts at most 8 commands; received 9. Submit the remainder separately."},
		{"metachar", "1", VerifyInput{WorkID: w.ID, Cwd: &dir, Commands: []VerifyCommand{text("true"), text("go test ./... && rm -rf /")}}, ErrInvalid,
			"Unsafe verification command: go test ./... && rm -rf /"},
		{"dollar", "1", VerifyInput{WorkID: w.ID, Cwd: &dir, Commands: []VerifyCommand{text("echo '$HOME'")}}, ErrInvalid, "Unsafe verification command: echo '$HOME'"},
		{"unterminated", "1", VerifyInput{WorkID: w.ID, Cwd: &dir, Commands: []VerifyCommand{text(`echo "oops`)}}, ErrInvalid, "Unterminated quote"},
		{"empty", "1", VerifyInput{WorkID: w.ID, Cwd: &dir, Commands: []VerifyCommand{text("  ")}}, ErrInvalid, "Verification commands must not be empty"},
		{"empty executable", "1", VerifyInput{WorkID: w.ID, Cwd: &dir, Commands: []VerifyCommand{{Executable: " "}}}, ErrInvalid, "Verification commands must not be empty"},
		{"unknown work", "1", VerifyInput{WorkID: "work_x", Cwd: &dir, Commands: []VerifyCommand{text("true")}}, ErrNotFound, "Unknown work work_x"},
		{"no workspace", "1", VerifyInput{WorkID: w.ID, Commands: []VerifyCommand{text("true")}}, ErrInvalid,
			"Verification requires an explicit cwd or a work item linked to a native session with a verified workspace"},
		{"relative workspace", "1", VerifyInput{WorkID: w.ID, Cwd: ptr("."), Commands: []VerifyCommand{text("true")}}, ErrInvalid, "must be an absolute path"},
		{"escaping cwd", "1", VerifyInput{WorkID: w.ID, Cwd: &dir, Commands: []VerifyCommand{{Executable: "true", Cwd: ptr("..")}}}, ErrInvalid, "escapes the workspace"},
		{"escaping absolute cwd", "1", VerifyInput{WorkID: w.ID, Cwd: &dir, Commands: []VerifyCommand{{Executable: "true", Cwd: ptr("/")}}}, ErrInvalid, "escapes the workspace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.env[EnvAllowVerification] = tt.env
			err := f.unchanged(func() error { _, err := f.svc.VerifyWork(f.ctx, tt.in); return err })
			wantErr(t, err, tt.kind, tt.msg)
		})
	}
	t.Run("symlink out of the workspace", func(t *testing.T) {
		f.env[EnvAllowVerification] = "1"
		if err := os.Symlink(t.TempDir(), filepath.Join(dir, "out")); err != nil {
			t.Fatal(err)
		}
		err := f.unchanged(func() error {
			_, err := f.svc.VerifyWork(f.ctx, VerifyInput{WorkID: w.ID, Cwd: &dir, Commands: []VerifyCommand{{Executable: "true", Cwd: ptr("out")}}})
			return err
		})
		wantErr(t, err, ErrInvalid, "escapes the workspace")
	})
}

func TestVerifyRunsCommandsAndRecordsEvidence(t *testing.T) {
	f, w, dir := verifyFixture(t)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := f.svc.VerifyWork(f.ctx, VerifyInput{WorkID: w.ID, Cwd: &dir, Commands: []VerifyCommand{
		text("echo 'hello world'"),
		{Executable: "pwd", Cwd: ptr("sub"), Label: ptr("where")},
		text("true"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	c := res.Commands
	if len(c) != 3 || *c[0].ExitCode != 0 || c[0].Stdout != "hello world\n" || c[0].Name != "test" || c[0].Command != "echo 'hello world'" {
		t.Fatalf("command 0 = %+v", c[0])
	}
	if c[1].Name != "where" || c[1].Stdout != filepath.Join(real, "sub")+"\n" || c[1].Cwd != filepath.Join(real, "sub") {
		t.Fatalf("command 1 = %+v", c[1])
	}
	if c[2].Name != "typecheck" || !strings.HasPrefix(c[0].ID, "verification_") || c[0].TimedOut || c[0].Signal != nil {
		t.Fatalf("command 2 = %+v", c[2])
	}
	if res.Git != nil {
		t.Fatalf("git facts outside a repository: %+v", res.Git)
	}
	if res.WorkStatus != "in_progress" || len(res.EvidenceIDs) != 3 {
		t.Fatalf("result = %+v", res)
	}
	kinds := []string{"test", "lint", "typecheck"}
	for i, id := range res.EvidenceIDs {
		e, err := f.svc.GetEvidence(f.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind != kinds[i] || e.Trust != "runtime_observed" || e.Source.Adapter != "agent-interop-runtime" || e.Source.Protocol != "local process" {
			t.Fatalf("evidence %d = %+v", i, e)
		}
		if want := c[i].Command + " exited 0"; e.Summary != want {
			t.Fatalf("summary %q, want %q", e.Summary, want)
		}
	}
	d, _ := f.svc.GetWork(f.ctx, GetWorkInput{WorkID: w.ID, FullEvidence: true})
	if d.Work.Status != "in_progress" {
		t.Fatalf("work status %s", d.Work.Status)
	}
}

func TestVerifyFailureBlocksWorkAndAcceptedStays(t *testing.T) {
	f, w, dir := verifyFixture(t)
	res, err := f.svc.VerifyWork(f.ctx, VerifyInput{WorkID: w.ID, Cwd: &dir, Commands: []VerifyCommand{
		text("true"), text("false"), text("definitely-not-a-program-xyz"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.WorkStatus != "blocked" || *res.Commands[1].ExitCode != 1 || res.Commands[2].ExitCode != nil || res.Commands[2].Error == "" {
		t.Fatalf("result = %+v", res)
	}
	e, _ := f.svc.GetEvidence(f.ctx, res.EvidenceIDs[2])
	if !strings.HasSuffix(e.Summary, " exited unknown") {
		t.Fatalf("summary %q", e.Summary)
	}
	f.st.Client().WorkItem.UpdateOneID(w.ID).SetStatus("accepted").ExecX(f.ctx)
	res, err = f.svc.VerifyWork(f.ctx, VerifyInput{WorkID: w.ID, Cwd: &dir, Commands: []VerifyCommand{text("true")}})
	if err != nil || res.WorkStatus != "accepted" {
		t.Fatalf("accepted work after passing verification: %+v %v", res, err)
	}
}

func TestVerifyWorkspaceFromSession(t *testing.T) {
	dir := t.TempDir()
	f, _, _ := verifyFixture(t, func(o *Options) { o.Sessions = fakeSessions{"codex:abc": {Cwd: dir}} })
	w, err := f.svc.CreateWork(f.ctx, CreateWorkInput{Objective: "o", AcceptanceCriteria: []string{"a"}, SourceSession: ptr("codex:abc")})
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.svc.VerifyWork(f.ctx, VerifyInput{WorkID: w.ID, Commands: []VerifyCommand{text("pwd")}})
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if res.Commands[0].Stdout != real+"\n" {
		t.Fatalf("ran in %q, want %q", res.Commands[0].Stdout, real)
	}
	// A session the provider layer does not know gives no workspace.
	w2, _ := f.svc.CreateWork(f.ctx, CreateWorkInput{Objective: "o", AcceptanceCriteria: []string{"a"}, SourceSession: ptr("codex:gone")})
	_, err = f.svc.VerifyWork(f.ctx, VerifyInput{WorkID: w2.ID, Commands: []VerifyCommand{text("pwd")}})
	wantErr(t, err, ErrInvalid, msgNoWorkspace)
}

// TestVerifyTimeoutAndKillEscalation runs real processes past a real
// 3 s timeout (the kill escalation is the operating system's), so it is in
// the end-to-end tier, not the unit tier.
func TestVerifyTimeoutAndKillEscalation(t *testing.T) {
	e2etest.Require(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, w, dir := verifyFixture(t, func(o *Options) {
		// Long enough for the helper (this test binary) to start and
		// ignore SIGTERM on a loaded machine before its timeout comes.
		o.VerifyTimeout = 3 * time.Second
		o.Environ = func() []string { return []string{"PATH=/usr/bin:/bin", envHelper + "=ignore-term"} }
	})
	start := time.Now()
	res, err := f.svc.VerifyWork(f.ctx, VerifyInput{WorkID: w.ID, Cwd: &dir, Commands: []VerifyCommand{
		{Executable: "sleep", Args: []string{"30"}},
		{Executable: exe, Args: []string{"-test.run=^$"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	// A bound, not a measure: the 30 s sleep was stopped at its timeout,
	// not waited for.
	if elapsed := time.Since(start); elapsed > 25*time.Second {
		t.Fatalf("verification took %v", elapsed)
	}
	sleep, stubborn := res.Commands[0], res.Commands[1]
	if !sleep.TimedOut || sleep.ExitCode != nil || sleep.Signal == nil || *sleep.Signal != "SIGTERM" {
		t.Fatalf("sleep = %+v", sleep)
	}
	if !stubborn.TimedOut || stubborn.Signal == nil || *stubborn.Signal != "SIGKILL" || stubborn.Stdout != "ready\n" {
		t.Fatalf("SIGTERM-ignoring helper = %+v", stubborn)
	}
	if res.WorkStatus != "blocked" {
		t.Fatalf("status %s", res.WorkStatus)
	}
}

func TestVerifyOutputCap(t *testing.T) {
	f, w, dir := verifyFixture(t)
	res, err := f.svc.VerifyWork(f.ctx, VerifyInput{WorkID: w.ID, Cwd: &dir, Commands: []VerifyCommand{text("seq 1 200000")}})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Commands[0]
	if !c.StdoutTruncated || len(c.Stdout) != DefaultOutputCap || c.StderrTruncated || *c.ExitCode != 0 {
		t.Fatalf("stdout %d bytes, truncated %v, exit %v", len(c.Stdout), c.StdoutTruncated, c.ExitCode)
	}
	if !strings.HasPrefix(c.Stdout, "1\n2\n3\n") {
		t.Fatalf("stdout starts %q", c.Stdout[:10])
	}
}

func TestVerifyScrubsCredentialEnvironment(t *testing.T) {
	f, w, dir := verifyFixture(t, func(o *Options) {
		o.Environ = func() []string {
			return []string{"PATH=/usr/bin:/bin", "GITHUB_TOKEN=ghp_x", "OPENAI_API_KEY=sk-x", "DB_PASSWORD=p", "AWS_SECRET_ACCESS_KEY=s",
				"MY_CREDENTIALS=c", "AUTH=a", "SAFE_SETTING=kept", "GIT_AUTHOR_NAME=kept too"}
		}
	})
	res, err := f.svc.VerifyWork(f.ctx, VerifyInput{WorkID: w.ID, Cwd: &dir, Commands: []VerifyCommand{text("env")}})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Commands[0].Stdout
	for _, gone := range []string{"GITHUB_TOKEN", "OPENAI_API_KEY", "DB_PASSWORD", "AWS_SECRET_ACCESS_KEY", "MY_CREDENTIALS", "AUTH="} {
		if strings.Contains(out, gone) {
			t.Errorf("child saw %s:\n%s", gone, out)
		}
	}
	for _, kept := range []string{"SAFE_SETTING=kept", "GIT_AUTHOR_NAME=kept too", "PATH="} {
		if !strings.Contains(out, kept) {
			t.Errorf("child lost %s:\n%s", kept, out)
		}
	}
}

func TestVerifyGitFacts(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	f, w, dir := verifyFixture(t)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	write("tracked.txt", "v1")
	write("staged.txt", "v1")
	git("add", ".")
	git("commit", "-q", "-m", "init")
	write("tracked.txt", "v2")
	write("staged.txt", "v2")
	git("add", "staged.txt")
	write("new.txt", "new")
	res, err := f.svc.VerifyWork(f.ctx, VerifyInput{WorkID: w.ID, Cwd: &dir, Commands: []VerifyCommand{text("true")}})
	if err != nil {
		t.Fatal(err)
	}
	g := res.Git
	real, _ := filepath.EvalSymlinks(dir)
	if g == nil || g.RepoRoot != real || g.Commit == nil || len(*g.Commit) != 40 || g.Branch == nil || *g.Branch != "main" {
		t.Fatalf("git = %+v", g)
	}
	if !reflect.DeepEqual(g.Staged, []string{"staged.txt"}) || !reflect.DeepEqual(g.Unstaged, []string{"tracked.txt"}) ||
		!reflect.DeepEqual(g.Untracked, []string{"new.txt"}) || !reflect.DeepEqual(g.ChangedFiles, []string{"new.txt", "staged.txt", "tracked.txt"}) {
		t.Fatalf("git lists = %+v", g)
	}
	d, _ := f.svc.GetWork(f.ctx, GetWorkInput{WorkID: w.ID, FullEvidence: true})
	if !reflect.DeepEqual(d.Work.ChangedFiles, g.ChangedFiles) {
		t.Fatalf("work changedFiles %v", d.Work.ChangedFiles)
	}
}

func TestVerifyCanceledStillRecordsWhatRan(t *testing.T) {
	f, w, dir := verifyFixture(t)
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	// Cancel once the first command runs (it says so with a file), not
	// after a fixed time: on a loaded machine the run may not have begun.
	started := filepath.Join(t.TempDir(), "started")
	go func() {
		defer cancel()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(started); err == nil {
				return
			}
			time.Sleep(10 * time.Millisecond) // polling a condition, bounded by the deadline
		}
	}()
	first := VerifyCommand{Executable: "sh", Args: []string{"-c", "touch '" + started + "' && exec sleep 30"}}
	res, err := f.svc.VerifyWork(ctx, VerifyInput{WorkID: w.ID, Cwd: &dir, Commands: []VerifyCommand{first, text("true")}})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Commands[0]; !strings.HasPrefix(c.Error, "canceled") || c.ExitCode != nil {
		t.Fatalf("first = %+v", c)
	}
	if c := res.Commands[1]; !strings.HasPrefix(c.Error, "not started: canceled") {
		t.Fatalf("second = %+v", c)
	}
	if res.WorkStatus != "blocked" || len(res.EvidenceIDs) != 2 {
		t.Fatalf("result = %+v", res)
	}
}
