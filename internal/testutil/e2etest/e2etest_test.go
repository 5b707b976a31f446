package e2etest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestBuildFlagsFollowRace(t *testing.T) {
	if got := slices.Contains(BuildFlags(), "-race"); got != Race() {
		t.Fatalf("BuildFlags() = %v with Race() = %v", BuildFlags(), Race())
	}
}

// TestBuildLogsRacesOfItsRuns builds a program with a data race: under
// -race its report lands where RaceReports reads it; without, nothing.
func TestBuildLogsRacesOfItsRuns(t *testing.T) {
	Require(t) // builds and runs a program
	mod := t.TempDir()
	src := "package main\n\nimport \"sync\"\n\nfunc main() {\n\tx := 0\n\tvar wg sync.WaitGroup\n\tfor range 2 {\n\t\twg.Add(1)\n\t\tgo func() { defer wg.Done(); x++ }()\n\t}\n\twg.Wait()\n\tprintln(x)\n}\n"
	for name, body := range map[string]string{"go.mod": "module racy\n\ngo 1.24\n", "main.go": src} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	bin, err := Build(mod, dir, "racy", ".")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")} // a test's own environment: no GORACE
	_ = cmd.Run()
	reports, err := RaceReports(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := Race() && runtime.GOOS != "windows"; strings.Contains(reports, DataRace) != want {
		t.Fatalf("race build %v: reports %q", Race(), reports)
	}
}
