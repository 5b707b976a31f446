package acpsim_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/testutil/acpsim"
)

// TestChecklistNamesFixtures checks that every fixture the checklist names
// exists and every recorded fixture is named by the checklist.
func TestChecklistNamesFixtures(t *testing.T) {
	b, err := os.ReadFile(acpsim.ChecklistPath())
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(string(b), -1) {
		named[m[1]] = true
	}
	have, err := acpsim.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	if len(have) == 0 {
		t.Fatal("no fixtures recorded")
	}
	for _, f := range have {
		if !named[f] {
			t.Errorf("fixture %s is not in CHECKLIST.md", f)
		}
		raw, err := os.ReadFile("testdata/" + f + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var fx acpsim.Fixture
		if err := json.Unmarshal(raw, &fx); err != nil || fx.Behaviour == "" || len(fx.Messages) == 0 {
			t.Errorf("fixture %s is malformed: %v", f, err)
		}
	}
	for _, row := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(row, "| ") || strings.HasPrefix(row, "| #") {
			continue
		}
		cells := strings.Split(row, "|")
		for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(cells[len(cells)-2], -1) {
			if _, err := os.Stat("testdata/" + m[1] + ".json"); err != nil {
				t.Errorf("checklist names fixture %s, which does not exist", m[1])
			}
		}
	}
}

// TestRequiresACPSubcommand runs the simulator without "acp".
func TestRequiresACPSubcommand(t *testing.T) {
	bin := acpsim.Build(t)
	out, err := exec.Command(bin).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "usage: fakecursor acp") {
		t.Fatalf("without acp: %v %s", err, out)
	}
}
