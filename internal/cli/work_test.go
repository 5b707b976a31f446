package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/app"
	"github.com/agent-interop/runtime/internal/workflow"
)

// workFlags are every flag `work` accepts; its help must list each one.
var workFlags = []string{"-json", "-dot", "-mermaid", "-all", "-status", "-session", "-limit", "-cursor", "-work", "-depth", "-db"}

// TestWorkHelpListsEveryFlag: every way a person asks for work's help
// shows all its flags, not only after a wrong flag.
func TestWorkHelpListsEveryFlag(t *testing.T) {
	for _, args := range [][]string{
		{"work", "--help"}, {"help", "work"}, {"work", "list", "--help"}, {"work", "graph", "--help"}, {"work", "-h"},
	} {
		code, out, errOut := run(t, map[string]string{"INTEROP_DB": "/nonexistent/dir/x.db"}, args...)
		if code != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
			continue
		}
		for _, f := range workFlags {
			if !strings.Contains(out, "  "+f+" ") && !strings.Contains(out, "  "+f+"\n") {
				t.Errorf("%v: flag %s missing from\n%s", args, f, out)
			}
		}
		if !strings.Contains(out, "JSON Lines") {
			t.Errorf("%v: does not say graph --json is JSON Lines:\n%s", args, out)
		}
	}
}

// TestWorkAndDeskTakeDB: --db names the store, over INTEROP_DB.
func TestWorkAndDeskTakeDB(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "seeded.db")
	a, err := app.Open(ctx, app.Config{Env: func(k string) (string, bool) {
		if k == "INTEROP_DB" {
			return db, true
		}
		return "", false
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Workflow.CreateWork(ctx, workflow.CreateWorkInput{Objective: "Seeded objective", AcceptanceCriteria: []string{"it is listed"}}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	env := map[string]string{"HOME": t.TempDir(), "INTEROP_DB": "/nonexistent/dir/x.db"}
	for _, args := range [][]string{
		{"work", "--db", db, "list"}, {"work", "list", "--db=" + db}, {"work", "list", "--json", "-db", db},
	} {
		code, out, errOut := run(t, env, args...)
		if code != 0 || !strings.Contains(out, "Seeded objective") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	if code, _, errOut := run(t, env, "work", "list", "--db"); code != 2 || !strings.Contains(errOut, "--db needs a value") {
		t.Errorf("work list --db: exit %d, stderr %q", code, errOut)
	}
	// The desk accepts --db (it is checked after the other flags; a
	// password in a URL is refused before anything opens).
	code, _, errOut := run(t, env, "desk", "--db", "postgres://u:secret@127.0.0.1/x")
	if code != 2 || !strings.Contains(errOut, "carries a password") || strings.Contains(errOut, "secret") {
		t.Errorf("desk --db with a password: exit %d, stderr %q", code, errOut)
	}
	code, out, _ := run(t, nil, "desk", "--help")
	if code != 0 || !strings.Contains(out, "-db") {
		t.Errorf("desk --help does not list --db: %q", out)
	}
}

// TestSetupHelpListsTheClientsFlags: install is Codex's and does not list
// Cursor's --project; cursor-setup does.
func TestSetupHelpListsTheClientsFlags(t *testing.T) {
	tests := []struct {
		cmd       string
		want, not []string
	}{
		{"install", []string{"-write", "-profile", "-read-only", "-http", "-url", "-command"}, []string{"-project"}},
		{"cursor-setup", []string{"-write", "-project", "-read-only"}, nil},
	}
	for _, tt := range tests {
		code, out, errOut := run(t, nil, tt.cmd, "--help")
		if code != 0 {
			t.Fatalf("%s --help: exit %d %q", tt.cmd, code, errOut)
		}
		for _, f := range tt.want {
			if !strings.Contains(out, "  "+f) {
				t.Errorf("%s --help lacks %s:\n%s", tt.cmd, f, out)
			}
		}
		for _, f := range tt.not {
			if strings.Contains(out, "  "+f) {
				t.Errorf("%s --help lists %s, which is not its client's:\n%s", tt.cmd, f, out)
			}
		}
	}
}

// TestSetupHTTPSaysHowTheTokenPairs: setup --http tells how the client's
// AGENT_INTEROP_HTTP_TOKEN meets the server's token.
func TestSetupHTTPSaysHowTheTokenPairs(t *testing.T) {
	code, _, errOut := run(t, map[string]string{"HOME": t.TempDir()}, "setup", "codex", "--http")
	if code != 0 {
		t.Fatalf("setup codex --http: exit %d %q", code, errOut)
	}
	for _, want := range []string{"AGENT_INTEROP_HTTP_TOKEN", "must equal the server's", ".agent-interop-runtime/http-<port>.token"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("setup --http does not say %q:\n%s", want, errOut)
		}
	}
}

// TestEveryStoreCommandTakesDB: every command that opens a store says in
// its help that --db names it (agents passes its flags to providers).
func TestEveryStoreCommandTakesDB(t *testing.T) {
	env := map[string]string{"HOME": t.TempDir(), "INTEROP_DB": "/nonexistent/dir/x.db"}
	for _, name := range []string{"serve", "serve-http", "doctor", "providers", "agents", "sessions", "work", "migrate", "desk"} {
		code, out, errOut := run(t, env, name, "--help")
		if code != 0 || !strings.Contains(out, "-db") {
			t.Errorf("%s --help: exit %d, no --db in\n%s%s", name, code, out, errOut)
		}
	}
}
