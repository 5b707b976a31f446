package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCheckCompare: a static Go binary is accepted, a file that is not
// ELF is accepted (macOS and Windows binaries), a dynamically linked one
// and a missing file are refused, naming -compare.
func TestCheckCompare(t *testing.T) {
	dir := t.TempDir()
	notELF := filepath.Join(dir, "script")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path string
		refused    bool
	}{
		{"not ELF", notELF, false},
		{"missing", filepath.Join(dir, "none"), true},
	}
	if runtime.GOOS == "linux" {
		main := filepath.Join(dir, "main.go")
		if err := os.WriteFile(main, []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		static := filepath.Join(dir, "static")
		cmd := exec.Command("go", "build", "-o", static, main)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		cases = append(cases, struct {
			name, path string
			refused    bool
		}{"static Go binary", static, false})
		if dyn, err := dynamicELF("/bin/sh"); err == nil && dyn {
			cases = append(cases, struct {
				name, path string
				refused    bool
			}{"dynamically linked", "/bin/sh", true})
		} else {
			t.Log("/bin/sh is not a dynamically linked ELF here; that case is not run")
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkCompare(c.path)
			if (err != nil) != c.refused {
				t.Fatalf("checkCompare(%s) = %v, want refused %v", c.path, err, c.refused)
			}
			if err != nil && !strings.Contains(err.Error(), "-compare") {
				t.Errorf("error %q does not name -compare", err)
			}
		})
	}
}
