package main

import (
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestSuiteIsGoVets fails when the analyzers crossvet runs are not the ones
// the toolchain's `go vet` runs (`go tool vet help` lists them), so the
// Windows and macOS checks stay the vet the Linux step runs.
func TestSuiteIsGoVets(t *testing.T) {
	out, err := exec.Command("go", "tool", "vet", "help").CombinedOutput()
	if err != nil {
		t.Fatalf("go tool vet help: %v\n%s", err, out)
	}
	// The list: "Registered analyzers:", then one indented "name  summary"
	// line each, up to a blank line.
	_, list, ok := strings.Cut(string(out), "Registered analyzers:\n")
	if !ok {
		t.Fatalf("go tool vet help printed no \"Registered analyzers:\" list:\n%s", out)
	}
	list, _, _ = strings.Cut(strings.TrimLeft(list, "\n"), "\n\n")
	name := regexp.MustCompile(`^\s+(\S+)`)
	var vet []string
	for line := range strings.SplitSeq(list, "\n") {
		if m := name.FindStringSubmatch(line); m != nil {
			vet = append(vet, m[1])
		}
	}
	var ours []string
	for _, a := range vetSuite {
		ours = append(ours, a.Name)
	}
	slices.Sort(vet)
	slices.Sort(ours)
	if len(vet) == 0 || !slices.Equal(vet, ours) {
		t.Errorf("go tool vet help lists %v;\ncrossvet runs %v: make vetSuite the same", vet, ours)
	}
}
