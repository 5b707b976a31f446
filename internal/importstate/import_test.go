package importstate

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/workflow"
)

const (
	normalW1 = "work_1767225600000_a1b2c3"
	normalW2 = "work_1767225660000_d4e5f6"
	normalC1 = "conversation_8a7b6c5d-4e3f-4a1b-9c8d-7e6f5a4b3c2d"
)

func TestImportReadsBackThroughTheServices(t *testing.T) {
	db := newDB(t)
	rep := mustRun(t, "normal", db)
	if !rep.Written || rep.Unchanged || rep.New() != 13 || len(rep.Conflicts) != 0 {
		t.Fatalf("report = %+v", rep)
	}
	s := newServices(t, db)
	ctx := context.Background()

	list, err := s.work.ListWorks(ctx, workflow.ListWorksInput{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, w := range list.Works {
		ids = append(ids, w.ID)
	}
	if strings.Join(ids, ",") != normalW1+","+normalW2 { // most recently updated first
		t.Errorf("list_work_items ids = %v", ids)
	}
	d, err := s.work.GetWork(ctx, workflow.GetWorkInput{WorkID: normalW1})
	if err != nil {
		t.Fatal(err)
	}
	w := d.Work
	if w.Objective != "Add token refresh to the auth client" || w.Status != "in_progress" || w.CreatedAt != "2026-01-01T00:00:00.000Z" ||
		w.UpdatedAt != "2026-01-01T00:10:00.000Z" || *w.SourceSession != "codex:thread-a" || *w.DestinationSession != "claude-code:sess-b" ||
		strings.Join(w.EvidenceIDs, ",") != "evidence_1767225700000_000001,evidence_1767226200000_000002" {
		t.Errorf("work = %+v", w)
	}
	if len(d.Handoffs) != 1 || d.Handoffs[0].ID != "handoff_5d2c1b0a-9e8f-4a7b-8c6d-5e4f3a2b1c0d" || d.Handoffs[0].Status != "accepted" ||
		d.Handoffs[0].ContextTokens != 187 || d.Handoffs[0].UpdatedAt != "2026-01-01T00:06:00.000Z" {
		t.Errorf("handoffs = %+v", d.Handoffs)
	}
	if len(d.Reviews) != 1 || d.Reviews[0].EvidenceID != "evidence_1767226200000_000002" || d.Reviews[0].Verdict != "approve" ||
		len(d.Reviews[0].Findings) != 1 || *d.Reviews[0].Findings[0].Line != 12 {
		t.Errorf("reviews = %+v", d.Reviews)
	}
	d2, err := s.work.GetWork(ctx, workflow.GetWorkInput{WorkID: normalW2})
	if err != nil || strings.Join(d2.Work.DependsOn, ",") != normalW1 {
		t.Errorf("dependsOn of %s = %v, %v", normalW2, d2.Work.DependsOn, err)
	}
	ev, err := s.work.GetEvidence(ctx, "evidence_1767225700000_000001")
	if err != nil {
		t.Fatal(err)
	}
	if string(ev.Data) != `{"command":"go test ./...","exitCode":0,"id":"verification_6f1c","name":"test","stdout":"ok\n"}` ||
		ev.ContentHash != workflow.ContentHash(ev.Data) || *ev.SessionID != "codex:thread-a" || ev.CapturedAt != "2026-01-01T00:01:40.000Z" {
		t.Errorf("evidence = %+v %s", ev, ev.Data)
	}
	clPage, err := claims.New(s.st, claims.WithClock(fixedClock(t))).List(ctx, claims.ListInput{ActiveOnly: true})
	cl := clPage.Claims
	if err != nil || len(cl) != 1 || cl[0].ID != "claim_3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f" || cl[0].Resource != "auth" {
		t.Errorf("active claims = %+v, %v", cl, err)
	}

	page, err := s.conv.Read(ctx, conversations.ReadInput{ConversationID: normalC1})
	if err != nil {
		t.Fatal(err)
	}
	if page.LatestSequence != 3 || page.Next != 3 || page.Gap != nil || len(page.Messages) != 3 ||
		page.Conversation.Title != "Auth refresh" || len(page.Conversation.Participants) != 2 {
		t.Fatalf("page = %+v", page)
	}
	want := []struct {
		seq      int64
		id, key  string
		delivery conversations.Delivery
		state    string
		detail   string
	}{
		{1, "message_11111111-1111-4111-8111-111111111111", "outbound_aaaa", conversations.DeliveryQueued, "transport_accepted", `{"delivery":"transport_accepted","completion":"not_observed"}`},
		{2, "message_22222222-2222-4222-8222-222222222222", "review-reply-1", conversations.DeliveryCompleted, "turn_completed", ``},
		{3, "message_33333333-3333-4333-8333-333333333333", "outbound_cccc", conversations.DeliveryRejected, "", `{"classification":"rejected","reason":"opencode serve is not running"}`},
	}
	for i, m := range page.Messages {
		wm := want[i]
		detail := ""
		if m.Receipt != nil && m.Receipt.Detail != nil {
			b, _ := json.Marshal(m.Receipt.Detail)
			detail = string(b)
		}
		if m.Sequence != wm.seq || m.ID != wm.id || m.IdempotencyKey != wm.key || m.Delivery != wm.delivery ||
			m.Receipt == nil || m.Receipt.ProviderState != wm.state || detail != wm.detail || m.OperationID != "op_import_"+wm.id {
			t.Errorf("message %d = %+v (receipt %+v, detail %s), want %+v", i, m, m.Receipt, detail, wm)
		}
	}
	if page.Messages[1].ReplyTo != want[0].id || page.Messages[0].Receipt.Provider != providers.OpenCode || page.Messages[0].Receipt.NativeID != "ses_01" {
		t.Errorf("reply or recipient session lost: %+v", page.Messages)
	}
}

// TestDeliveryMapping checks how every 0.3.x delivery state and receipt of
// the full fixture becomes a delivery operation.
func TestDeliveryMapping(t *testing.T) {
	db := newDB(t)
	mustRun(t, "full", db)
	s := newServices(t, db)
	ctx := context.Background()
	cases := []struct {
		message   string
		status    providers.ReceiptStatus
		reason    string // the receipt's detail.reason
		state     string // the receipt's providerState
		updatedAt string // deliveryUnknownAt for delivery_unknown
		original  string // in detail.imported
	}{
		{"message_f3", providers.StatusCompleted, "", "end_turn", "2026-01-03T00:03:00Z", `"delivery":"completed"`},
		{"message_f4", providers.StatusRejected, "Freebuff Desktop writes are unavailable: no verified launch authorization contract", "", "2026-01-03T00:04:00Z", `"delivery":"rejected"`},
		{"message_f5", providers.StatusQueued, "", "", "2026-01-03T00:05:00Z", `"receipt":{"provider":"codex","nativeId":"thread-x","operation":"send","accepted":true}`},
		{"message_f6", providers.StatusDeliveryUnknown, "socket hang up", "", "2026-01-03T00:06:30Z", `"deliveryUnknownAt":"2026-01-03T00:06:30.000Z"`},
		{"message_f7", providers.StatusDeliveryUnknown, ReasonInFlight, "", "2026-01-10T00:00:00Z", `"dispatchLease":{"id":"dispatch_7","startedAt":"2026-01-03T00:07:00.000Z","expiresAt":"2026-01-03T00:09:00.000Z"}`},
		{"message_f8", providers.StatusDeliveryUnknown, ReasonInFlight, "", "2026-01-10T00:00:00Z", `"delivery":"queued"`},
		{"message_f9", providers.StatusDeliveryUnknown, ReasonInFlight, "", "2026-01-10T00:00:00Z", `"delivery":"dispatching"`},
		{"message_old_1", providers.StatusCompleted, "", "", "2025-12-01T00:00:00Z", `"delivery":"completed"`},
		{"message_old_2", providers.StatusDeliveryUnknown, "0.3.x recorded the outcome as unknown", "", "2025-12-01T00:01:00Z", `"delivery":""`},
	}
	for _, tc := range cases {
		t.Run(tc.message, func(t *testing.T) {
			op, err := s.ledger.Get(ctx, "op_import_"+tc.message)
			if err != nil {
				t.Fatal(err)
			}
			r := op.Receipt()
			var reason string
			if m, ok := r.Detail.(map[string]any); ok {
				reason, _ = m["reason"].(string)
			}
			if op.Status != tc.status || reason != tc.reason || r.ProviderState != tc.state || op.Owner != "import:0.3.x" ||
				op.UpdatedAt.Format("2006-01-02T15:04:05Z07:00") != tc.updatedAt || !strings.Contains(string(op.Detail), tc.original) ||
				r.Accepted != (tc.status == providers.StatusQueued || tc.status == providers.StatusCompleted) {
				t.Errorf("operation = %+v\nreceipt %+v\ndetail %s", op, r, op.Detail)
			}
		})
	}
}

func TestFullFixtureEdgeCases(t *testing.T) {
	db := newDB(t)
	rep := mustRun(t, "full", db)
	s := newServices(t, db)
	ctx := context.Background()

	// A pre-0.3 conversation is numbered 1..n; a trimmed one keeps its
	// numbers and tells a reader about the gap.
	page, err := s.conv.Read(ctx, conversations.ReadInput{ConversationID: "conversation_full_trimmed"})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for _, m := range page.Messages {
		seqs = append(seqs, m.Sequence)
	}
	if page.Gap == nil || page.Gap.From != 1 || page.Gap.To != 2 || page.LatestSequence != 9 || len(seqs) != 7 || seqs[0] != 3 || seqs[6] != 9 ||
		len([]rune(page.Conversation.Title)) != 300 || page.Conversation.Participants[0].ID != "codex:thread-x" {
		t.Errorf("trimmed conversation = gap %+v latest %d seqs %v title %d participants %+v", page.Gap, page.LatestSequence, seqs,
			len([]rune(page.Conversation.Title)), page.Conversation.Participants)
	}
	old, err := s.conv.Read(ctx, conversations.ReadInput{ConversationID: "conversation_full_old"})
	if err != nil || len(old.Messages) != 2 || old.Messages[0].Sequence != 1 || old.Messages[1].Sequence != 2 ||
		old.Messages[0].IdempotencyKey != "import_message_old_1" || old.LatestSequence != 2 {
		t.Errorf("pre-0.3 conversation = %+v, %v", old, err)
	}
	// A new send continues the imported numbering.
	if _, err := s.conv.Join(ctx, conversations.JoinInput{ConversationID: "conversation_full_empty", Provider: "codex", NativeID: "t1"}); err != nil {
		t.Fatal(err)
	}

	// Claims: active, expired by its lease, released, and marked expired
	// with a lease still running (released).
	all, err := claims.New(s.st, claims.WithClock(fixedClock(t))).List(ctx, claims.ListInput{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, c := range all.Claims {
		status[c.ID] = string(c.Status) + " " + c.Resource
	}
	wantClaims := map[string]string{
		"claim_full_active": "active src/auth", "claim_full_shared": "active README.md", "claim_full_released": "released src/auth/token.go",
		"claim_full_expired": "expired api", "claim_full_early": "released .",
	}
	for id, want := range wantClaims {
		if status[id] != want {
			t.Errorf("claim %s = %q, want %q", id, status[id], want)
		}
	}

	// Evidence: the review evidence is linked by its data, the workless
	// one listed by a work takes it, the edited one keeps the store's hash.
	d, err := s.work.GetWork(ctx, workflow.GetWorkInput{WorkID: "work_1767312000000_aaaaaa"})
	if err != nil {
		t.Fatal(err)
	}
	reviews := map[string]string{}
	for _, r := range d.Reviews {
		reviews[r.ID] = r.EvidenceID
	}
	if reviews["review_full_1"] != "evidence_full_5" || d.Handoffs[0].ContinuationState == nil || *d.Handoffs[0].ContinuationState != "needs_completion" ||
		d.Handoffs[0].UpdatedAt != d.Handoffs[0].CreatedAt || len(d.Handoffs[0].EvidenceIDs) != 1 {
		t.Errorf("review links %v, handoff %+v", reviews, d.Handoffs)
	}
	d3, err := s.work.GetWork(ctx, workflow.GetWorkInput{WorkID: "work_1767312120000_cccccc"})
	if err != nil || strings.Join(d3.Work.EvidenceIDs, ",") != "evidence_full_3" || d3.Handoffs[0].TokenBudget != 2000 {
		t.Errorf("work 3 = %+v, %v", d3, err)
	}
	d2, err := s.work.GetWork(ctx, workflow.GetWorkInput{WorkID: "work_1767312060000_bbbbbb"})
	if err != nil || strings.Join(d2.Work.DependsOn, ",") != "work_1767312120000_cccccc" || d2.Work.UpdatedAt != d2.Work.CreatedAt {
		t.Errorf("work 2 = %+v, %v", d2.Work, err)
	}
	ev, err := s.work.GetEvidence(ctx, "evidence_full_1")
	if err != nil || string(ev.Data) != `{"command":"go vet ./...","exitCode":1,"id":"verification_9","note":"<b> & `+"\u2028"+` é"}` {
		t.Errorf("evidence data = %s, %v", ev.Data, err)
	}

	// What is not imported, and every adjustment, is said.
	text := strings.Join(rep.Notes, "\n")
	for _, want := range []string{
		"evidence[1].contentHash: evidence evidence_full_2: the 0.3.x contentHash 0000",
		"2 evidence records: 0.3.x hashed the data as JSON.stringify wrote it",
		`claim claim_full_active: resource "src/auth/" is stored as "src/auth"`,
		"claim claim_full_early is marked expired but its lease ends at 2026-01-10T00:59:00.000Z",
		"the title is cut to 300 characters",
		"they are numbered 1..2 in file order",
		"handoff handoff_full_2 has no tokenBudget",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("notes lack %q:\n%s", want, text)
		}
	}
	if got := strings.Join(rep.Files[0].Ignored, ", "); got != "sessions (2 entries), version" {
		t.Errorf("ignored = %q", got)
	}
	if rep.Deliveries["delivery_unknown"] != 5 || rep.InFlight != 3 || rep.Deliveries["queued"] != 1 || rep.Deliveries["completed"] != 2 {
		t.Errorf("deliveries = %v in flight %d", rep.Deliveries, rep.InFlight)
	}
}

func TestImportedDeliveriesAreNotSettledOrReconciled(t *testing.T) {
	db := newDB(t)
	mustRun(t, "full", db)
	before := dump(t, db)
	s := newServices(t, db)
	ctx := context.Background()
	s.fake.LookupFunc = func(context.Context, providers.TurnQuery) (providers.TurnRecord, error) {
		t.Error("settlement looked an imported operation up")
		return providers.TurnRecord{Found: true, Status: providers.StatusCompleted}, nil
	}
	changed, err := s.ledger.Settle(ctx)
	if err != nil || len(changed) != 0 {
		t.Fatalf("start-up settlement changed %+v, %v", changed, err)
	}
	res, err := s.conv.Reconcile(ctx, conversations.ReconcileInput{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res {
		if r.Resolved || r.Message.Delivery != conversations.DeliveryUnknown || r.PreviousDelivery != conversations.DeliveryUnknown {
			t.Errorf("reconcile changed %+v", r)
		}
		got = append(got, r.Message.ID)
	}
	// The transport-accepted import (message_f5) is final, as in 0.3.x.
	if strings.Join(got, ",") != "message_old_2,message_f6,message_f7,message_f8,message_f9" {
		t.Errorf("reconcile looked at %v", got)
	}
	if after := dump(t, db); after != before {
		t.Errorf("settlement or reconcile changed the store:\n%s", firstDiff(before, after))
	}
}

func TestRepeatedImportChangesNothing(t *testing.T) {
	for _, dir := range []string{"normal", "full"} {
		t.Run(dir, func(t *testing.T) {
			db := newDB(t)
			first := mustRun(t, dir, db)
			before := dump(t, db)
			again := mustRun(t, dir, db)
			if again.Written || !again.Unchanged || again.New() != 0 || again.Total() != first.Total() ||
				!strings.Contains(again.Summary(), "already in the store; the store is unchanged") {
				t.Errorf("second run = %+v: %s", again, again.Summary())
			}
			for _, c := range again.Counts {
				if c.Present != c.InFiles || c.Changed != 0 {
					t.Errorf("second run %s = %+v", c.Kind, c)
				}
			}
			if after := dump(t, db); after != before {
				t.Errorf("the second run changed the store:\n%s", firstDiff(before, after))
			}
		})
	}
}

func TestChangedInTheStoreSinceIsKept(t *testing.T) {
	db := newDB(t)
	mustRun(t, "normal", db)
	s := newServices(t, db)
	ctx := context.Background()
	if _, err := s.work.UpdateHandoffStatus(ctx, "handoff_5d2c1b0a-9e8f-4a7b-8c6d-5e4f3a2b1c0d", "applied"); err != nil {
		t.Fatal(err)
	}
	if _, err := claims.New(s.st, claims.WithClock(fixedClock(t))).Release(ctx, claims.ReleaseInput{ClaimID: "claim_3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f"}); err != nil {
		t.Fatal(err)
	}
	before := dump(t, db)
	rep := mustRun(t, "normal", db)
	if !rep.Unchanged || rep.count(KindHandoff).Changed != 1 || rep.count(KindClaim).Changed != 1 || rep.count(KindWork).Changed != 0 {
		t.Errorf("report = %+v", rep.Counts)
	}
	if after := dump(t, db); after != before {
		t.Errorf("the import overwrote later changes:\n%s", firstDiff(before, after))
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	t.Run("no store yet", func(t *testing.T) {
		db := newDB(t)
		rep, err := run(t, "full", db, true)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.DryRun || !rep.StoreMissing || rep.Written || rep.New() != rep.Total() || rep.Total() != 34 ||
			!strings.Contains(rep.Summary(), "a real run would write 34 new records") {
			t.Errorf("report = %+v: %s", rep, rep.Summary())
		}
		if got := dump(t, db); !strings.HasPrefix(got, "no store") {
			t.Errorf("the dry run created the store")
		}
	})
	t.Run("existing store", func(t *testing.T) {
		db := newDB(t)
		mustRun(t, "normal", db)
		before := dump(t, db)
		rep, err := run(t, "full", db, true)
		if err != nil || rep.Written || rep.New() != 34 {
			t.Fatalf("report = %+v, %v", rep, err)
		}
		if rep, err = run(t, "normal", db, true); err != nil || rep.New() != 0 || !strings.Contains(rep.Summary(), "a real run would change nothing") {
			t.Fatalf("repeat = %+v, %v", rep, err)
		}
		if after := dump(t, db); after != before {
			t.Errorf("the dry run wrote:\n%s", firstDiff(before, after))
		}
	})
}

func TestConflictsRefuseTheWholeImport(t *testing.T) {
	db := newDB(t)
	mustRun(t, "normal", db)
	before := dump(t, db)
	for _, dryRun := range []bool{true, false} {
		rep, err := run(t, "conflicting", db, dryRun)
		if dryRun != (err == nil) || (!dryRun && !errors.Is(err, ErrConflicts)) || rep == nil || rep.Written {
			t.Fatalf("dryRun=%v: %+v, %v", dryRun, rep, err)
		}
		type key struct{ kind, id, field string }
		got := map[key]Conflict{}
		for _, c := range rep.Conflicts {
			got[key{c.Kind, c.ID, c.Field}] = c
		}
		want := []struct {
			key
			at, store, file, reason string
		}{
			{key{KindWork, normalW1, "objective"}, "conflicting/state.json:5:20", `"Add token refresh to the auth client"`, `"Something else entirely"`, ""},
			{key{KindMessage, "message_22222222-2222-4222-8222-222222222222", "text"}, "conflicting/conversations.json:50:19", `"Looks good; one rename."`, `"A different reply."`, ""},
			{key{KindMessage, "message_55555555-5555-4555-8555-555555555555", "sequence"}, "conversations.json:", "", "",
				"sequence 3 of " + normalC1 + " is message message_33333333-3333-4333-8333-333333333333 in the store"},
			{key{KindMessage, "message_44444444-4444-4444-8444-444444444444", "idempotencyKey"}, "conversations.json:", "", "",
				`idempotency key "outbound_cccc" is taken by message message_33333333-3333-4333-8333-333333333333 in the store`},
			{key{KindClaim, "claim_other_session", "resource"}, "state.json:", "", "",
				"still active, and file auth/token.go (exclusive) of cursor:chat-1 conflicts with active claim claim_3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f of claude-code:sess-b on directory auth (exclusive)"},
		}
		for _, w := range want {
			c, ok := got[w.key]
			if !ok || !strings.Contains(c.At, w.at) || c.Store != w.store || c.File != w.file || c.Reason != w.reason {
				t.Errorf("dryRun=%v conflict %v = %+v, want %+v", dryRun, w.key, c, w)
			}
		}
		if len(rep.Conflicts) != len(want) {
			t.Errorf("dryRun=%v conflicts = %v", dryRun, rep.Conflicts)
		}
		// A status that moved is not a conflict.
		if c := rep.count(KindWork); c.Changed != 1 || c.Conflicts != 1 {
			t.Errorf("work counts = %+v", c)
		}
		if !strings.Contains(rep.Summary(), "5 conflicts") {
			t.Errorf("summary = %s", rep.Summary())
		}
	}
	if after := dump(t, db); after != before {
		t.Errorf("a refused import wrote:\n%s", firstDiff(before, after))
	}
}

func TestMissingFiles(t *testing.T) {
	home := t.TempDir()
	lookup := func(k string) (string, bool) {
		if k == "HOME" {
			return home, true
		}
		return "", false
	}
	_, err := Run(context.Background(), Config{Lookup: lookup, Store: newDB(t), Clock: fixedClock(t)})
	if err == nil || !strings.Contains(err.Error(), "nothing to import: neither "+filepath.Join(home, ".agent-interop-runtime", "state.json")) {
		t.Errorf("no files: %v", err)
	}
	// A named file must exist; a default one that is missing is skipped.
	_, err = Run(context.Background(), Config{Lookup: lookup, StateFile: filepath.Join(home, "nope.json"), Store: newDB(t), Clock: fixedClock(t)})
	if err == nil || !strings.Contains(err.Error(), "nope.json") {
		t.Errorf("missing named file: %v", err)
	}
	_, convs := fixture("normal")
	db := newDB(t)
	rep, err := Run(context.Background(), Config{Lookup: lookup, ConversationsFile: convs, Store: db, Clock: fixedClock(t)})
	if err != nil || rep.Files[0].Found || rep.Files[0].Role != "state" || !rep.Files[1].Found || rep.count(KindMessage).New != 3 || rep.count(KindWork).InFiles != 0 {
		t.Errorf("conversations only = %+v, %v", rep, err)
	}
	// 0.3.x's variables move the default files.
	state, _ := fixture("normal")
	abs, _ := filepath.Abs(state)
	lookup2 := func(k string) (string, bool) {
		switch k {
		case EnvStateFile:
			return abs, true
		case "HOME":
			return home, true
		}
		return "", false
	}
	rep, err = Run(context.Background(), Config{Lookup: lookup2, Store: db, Clock: fixedClock(t)})
	if err != nil || rep.count(KindWork).New != 2 || rep.Files[0].Path != abs {
		t.Errorf("INTEROP_STATE_FILE = %+v, %v", rep, err)
	}
}

// firstDiff shows where two dumps first differ.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			lo := max(0, i-3)
			return "before: " + strings.Join(al[lo:min(len(al), i+3)], "\n") + "\nafter:  " + strings.Join(bl[lo:min(len(bl), i+3)], "\n")
		}
	}
	return "lengths differ"
}

// TestRenderedReport keeps what a person reads for a first run, a repeated
// run and a refused one.
func TestRenderedReport(t *testing.T) {
	db := newDB(t)
	var out strings.Builder
	for _, step := range []struct {
		dir    string
		dryRun bool
	}{{"normal", true}, {"normal", false}, {"normal", false}, {"conflicting", false}} {
		rep, err := run(t, step.dir, db, step.dryRun)
		if rep == nil {
			t.Fatal(err)
		}
		rep.Store = "interop.db"
		rep.Render(&out)
		out.WriteString("----\n")
	}
	golden(t, "report.golden", []byte(out.String()))
}

// TestNewerFileAddsWhatIsNew imports a later copy of the 0.3.x files: the
// records already imported stay, the new message is added after them.
func TestNewerFileAddsWhatIsNew(t *testing.T) {
	db := newDB(t)
	mustRun(t, "normal", db)
	state, convs := fixture("normal")
	raw, err := os.ReadFile(convs)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	conv := f["conversations"].([]any)[0].(map[string]any)
	conv["messages"] = append(conv["messages"].([]any), map[string]any{
		"id": "message_66666666-6666-4666-8666-666666666666", "conversationId": normalC1, "sender": "reviewer", "recipient": "codex:thread-a",
		"text": "One more thing.", "createdAt": "2026-01-01T00:13:00.000Z", "sequence": 4, "delivery": "completed",
		"idempotencyKey": "outbound_ffff", "receipt": map[string]any{"provider": "codex", "nativeId": "thread-a", "operation": "send", "accepted": true, "status": "completed"},
	})
	conv["lastSequence"], conv["updatedAt"] = 4, "2026-01-01T00:13:00.000Z"
	newer := filepath.Join(t.TempDir(), "conversations.json")
	b, _ := json.MarshalIndent(f, "", "  ")
	if err := os.WriteFile(newer, b, 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), Config{StateFile: state, ConversationsFile: newer, Store: db, Clock: fixedClock(t),
		Lookup: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Written || rep.New() != 1 || rep.count(KindMessage).New != 1 || rep.count(KindMessage).Present != 3 || rep.count(KindConversation).Changed != 0 {
		t.Fatalf("report = %+v", rep.Counts)
	}
	s := newServices(t, db)
	page, err := s.conv.Read(context.Background(), conversations.ReadInput{ConversationID: normalC1, After: 3})
	if err != nil || len(page.Messages) != 1 || page.Messages[0].Sequence != 4 || page.LatestSequence != 4 ||
		page.Conversation.UpdatedAt.Format("15:04") != "00:13" || page.Messages[0].Delivery != conversations.DeliveryCompleted {
		t.Errorf("page = %+v, %v", page, err)
	}
}
