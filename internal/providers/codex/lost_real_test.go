package codex_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// TestRealCodexResumeOfAThreadWhoseRolloutIsGone: the real app-server,
// restarted after the rollout file of a thread was deleted, answers
// thread/resume of it with "no rollout found"; the adapter reports
// providers.ErrSessionLost with codex's words (the simulator's mapping,
// TestSimResumeOfALostThread, checked against the real program).
func TestRealCodexResumeOfAThreadWhoseRolloutIsGone(t *testing.T) {
	fm := fakemodel.New(t)
	fm.SetDefault(fakemodel.Text("Hello from fake model."))
	s, env := realStack(t, fm, nil, nil)
	ctx := ctxFor(t, wait.Process)
	sess, err := s.reg.CreateSession(ctx, "codex", providers.CreateOptions{CWD: s.project})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.del.Send(ctx, delivery.SendRequest{Provider: "codex", NativeID: sess.NativeID, Text: "say hello 51c2", IdempotencyKey: "lost-1"})
	if err != nil {
		t.Fatal(err)
	}
	if op := waitOp(t, s, res.Operation.ID); op.Status != providers.StatusCompleted {
		t.Fatalf("op = %+v", op)
	}
	if err := s.codex.Close(); err != nil { // the app-server ends: nothing of the thread stays loaded
		t.Fatal(err)
	}

	var removed []string
	root := filepath.Join(env.Get("CODEX_HOME"), "sessions")
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(d.Name(), sess.NativeID) {
			removed = append(removed, p)
			return os.Remove(p)
		}
		return err
	})
	if err != nil || len(removed) == 0 {
		t.Fatalf("no rollout of thread %s under %s to remove (%v)", sess.NativeID, root, err)
	}

	s2, err := buildStack(stackConfig{dbPath: filepath.Join(env.Root(), "interop2.db"), program: realpeers.Require(t, realpeers.Codex),
		env: env.Environ(), dir: s.project})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s2.Close)
	_, err = s2.codex.ResumeSession(ctxFor(t, wait.Process), sess.NativeID)
	reason, lost := providers.LostReason(err)
	if !lost || !strings.Contains(reason, "no rollout found for thread id "+sess.NativeID) {
		t.Fatalf("resume of a thread whose rollout %q was removed = %v (lost %v, reason %q); want providers.ErrSessionLost with codex's words", removed, err, lost, reason)
	}
}
