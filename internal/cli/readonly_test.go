package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadOnlyCommandsCreateNoStore: a command that only reads, pointed at
// a store that does not exist, fails naming the path and serve (or, for
// providers and sessions, which learn what they list from the providers,
// runs over a throw-away store) and leaves neither the file nor its
// directory behind.
func TestReadOnlyCommandsCreateNoStore(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
	}{
		{"work default", []string{"work"}, 1},
		{"work list", []string{"work", "list"}, 1},
		{"work list --all", []string{"work", "list", "--all"}, 1},
		{"work show", []string{"work", "show", "w-1"}, 1},
		{"work graph", []string{"work", "graph"}, 1},
		{"desk", []string{"desk", "--port", "0"}, 1},
		{"sessions", []string{"sessions", "--provider", "cursor", "--json"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			dir := filepath.Join(home, "missing")
			db := filepath.Join(dir, "x.db")
			env := map[string]string{"HOME": home, "INTEROP_DB": db, "XDG_STATE_HOME": filepath.Join(home, "state")}
			code, _, errOut := run(t, env, tc.args...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.wantCode, errOut)
			}
			if tc.wantCode != 0 && (!strings.Contains(errOut, db) || !strings.Contains(errOut, "serve")) {
				t.Errorf("stderr %q names neither the path nor serve", errOut)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("%s exists after %v (err %v)", dir, tc.args, err)
			}
		})
	}
}
