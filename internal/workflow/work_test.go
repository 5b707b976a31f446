package workflow

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/catalogs/limits"
)

var workIDPattern = regexp.MustCompile(`^work_\d{13}_[0-9a-z]{6}$`)

func TestCreateWork(t *testing.T) {
	f := newFixture(t)
	dep := f.work("first")
	w, err := f.svc.CreateWork(f.ctx, CreateWorkInput{
		Objective:           "  Add retries  ",
		AcceptanceCriteria:  []string{" retries 3 times ", "", "logs each retry"},
		SourceSession:       ptr("codex:abc"),
		Risks:               []string{"flaky"},
		UnresolvedQuestions: []string{"backoff?"},
		DependsOn:           []string{dep.ID, dep.ID},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !workIDPattern.MatchString(w.ID) {
		t.Errorf("id %q does not match %v", w.ID, workIDPattern)
	}
	if w.Objective != "Add retries" || w.Status != "open" || *w.SourceSession != "codex:abc" {
		t.Errorf("work = %+v", w)
	}
	if got := strings.Join(w.AcceptanceCriteria, "|"); got != "retries 3 times|logs each retry" {
		t.Errorf("criteria = %q", got)
	}
	if len(w.DependsOn) != 1 || w.DependsOn[0] != dep.ID {
		t.Errorf("dependsOn = %v", w.DependsOn)
	}
	if w.CreatedAt != "2026-01-02T03:04:05.678Z" || w.UpdatedAt != w.CreatedAt {
		t.Errorf("timestamps %s %s", w.CreatedAt, w.UpdatedAt)
	}
	raw, _ := json.Marshal(w)
	for _, key := range []string{`"evidenceIds":[]`, `"changedFiles":[]`, `"dependsOn":[`} {
		if !strings.Contains(string(raw), key) {
			t.Errorf("JSON %s lacks %s", raw, key)
		}
	}
	if raw, _ := json.Marshal(dep); strings.Contains(string(raw), "dependsOn") {
		t.Errorf("work without dependencies shows dependsOn: %s", raw)
	}
}

func TestCreateWorkRejects(t *testing.T) {
	f := newFixture(t)
	existing := f.work("existing")
	long := strings.Repeat("x", limits.CreateWorkItemObjectiveMaxLen+1)
	many := make([]string, limits.CreateWorkItemAcceptanceCriteriaMaxItems+1)
	for i := range many {
		many[i] = "r"
	}
	tests := []struct {
		name string
		in   CreateWorkInput
		kind error
		msg  string
	}{
		{"blank objective", CreateWorkInput{Objective: "  ", AcceptanceCriteria: []string{"a"}}, ErrInvalid, "objective must not be blank"},
		{"no criteria", CreateWorkInput{Objective: "o"}, ErrInvalid, "Work requires at least one acceptance criterion"},
		{"blank criteria only", CreateWorkInput{Objective: "o", AcceptanceCriteria: []string{" ", ""}}, ErrInvalid, "at least one acceptance criterion"},
		{"oversized objective", CreateWorkInput{Objective: long, AcceptanceCriteria: []string{"a"}}, ErrInvalid, "objective exceeds 20000 characters"},
		{"oversized criterion", CreateWorkInput{Objective: "o", AcceptanceCriteria: []string{strings.Repeat("é", limits.CreateWorkItemAcceptanceCriteriaItemMaxLen+1)}}, ErrInvalid, "acceptanceCriteria[0] exceeds 4000"},
		{"too many risks", CreateWorkInput{Objective: "o", AcceptanceCriteria: []string{"a"}, Risks: many}, ErrInvalid, "risks accepts at most 100 entries; received 101"},
		{"unknown dependency", CreateWorkInput{Objective: "o", AcceptanceCriteria: []string{"a"}, DependsOn: []string{existing.ID, "work_nope"}}, ErrNotFound, "Unknown work work_nope in dependsOn"},
		{"blank dependency", CreateWorkInput{Objective: "o", AcceptanceCriteria: []string{"a"}, DependsOn: []string{" "}}, ErrInvalid, "dependsOn[0] must not be blank"},
		{"oversized session", CreateWorkInput{Objective: "o", AcceptanceCriteria: []string{"a"}, SourceSession: ptr(strings.Repeat("s", limits.CreateWorkItemSourceSessionMaxLen+1))}, ErrInvalid, "sourceSession exceeds 256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := f.unchanged(func() error { _, err := f.svc.CreateWork(f.ctx, tt.in); return err })
			wantErr(t, err, tt.kind, tt.msg)
		})
	}
}

func TestWorkIDsUniqueAndOrderedUnderFrozenClock(t *testing.T) {
	f := newFixture(t)
	seen := map[string]bool{}
	prev := ""
	for i := 0; i < 200; i++ {
		id := f.svc.ids.next("work", f.clock.Now())
		if seen[id] || id <= prev || !workIDPattern.MatchString(id) {
			t.Fatalf("id %d %q (prev %q) not unique/increasing/well-formed", i, id, prev)
		}
		seen[id], prev = true, id
	}
	// A clock that goes backwards never yields a smaller ID.
	f.clock.Advance(-time.Hour)
	if id := f.svc.ids.next("work", f.clock.Now()); id <= prev {
		t.Fatalf("id %q after clock went back is not after %q", id, prev)
	}
}

// Dependencies can only point at works that already exist and are fixed at
// creation, so the depends_on graph is acyclic by construction.
func TestDependsOnIsAcyclic(t *testing.T) {
	f := newFixture(t)
	a := f.work("a")
	b := f.work("b", a.ID)
	c := f.work("c", a.ID, b.ID)
	detail, err := f.svc.GetWork(f.ctx, GetWorkInput{WorkID: a.ID, FullEvidence: true})
	if err != nil || len(detail.Work.DependsOn) != 0 {
		t.Fatalf("a gained dependencies: %+v %v", detail.Work, err)
	}
	g, err := f.svc.WorkGraph(f.ctx, GraphInput{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	deps := map[string][]string{}
	for _, e := range g.Edges {
		if e.Kind == EdgeDependsOn {
			deps[e.From] = append(deps[e.From], e.To)
		}
	}
	var visit func(id string, path map[string]bool)
	visit = func(id string, path map[string]bool) {
		if path[id] {
			t.Fatalf("cycle through %s", id)
		}
		path[id] = true
		for _, d := range deps[id] {
			visit(d, path)
		}
		delete(path, id)
	}
	visit(c.ID, map[string]bool{})
	if len(deps[c.ID]) != 2 || len(deps[b.ID]) != 1 {
		t.Fatalf("deps = %v", deps)
	}
}

func TestListWorksPreviewsNewestFirst(t *testing.T) {
	f := newFixture(t)
	old := f.work(strings.Repeat("é", 250))
	f.clock.Advance(time.Second)
	newer, err := f.svc.CreateWork(f.ctx, CreateWorkInput{Objective: "short", AcceptanceCriteria: []string{"a", "b", "c"}})
	if err != nil {
		t.Fatal(err)
	}
	list, err := f.svc.ListWorks(f.ctx, ListWorksInput{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Works) != 2 || list.Works[0].ID != newer.ID || list.Works[1].ID != old.ID {
		t.Fatalf("order = %+v", list.Works)
	}
	if p := list.Works[1].ObjectivePreview; p != strings.Repeat("é", 200) {
		t.Errorf("preview has %d runes", len([]rune(p)))
	}
	if list.Works[0].AcceptanceCriteriaCount != 3 {
		t.Errorf("count = %d", list.Works[0].AcceptanceCriteriaCount)
	}
	raw, _ := json.Marshal(list)
	for _, banned := range []string{`"objective"`, `"acceptanceCriteria"`, `"risks"`, `"unresolvedQuestions"`} {
		if strings.Contains(string(raw), banned) {
			t.Errorf("list JSON contains %s: %s", banned, raw)
		}
	}
	// Evidence bumps updatedAt, so the old work moves to the front.
	f.clock.Advance(time.Second)
	f.evidence(old.ID, "", map[string]any{"x": 1})
	list, _ = f.svc.ListWorks(f.ctx, ListWorksInput{Limit: 100})
	if list.Works[0].ID != old.ID || len(list.Works[0].EvidenceIDs) != 1 {
		t.Fatalf("after evidence: %+v", list.Works[0])
	}
}

func TestGetWork(t *testing.T) {
	f := newFixture(t)
	w := f.work("w")
	e := f.evidence(w.ID, "codex:1", []int{1, 2})
	d, err := f.svc.GetWork(f.ctx, GetWorkInput{WorkID: w.ID, FullEvidence: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Evidence) != 1 || string(d.Evidence[0].Data) != "[1,2]" || d.Evidence[0].ContentHash != e.ContentHash {
		t.Fatalf("evidence = %+v", d.Evidence)
	}
	if d.Handoffs == nil || d.Reviews == nil {
		t.Fatal("empty lists must be [] not null")
	}
	_, err = f.svc.GetWork(f.ctx, GetWorkInput{WorkID: "work_missing", FullEvidence: true})
	wantErr(t, err, ErrNotFound, "Unknown work work_missing")
}
