package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/importstate"
)

// runCLI runs the command line with an environment of vars only.
func runCLI(vars map[string]string, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	env := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	code = Do(context.Background(), args, env, IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

func fixtureFile(dir, name string) string {
	return filepath.Join("..", "importstate", "testdata", dir, name)
}

func TestMigrateHelpTouchesNothing(t *testing.T) {
	home := t.TempDir()
	// 0.3.x files are where the defaults point: --help must not read them.
	dir := filepath.Join(home, ".agent-interop-runtime")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"HOME": home}
	for _, args := range [][]string{
		{"migrate", "--help"}, {"migrate", "-h"}, {"migrate", "import-state", "--help"}, {"migrate", "import-state", "-h"},
	} {
		code, out, errOut := runCLI(vars, args...)
		if code != 0 || !strings.Contains(out, "usage: interop-runtime migrate import-state") || errOut != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	code, out, _ := runCLI(vars, "migrate", "import-state", "--help")
	for _, flagName := range []string{"-state", "-conversations", "-dry-run", "-db", "-json"} {
		if code != 0 || !strings.Contains(out, flagName) {
			t.Errorf("import-state --help lacks %s:\n%s", flagName, out)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("--help created %v", entries)
	}
	if code, _, errOut := runCLI(vars, "migrate"); code != 2 || !strings.Contains(errOut, "usage:") {
		t.Errorf("migrate without a subcommand: %d %q", code, errOut)
	}
	if code, _, errOut := runCLI(vars, "migrate", "export"); code != 2 || !strings.Contains(errOut, `unknown subcommand "export"`) {
		t.Errorf("unknown subcommand: %d %q", code, errOut)
	}
	if code, _, errOut := runCLI(vars, "migrate", "import-state", "--nope"); code != 2 || !strings.Contains(errOut, "flag provided but not defined: -nope") {
		t.Errorf("bad flag: %d %q", code, errOut)
	}
}

func TestMigrateImportState(t *testing.T) {
	home := t.TempDir()
	db := filepath.Join(t.TempDir(), "store", "interop.db")
	// The 0.3.x files at their default place.
	dir := filepath.Join(home, ".agent-interop-runtime")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"state.json", "conversations.json"} {
		b, err := os.ReadFile(fixtureFile("normal", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{"HOME": home, "INTEROP_DB": filepath.Join(t.TempDir(), "other.db")}

	// --db wins over INTEROP_DB; a dry run leaves the store missing.
	code, out, errOut := runCLI(vars, "migrate", "import-state", "--dry-run", "--db", db)
	if code != 0 || !strings.Contains(out, "dry run: a real run would write 13 new records") || errOut != "" {
		t.Fatalf("dry run: %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("the dry run created the store: %v", err)
	}
	code, out, errOut = runCLI(vars, "migrate", "import-state", "--db", db)
	if code != 0 || !strings.Contains(out, "imported 13 new records in one transaction") || !strings.Contains(out, filepath.Join(dir, "state.json")) {
		t.Fatalf("import: %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(vars["INTEROP_DB"]); !os.IsNotExist(err) {
		t.Error("INTEROP_DB was used although --db was given")
	}
	code, out, _ = runCLI(vars, "migrate", "import-state", "--db", db, "--json")
	var rep importstate.Report
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || !rep.Unchanged || rep.Written || rep.New() != 0 || rep.Total() != 13 {
		t.Fatalf("repeat: %d %v\n%s", code, err, out)
	}

	// Conflicts: exit 1, the report names them, nothing written.
	code, out, _ = runCLI(vars, "migrate", "import-state", "--db", db,
		"--state", fixtureFile("conflicting", "state.json"), "--conversations", fixtureFile("conflicting", "conversations.json"))
	if code != 1 || !strings.Contains(out, "conflicts; nothing was written") || !strings.Contains(out, "objective differs") {
		t.Errorf("conflicting: %d\n%s", code, out)
	}
	// Malformed: exit 1, the position on stderr, nothing on stdout.
	code, out, errOut = runCLI(vars, "migrate", "import-state", "--db", db, "--state", fixtureFile("malformed", "syntax-state.json"))
	if code != 1 || out != "" || !strings.Contains(errOut, "syntax-state.json:7:5: not valid JSON") {
		t.Errorf("malformed: %d %q %q", code, out, errOut)
	}
	// A named file that does not exist.
	code, _, errOut = runCLI(vars, "migrate", "import-state", "--db", db, "--conversations", filepath.Join(home, "missing.json"))
	if code != 1 || !strings.Contains(errOut, "missing.json") {
		t.Errorf("missing file: %d %q", code, errOut)
	}
}
