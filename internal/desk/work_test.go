package desk

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/ent/workitem"
)

func TestWorkSortsPageByPageWithTheirPosition(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	statuses := []string{"open", "accepted", "in_progress", "open", "rejected", "in_progress", "open"}
	for i, st := range statuses {
		id := fmt.Sprintf("w-%d", i)
		var deps []string
		if i == 6 {
			deps = []string{"w-2"} // unfinished: w-6 shows as blocked
		}
		// Created in id order, updated in the reverse order.
		if err := f.ent().WorkItem.Create().SetID(id).SetObjective("Item " + id).SetAcceptanceCriteria([]string{"done"}).
			SetRisks([]string{}).SetUnresolvedQuestions([]string{}).SetChangedFiles([]string{}).SetStatus(workitem.Status(st)).
			SetCreatedAt(f.now.Add(time.Duration(i) * time.Minute)).SetUpdatedAt(f.now.Add(time.Duration(10-i) * time.Minute)).
			AddDependsOnIDs(deps...).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	rowID := regexp.MustCompile(`data-work-id="(w-\d)"`)
	next := regexp.MustCompile(`rel="next" href="([^"]+)"`)
	pos := regexp.MustCompile(`id="work-position"[^>]*>([^<]*)<`)
	for _, c := range []struct {
		query     string
		want      string
		positions []string
	}{
		{"", "w-0,w-1,w-2,w-3,w-4,w-5,w-6", []string{"1–3 of 7", "4–6 of 7", "7–7 of 7"}},
		{"sort=created", "w-6,w-5,w-4,w-3,w-2,w-1,w-0", []string{"1–3 of 7", "4–6 of 7", "7–7 of 7"}},
		{"sort=status", "w-0,w-3,w-2,w-5,w-6,w-1,w-4", []string{"1–3 of 7", "4–6 of 7", "7–7 of 7"}},
		{"sort=status&status=in_progress", "w-2,w-5", []string{"1–2 of 2"}},
		{"sort=created&status=open", "w-3,w-0", []string{"1–2 of 2"}},
	} {
		t.Run(c.query, func(t *testing.T) {
			path := "/desk/work?limit=3&" + c.query
			var ids, positions []string
			for path != "" {
				res, body := f.get(path, bearer...)
				if res.StatusCode != http.StatusOK {
					t.Fatalf("%s: %d %.2000s", path, res.StatusCode, body)
				}
				rows := rowID.FindAllStringSubmatch(body, -1)
				if len(rows) > 3 {
					t.Fatalf("%s shows %d rows, more than its limit", path, len(rows))
				}
				for _, m := range rows {
					ids = append(ids, m[1])
				}
				if m := pos.FindStringSubmatch(body); m != nil {
					positions = append(positions, m[1])
				}
				path = ""
				if m := next.FindStringSubmatch(body); m != nil {
					path = html.UnescapeString(m[1])
				}
			}
			if got := strings.Join(ids, ","); got != c.want {
				t.Fatalf("order %s, want %s", got, c.want)
			}
			if !slices.Equal(positions, c.positions) {
				t.Fatalf("positions %q, want %q", positions, c.positions)
			}
		})
	}
	// A cursor is bound to its sort.
	_, body := f.get("/desk/work?limit=3&sort=created", bearer...)
	m := next.FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no next page")
	}
	if res, _ := f.get(strings.Replace(html.UnescapeString(m[1]), "sort=created", "sort=status", 1), bearer...); res.StatusCode == http.StatusOK {
		t.Fatal("a cursor of the created sort was taken by the status sort")
	}
}

func TestReceiptsCountPerStateAndSayWhereAPageStands(t *testing.T) {
	f := newFixture(t)
	for i, st := range []operation.Status{"completed", "queued", "completed", "rejected", "completed"} {
		f.addOperation(fmt.Sprintf("op-%d", i), "t1", "send", st, f.now.Add(time.Duration(i)*time.Minute))
	}
	f.addOperation("op-other", "t2", "cancel", "completed", f.now)
	next := regexp.MustCompile(`rel="next" href="([^"]+)"`)
	pos := regexp.MustCompile(`id="receipts-position"[^>]*>([^<]*)<`)
	for _, c := range []struct {
		query     string
		counts    []string
		positions []string
	}{
		{"", []string{`data-count="all">6<`, `data-count="completed">4<`, `data-count="queued">1<`, `data-count="rejected">1<`},
			[]string{"1–2 of 6", "3–4 of 6", "5–6 of 6"}},
		{"status=completed&operation=send", []string{`data-count="all">5<`, `data-count="completed">3<`},
			[]string{"1–2 of 3", "3–3 of 3"}},
		{"provider=codex&nativeId=t2", []string{`data-count="all">1<`, `data-count="queued">0<`}, []string{"1–1 of 1"}},
	} {
		t.Run(c.query, func(t *testing.T) {
			path := "/desk/receipts?limit=2&" + c.query
			var positions []string
			for i := 0; path != ""; i++ {
				res, body := f.get(path, bearer...)
				if res.StatusCode != http.StatusOK {
					t.Fatalf("%s: %d %.2000s", path, res.StatusCode, body)
				}
				if i == 0 {
					for _, want := range c.counts {
						if !strings.Contains(body, want) {
							t.Fatalf("the receipts page lacks %s: %.3000s", want, body)
						}
					}
				}
				if m := pos.FindStringSubmatch(body); m != nil {
					positions = append(positions, m[1])
				}
				path = ""
				if m := next.FindStringSubmatch(body); m != nil {
					path = html.UnescapeString(m[1])
				}
			}
			if !slices.Equal(positions, c.positions) {
				t.Fatalf("positions %q, want %q", positions, c.positions)
			}
		})
	}
}

func TestSessionsSayWhereAPageStands(t *testing.T) {
	f := newFixture(t)
	for i := range 5 {
		f.addSession(fmt.Sprintf("t-%d", i))
	}
	next := regexp.MustCompile(`rel="next" href="([^"]+)"`)
	pos := regexp.MustCompile(`id="sessions-position"[^>]*>([^<]*)<`)
	var positions []string
	for path := "/desk/sessions?limit=2"; path != ""; {
		res, body := f.get(path, bearer...)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %.2000s", path, res.StatusCode, body)
		}
		if m := pos.FindStringSubmatch(body); m != nil {
			positions = append(positions, m[1])
		}
		path = ""
		if m := next.FindStringSubmatch(body); m != nil {
			path = html.UnescapeString(m[1])
		}
	}
	if want := []string{"1–2 of 5", "3–4 of 5", "5–5 of 5"}; !slices.Equal(positions, want) {
		t.Fatalf("positions %q, want %q", positions, want)
	}
}

// TestClaimsAndConversationsSayWhereAPageStands: the claims and the
// conversations pages say which rows of how many they show, page by page,
// and a claim released or a conversation added moves the total.
func TestClaimsAndConversationsSayWhereAPageStands(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	w := f.addWork("work_pos", "Positions")
	for i := range 5 {
		if err := f.ent().Claim.Create().SetID(fmt.Sprintf("claim_%d", i)).SetWorkID(w.ID).SetSessionID("codex:a").
			SetResource(fmt.Sprintf("src/f%d.go", i)).SetAcquiredAt(f.now).SetExpiresAt(f.now.Add(time.Hour)).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Neither released nor expired claims count.
	if err := f.ent().Claim.Create().SetID("claim_gone").SetWorkID(w.ID).SetSessionID("codex:a").SetResource("src/gone.go").
		SetAcquiredAt(f.now.Add(-2 * time.Hour)).SetExpiresAt(f.now.Add(-time.Hour)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		at := f.now.Add(time.Duration(i) * time.Minute)
		if err := f.ent().Conversation.Create().SetID(fmt.Sprintf("conversation_%d", i)).SetTitle(fmt.Sprintf("Talk %d", i)).
			SetCreatedAt(at).SetUpdatedAt(at).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	next := regexp.MustCompile(`rel="next" href="([^"]+)"`)
	positions := func(path, list string) []string {
		pos := regexp.MustCompile(`id="` + list + `-position"[^>]*>([^<]*)<`)
		var out []string
		for path != "" {
			res, body := f.get(path, bearer...)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("%s: %d %.2000s", path, res.StatusCode, body)
			}
			m := pos.FindStringSubmatch(body)
			if m == nil {
				t.Fatalf("%s says no position: %.3000s", path, body)
			}
			out = append(out, m[1])
			path = ""
			if m := next.FindStringSubmatch(body); m != nil {
				path = html.UnescapeString(m[1])
			}
		}
		return out
	}
	for _, c := range []struct {
		path, list string
		want       []string
	}{
		{"/desk/claims?limit=2", "claims", []string{"1–2 of 5", "3–4 of 5", "5–5 of 5"}},
		{"/desk/claims?limit=2&resource=f1", "claims", []string{"1–1 of 1"}},
		{"/desk/conversations?limit=2", "conversations", []string{"1–2 of 3", "3–3 of 3"}},
	} {
		if got := positions(c.path, c.list); !slices.Equal(got, c.want) {
			t.Errorf("%s: positions %q, want %q", c.path, got, c.want)
		}
	}
	if err := f.ent().Claim.UpdateOneID("claim_0").SetStatus("released").SetReleasedAt(f.now).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if got := positions("/desk/claims?limit=10", "claims"); !slices.Equal(got, []string{"1–4 of 4"}) {
		t.Errorf("after a release: %q", got)
	}
}
