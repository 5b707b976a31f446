package claims_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
)

func TestEditConflicts(t *testing.T) {
	ctx := context.Background()
	st := teststore.Open(t)
	seedWork(t, st.Client(), "w1")
	svc := claims.New(st)
	base := t.TempDir()
	ws := filepath.Join(base, "repo")
	if err := os.MkdirAll(filepath.Join(ws, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	alias := filepath.Join(base, "alias") // a symlinked checkout of the same workspace
	if err := os.Symlink(ws, alias); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "src", "app.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A link inside the workspace to the claimed file: an edit through it
	// writes the claimed file.
	if err := os.Symlink(filepath.Join(ws, "src", "app.go"), filepath.Join(ws, "shortcut.go")); err != nil {
		t.Fatal(err)
	}
	for _, in := range []claims.AcquireInput{
		{WorkID: "w1", SessionID: "codex:holder", Resource: "src/app.go"},
		{WorkID: "w1", SessionID: "codex:holder", Resource: filepath.Join(alias, "docs"), Kind: claims.KindDirectory},
		{WorkID: "w1", SessionID: "codex:reader", Resource: "README.md", Mode: claims.ModeSharedRead},
	} {
		if _, err := svc.Acquire(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, session, workspace, path string
		want                           int
	}{
		{"absolute path of a relative claim", "claude-code:other", ws, filepath.Join(ws, "src/app.go"), 1},
		{"through the symlinked workspace", "claude-code:other", alias, filepath.Join(alias, "src", "app.go"), 1},
		{"relative to the session cwd", "claude-code:other", ws, "src/app.go", 1},
		{"cwd through the symlink, path resolved", "claude-code:other", alias, filepath.Join(ws, "src", "app.go"), 1},
		{"cwd resolved, path through the symlink", "claude-code:other", ws, filepath.Join(alias, "src", "app.go"), 1},
		{"relative to a symlinked cwd", "claude-code:other", alias, "src/app.go", 1},
		{"a new file through the symlinked cwd", "claude-code:other", ws, filepath.Join(alias, "docs", "sub", "new.md"), 1},
		{"a link in the workspace to a claimed file", "claude-code:other", alias, "shortcut.go", 1},
		{"an unclaimed file through the symlink", "claude-code:other", ws, filepath.Join(alias, "src", "other.go"), 0},
		{"a new file under a claimed directory", "claude-code:other", ws, filepath.Join(ws, "docs", "new.md"), 1},
		{"the holder itself", "codex:holder", ws, filepath.Join(ws, "src/app.go"), 0},
		{"an unclaimed file", "claude-code:other", ws, filepath.Join(ws, "src/other.go"), 0},
		{"a shared_read claim does not block", "claude-code:other", ws, filepath.Join(ws, "README.md"), 0},
		{"outside the workspace", "claude-code:other", ws, filepath.Join(base, "src/app.go"), 0},
	} {
		got, err := svc.EditConflicts(ctx, tc.session, tc.workspace, []string{tc.path})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != tc.want {
			t.Errorf("%s: %d conflicts %+v, want %d", tc.name, len(got), got, tc.want)
		}
		for _, c := range got {
			if c.Holder != "codex:holder" || c.ClaimID == "" || c.ExpiresAt.IsZero() {
				t.Errorf("%s: conflict %+v", tc.name, c)
			}
		}
	}
}
