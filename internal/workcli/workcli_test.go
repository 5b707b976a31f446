package workcli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
	"github.com/agent-interop/runtime/internal/workflow"
)

func TestRunWorkCLI(t *testing.T) {
	ctx := context.Background()
	clock := testclock.At(t, time.Date(2026, 1, 2, 3, 4, 5, 678_000_000, time.UTC))
	svc := workflow.New(teststore.Open(t), workflow.Options{Clock: clock, LookupEnv: func(string) (string, bool) { return "", false }})
	work := func(objective string, deps ...string) workflow.Work {
		t.Helper()
		w, err := svc.CreateWork(ctx, workflow.CreateWorkInput{Objective: objective, AcceptanceCriteria: []string{"it works"}, DependsOn: deps})
		if err != nil {
			t.Fatalf("CreateWork: %v", err)
		}
		return w
	}
	a := work("Make the importer idempotent")
	b := work("Document it", a.ID)
	session := "codex:x"
	if _, err := svc.AddEvidence(ctx, workflow.AddEvidenceInput{WorkID: &a.ID, SessionID: &session, Kind: "diff", Trust: "provider_observed",
		Source: workflow.EvidenceSource{Adapter: "codex"}, Summary: "a diff", Data: "diff"}); err != nil {
		t.Fatalf("AddEvidence: %v", err)
	}
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Run(ctx, svc, args, &out, &errb)
		return code, out.String(), errb.String()
	}
	tests := []struct {
		args     []string
		code     int
		contains []string
		json     bool
	}{
		{[]string{"list"}, 0, []string{"ID", "STATUS", a.ID, b.ID, "Make the importer idempotent"}, false},
		{[]string{}, 0, []string{a.ID}, false},
		{[]string{"list", "--json"}, 0, []string{`{"works":[`, `"objectivePreview":"Document it"`}, true},
		{[]string{"show", a.ID}, 0, []string{"Work", a.ID, "Acceptance criteria:", "  - it works", "Evidence:", "provider_observed"}, false},
		{[]string{"show", b.ID, "--json"}, 0, []string{`"work":{"id":"` + b.ID, `"dependsOn":["` + a.ID + `"]`}, true},
		{[]string{"graph"}, 0, []string{"1 sessions, 2 works, 1 evidence", "depends_on", "blocks"}, false},
		{[]string{"graph", "--work", b.ID, "--json"}, 0, []string{`"stateRecoveryRequired":null`, `"works":[{"id":"` + b.ID}, true},
		{[]string{"graph", "--dot"}, 0, []string{"digraph work {", `"` + b.ID + `" -> "` + a.ID + `" [label="depends_on"];`}, false},
		{[]string{"graph", "--mermaid"}, 0, []string{"flowchart LR", "-->|blocks|"}, false},
	}
	for _, tt := range tests {
		code, out, errs := run(tt.args...)
		if code != tt.code {
			t.Errorf("%v: exit %d (%s)", tt.args, code, errs)
		}
		for _, c := range tt.contains {
			if !strings.Contains(out, c) {
				t.Errorf("%v: output lacks %q:\n%s", tt.args, c, out)
			}
		}
		if tt.json && (!jsonValid(out) || strings.Count(out, "\n") != 1) {
			t.Errorf("%v: not one line of JSON: %s", tt.args, out)
		}
	}
	// One page at a time, or every page with --all.
	code, out, _ := run("list", "--limit", "1")
	if code != 0 || !strings.Contains(out, b.ID) || strings.Contains(out, a.ID) || !strings.Contains(out, "More: --cursor ") {
		t.Errorf("list --limit 1: %d\n%s", code, out)
	}
	cursor := strings.Fields(out[strings.Index(out, "More: --cursor ")+len("More: --cursor "):])[0]
	if code, out, _ := run("list", "--limit", "1", "--cursor", cursor); code != 0 || !strings.Contains(out, a.ID) || strings.Contains(out, b.ID) {
		t.Errorf("list --cursor: %d\n%s", code, out)
	}
	if code, out, _ := run("list", "--all", "--json"); code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(out, a.ID) || !strings.Contains(out, b.ID) {
		t.Errorf("list --all --json: %d\n%s", code, out)
	}
	if code, _, errs := run("list", "--cursor", "bogus"); code != 1 || !strings.Contains(errs, "cursor") {
		t.Errorf("list with a bad cursor: %d %s", code, errs)
	}
	// The streamed JSON graph is one record per line, recovery first.
	_, out, _ = run("graph", "--json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[0] != `{"stateRecoveryRequired":null}` || len(lines) != 8 {
		t.Errorf("graph --json lines = %q", lines)
	}
	for _, l := range lines {
		if !jsonValid(l) {
			t.Errorf("graph --json line is not JSON: %s", l)
		}
	}
	if code, _, errs := run("show", "work_missing"); code != 1 || !strings.Contains(errs, "Unknown work work_missing") {
		t.Errorf("show missing: %d %q", code, errs)
	}
	for _, bad := range [][]string{{"show"}, {"frobnicate"}, {"list", "extra"}} {
		if code, _, errs := run(bad...); code != 2 || !strings.Contains(errs, "usage: interop-runtime work") {
			t.Errorf("%v: %d %q", bad, code, errs)
		}
	}
}

func jsonValid(s string) bool { return json.Valid([]byte(strings.TrimSpace(s))) }
