package workflow

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the reference driver of TestParseStoreTimeAsTheDriver

	"github.com/agent-interop/runtime/ent/workitem"
)

// TestDirectReadsAsEnt lists works with the direct statements (direct.go)
// and with ent's, and wants the same pages: every filter, a cursor, a
// page of one work with more evidence than it embeds (the per-work path),
// works with and without sessions, criteria, changed files, dependencies
// and evidence, and times with and without fractions.
func TestDirectReadsAsEnt(t *testing.T) {
	f := newFixture(t)
	if !f.svc.directSQL {
		t.Skip("the store is not SQLite: no direct statements")
	}
	rng := rand.New(rand.NewPCG(21, 1))
	base := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	statuses := []workitem.Status{workitem.StatusOpen, workitem.StatusInProgress, workitem.StatusBlocked, workitem.StatusAccepted}
	var ids []string
	for i := range 140 {
		at := base.Add(time.Duration(i/3) * time.Second) // equal times: the id orders them
		switch i % 4 {
		case 1:
			at = at.Add(time.Duration(rng.IntN(1e9)))
		case 2:
			at = at.Add(123 * time.Millisecond)
		}
		c := f.st.Client().WorkItem.Create().SetID(fmt.Sprintf("work_%03d", i)).
			SetObjective(fmt.Sprintf("objective %d: make it idempotent & <safe>", i)).
			SetStatus(statuses[i%len(statuses)]).SetCreatedAt(at.Add(-time.Hour)).SetUpdatedAt(at)
		c.SetAcceptanceCriteria([]string{}).SetRisks([]string{"r"}).SetUnresolvedQuestions([]string{}).SetChangedFiles([]string{})
		if i%3 != 0 {
			c.SetAcceptanceCriteria([]string{"a", fmt.Sprint(i)})
		}
		if i%5 != 0 {
			c.SetChangedFiles([]string{fmt.Sprintf("src/f%d.go", i), "README.md"})
		}
		if i%2 == 0 {
			c.SetSourceSession(fmt.Sprintf("codex:s%d", i%7))
		}
		if i%3 == 1 {
			c.SetDestinationSession(fmt.Sprintf("codex:s%d", i%5))
		}
		if i > 0 {
			c.AddDependsOnIDs(ids[i-1])
		}
		if i > 10 && i%4 == 0 {
			c.AddDependsOnIDs(ids[i/2], ids[i/3])
		}
		if _, err := c.Save(f.ctx); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, fmt.Sprintf("work_%03d", i))
	}
	for i := range ids {
		for range i % 3 {
			f.evidence(ids[i], "", map[string]any{"n": i})
		}
	}
	top := ids[len(ids)-1]
	for range MaxEmbeddedEvidenceIDs + 2 {
		f.evidence(top, "", nil)
	}
	since := base.Add(20 * time.Second)
	inputs := []ListWorksInput{
		{Limit: 100},
		{},
		{Limit: 1},
		{Limit: 7},
		{Limit: 100, WorkFilter: WorkFilter{Status: "blocked"}},
		{Limit: 100, WorkFilter: WorkFilter{Session: "codex:s3"}},
		{Limit: 5, WorkFilter: WorkFilter{Session: "codex:s1"}},
		{Limit: 100, WorkFilter: WorkFilter{UpdatedSince: &since}},
		{Limit: 3, WorkFilter: WorkFilter{Status: "open", UpdatedSince: &since}},
	}
	list := func(direct bool, in ListWorksInput) WorkList {
		t.Helper()
		f.svc.directSQL = direct
		defer func() { f.svc.directSQL = true }()
		out, err := f.svc.ListWorks(f.ctx, in)
		if err != nil {
			t.Fatalf("direct %v: %+v: %v", direct, in, err)
		}
		return out
	}
	for _, in := range inputs {
		// Every page of the filter, following the cursors.
		for page := 0; page < 200; page++ {
			want, got := list(false, in), list(true, in)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%+v page %d:\ndirect %+v\nent    %+v", in, page, got, want)
			}
			if want.NextCursor == "" {
				break
			}
			in.Cursor = want.NextCursor
		}
	}
}

// TestPlainStringsAsUnmarshal decodes random JSON-ish texts of string
// lists (escapes, control characters, invalid UTF-8, spaces, nulls,
// numbers, cut and doubled punctuation) with plainStrings and with
// json.Unmarshal: whenever plainStrings reads a text, json.Unmarshal reads
// the same list; it must read the lists the store writes of strings with
// nothing json.Marshal escapes.
func TestPlainStringsAsUnmarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	parts := []string{`"`, `a`, `src/x.go`, `,`, `[`, `]`, `\"`, `\\`, `\u00e9`, `\n`, "\n", "\x01", "\xff", "é", "\u2028", ` `, `null`, `1`, `""`, `","`}
	read := 0
	for i := range 50000 {
		var text string
		if i%2 == 0 { // a list the store writes (json.Marshal), of strings with nothing it escapes
			list := make([]string, rng.IntN(4))
			for k := range list {
				for range rng.IntN(4) {
					list[k] += []string{"a", "src/f.go", "é", " ", "x'y"}[rng.IntN(5)]
				}
			}
			b, _ := json.Marshal(list)
			text = string(b)
		} else {
			var b strings.Builder
			b.WriteString("[")
			for range rng.IntN(8) {
				b.WriteString(parts[rng.IntN(len(parts))])
			}
			if rng.IntN(4) > 0 {
				b.WriteString("]")
			}
			text = b.String()
		}
		got, ok := plainStrings(text)
		var want []string
		err := json.Unmarshal([]byte(text), &want)
		if i%2 == 0 && !ok {
			t.Fatalf("plainStrings(%q) refused a list the store writes", text)
		}
		if !ok {
			continue
		}
		read++
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("plainStrings(%q) = %#v, json.Unmarshal: %#v, %v", text, got, want, err)
		}
	}
	if read < 25000 {
		t.Fatalf("plainStrings read %d texts", read)
	}
}
