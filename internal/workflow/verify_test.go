package workflow

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/testutil/wait"
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

// TestVerifyTimeoutAndKillEscalation: a command still running at its
// timeout gets SIGTERM, and SIGKILL after the kill grace if it ignores
// SIGTERM. Both bounds run on the service's clock, driven here by the
// mock: the test takes the time its two processes take to start.
func TestVerifyTimeoutAndKillEscalation(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ready := filepath.Join(t.TempDir(), "ready")
	f, w, dir := verifyFixture(t, func(o *Options) {
		o.VerifyTimeout = 3 * time.Second
		o.KillGrace = 2 * time.Second
		o.Environ = func() []string {
			return []string{"PATH=/usr/bin:/bin", envHelper + "=ignore-term", envHelperReady + "=" + ready}
		}
	})
	ctx, cancel := context.WithTimeout(f.ctx, 30*time.Second)
	defer cancel()
	timeouts := f.clock.Trap().NewTimer("verify", "timeout")
	defer timeouts.Close()
	graces := f.clock.Trap().NewTimer("verify", "kill grace")
	defer graces.Close()
	type result struct {
		res VerificationResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := f.svc.VerifyWork(f.ctx, VerifyInput{WorkID: w.ID, Cwd: &dir, Commands: []VerifyCommand{
			{Executable: "sleep", Args: []string{"30"}},
			{Executable: exe, Args: []string{"-test.run=^$"}},
		}})
		done <- result{res, err}
	}()
	// expire waits for the next timer of trap, lets it be armed, and
	// moves the clock to it (when ok, a condition, holds).
	expire := func(trap *quartz.Trap, what string, ok func() bool) {
		t.Helper()
		call, err := trap.Wait(ctx)
		if err != nil {
			t.Fatalf("waiting for the %s timer: %v", what, err)
		}
		call.MustRelease(ctx)
		if ok != nil {
			wait.For(t, "the condition before the "+what, wait.InProcess, ok)
		}
		f.clock.Advance(call.Duration).MustWait(ctx)
	}
	expire(timeouts, "sleep's timeout", nil)
	// sleep ends on SIGTERM: its grace timer is armed, then stopped.
	call, err := graces.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	call.MustRelease(ctx)
	expire(timeouts, "helper's timeout", func() bool { _, err := os.Stat(ready); return err == nil })
	expire(graces, "helper's kill grace", nil)
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("verification did not end")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	sleep, stubborn := r.res.Commands[0], r.res.Commands[1]
	if !sleep.TimedOut || sleep.ExitCode != nil || sleep.Signal == nil || *sleep.Signal != "SIGTERM" {
		t.Fatalf("sleep = %+v", sleep)
	}
	if !stubborn.TimedOut || stubborn.Signal == nil || *stubborn.Signal != "SIGKILL" || stubborn.Stdout != "ready\n" {
		t.Fatalf("SIGTERM-ignoring helper = %+v", stubborn)
	}
	if r.res.WorkStatus != "blocked" {
		t.Fatalf("status %s", r.res.WorkStatus)
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

// TestVerifyCancelledRecordsNothing: a verification whose call is
// cancelled (the client cancels the request, or goes away) while a command
// runs stops that command, starts no other, and leaves no evidence and no
// status change behind; cancelled before it begins, nothing runs.
func TestVerifyCancelledRecordsNothing(t *testing.T) {
	t.Run("while the first command runs", func(t *testing.T) {
		f, w, dir := verifyFixture(t)
		ctx, cancel := context.WithCancel(f.ctx)
		defer cancel()
		// Cancel once the first command runs (it says so with a file), not
		// after a fixed time: on a loaded machine the run may not have begun.
		started := filepath.Join(t.TempDir(), "started")
		second := filepath.Join(t.TempDir(), "second ran")
		go func() {
			defer cancel()
			wait.Until(wait.Process, func() bool { _, err := os.Stat(started); return err == nil })
		}()
		// A run that waited for the command would find "finished" written.
		finished := filepath.Join(t.TempDir(), "finished")
		first := VerifyCommand{Executable: "sh", Args: []string{"-c", "touch '" + started + "' && sleep 30 && touch '" + finished + "'"}}
		then := VerifyCommand{Executable: "touch", Args: []string{second}}
		res, err := f.svc.VerifyWork(ctx, VerifyInput{WorkID: w.ID, Cwd: &dir, Commands: []VerifyCommand{first, then}})
		if !errors.Is(err, ErrCancelled) || !errors.Is(err, context.Canceled) || len(res.Commands) != 0 {
			t.Fatalf("VerifyWork = %+v, %v; want ErrCancelled wrapping context.Canceled", res, err)
		}
		if want := "Verification of " + w.ID + " was cancelled (1 of 2 commands started); nothing was recorded and the work's status is unchanged"; err.Error() != want {
			t.Fatalf("error %q, want %q", err, want)
		}
		if _, err := os.Stat(finished); !os.IsNotExist(err) {
			t.Fatalf("VerifyWork waited for the cancelled command to finish: %v", err)
		}
		if _, err := os.Stat(second); !os.IsNotExist(err) {
			t.Fatalf("the second command ran after the cancel: %v", err)
		}
		assertUntouched(t, f, w)
	})
	t.Run("before the first command", func(t *testing.T) {
		f, w, dir := verifyFixture(t)
		ctx, cancel := context.WithCancel(f.ctx)
		cancel()
		ran := filepath.Join(t.TempDir(), "ran")
		_, err := f.svc.VerifyWork(ctx, VerifyInput{WorkID: w.ID, Cwd: &dir, Commands: []VerifyCommand{{Executable: "touch", Args: []string{ran}}}})
		if !errors.Is(err, context.Canceled) { // refused at the first store read
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if _, err := os.Stat(ran); !os.IsNotExist(err) {
			t.Fatalf("a command ran although the call was cancelled: %v", err)
		}
		assertUntouched(t, f, w)
	})
}

// assertUntouched fails when w has evidence or another status than when
// it was created.
func assertUntouched(t *testing.T, f *fixture, w Work) {
	t.Helper()
	d, err := f.svc.GetWork(f.ctx, GetWorkInput{WorkID: w.ID, FullEvidence: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.Work.Status != w.Status || len(d.Evidence) != 0 || len(d.Work.EvidenceIDs) != 0 {
		t.Fatalf("work after a cancelled verification: status %q (was %q), evidence %d %v", d.Work.Status, w.Status, len(d.Evidence), d.Work.EvidenceIDs)
	}
}
