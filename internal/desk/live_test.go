package desk

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

const streamWait = wait.InProcess

// TestReceiptsStream: the page's stream sends nothing while the list is
// as the page shows it; a new receipt is inserted at the top and a changed
// one replaced in place; a dropped connection resumes from its cursor (the
// list's digest): unchanged, nothing is sent again; changed, the list is
// replaced once. On both dialects.
func TestReceiptsStream(t *testing.T) {
	pgtest.EachDialect(t, func(t *testing.T, location string) {
		f := newFixtureAt(t, location)
		ctx := context.Background()
		old := f.addOperation("op_old", "thread-1", "send", operation.StatusQueued, f.now)
		_, body := f.get("/desk/receipts", bearer...)
		live := liveURL(t, body)
		s := f.stream(live, bearer...)
		// Connected to a current page, the stream sends no row, only that
		// it is live (with its cursor).
		ev := s.next(t, streamWait)
		if strings.Contains(ev.data, "<tr") || !strings.Contains(ev.data, `id="live-status"`) || ev.id == "" {
			t.Fatalf("connect event %+v", ev)
		}
		// A new operation (another process's write) is inserted at the top.
		f.addOperation("op_new", "thread-1", "send", operation.StatusQueued, f.now.Add(time.Second))
		ev = s.next(t, streamWait)
		if !strings.Contains(ev.data, `<tbody hx-swap-oob="afterbegin:#receipt-rows">`) || !strings.Contains(ev.data, `data-operation-id="op_new"`) ||
			strings.Contains(ev.data, "op_old") || ev.id == "" {
			t.Fatalf("insert event %+v", ev)
		}
		// The counts come with the row they count, in the same message
		// (one snapshot of the store), never before or after it.
		if !strings.Contains(ev.data, `id="receipt-counts"`) || !strings.Contains(ev.data, `data-total="2"`) ||
			!strings.Contains(ev.data, `data-count="queued">2<`) {
			t.Fatalf("the insert event does not carry the counts of its rows: %+v", ev)
		}
		// The old one moves to completed: its row is replaced in place.
		if _, err := f.ent().Operation.UpdateOneID(old.ID).SetStatus(operation.StatusCompleted).SetUpdatedAt(f.now.Add(2 * time.Second)).Save(ctx); err != nil {
			t.Fatal(err)
		}
		ev = s.next(t, streamWait)
		if !strings.Contains(ev.data, `id="r-op_old" hx-swap-oob="true"`) || !strings.Contains(ev.data, `data-operation-id="op_old" data-status="completed"`) ||
			strings.Contains(ev.data, "afterbegin") || strings.Contains(ev.data, "op_new") {
			t.Fatalf("change event %+v", ev)
		}
		if !strings.Contains(ev.data, `data-count="queued">1<`) || !strings.Contains(ev.data, `data-count="completed">1<`) {
			t.Fatalf("the change event does not carry the counts of its rows: %+v", ev)
		}
		// Resumed at the current cursor: nothing is sent until the next
		// change, which is inserted alone.
		s.res.Body.Close()
		r := f.stream(live, append([]string{"Last-Event-ID", ev.id}, bearer...)...)
		if ev := r.next(t, streamWait); strings.Contains(ev.data, "<tr") {
			t.Fatalf("resumed at the current cursor, the stream sent rows: %+v", ev)
		}
		f.addOperation("op_third", "thread-1", "cancel", operation.StatusRejected, f.now.Add(3*time.Second))
		ev = r.next(t, streamWait)
		if !strings.Contains(ev.data, `afterbegin:#receipt-rows">`) || !strings.Contains(ev.data, "op_third") ||
			strings.Contains(ev.data, "op_new") || strings.Contains(ev.data, "op_old") {
			t.Fatalf("resumed event %+v", ev)
		}
		// Resumed at an older cursor: the list changed meanwhile, so it is
		// replaced once, each row in it once.
		r.res.Body.Close()
		f.addOperation("op_later", "thread-1", "send", operation.StatusQueued, f.now.Add(4*time.Second))
		r = f.stream(live, append([]string{"Last-Event-ID", ev.id}, bearer...)...)
		ev = r.next(t, streamWait)
		if !strings.Contains(ev.data, `<tbody hx-swap-oob="innerHTML:#receipt-rows">`) {
			t.Fatalf("resumed event %+v", ev)
		}
		for _, id := range []string{"op_later", "op_third", "op_new", "op_old"} {
			if n := strings.Count(ev.data, `data-operation-id="`+id+`"`); n != 1 {
				t.Fatalf("%s is in the replaced list %d times: %s", id, n, ev.data)
			}
		}
		if i, j := strings.Index(ev.data, "op_later"), strings.Index(ev.data, "op_old"); i > j {
			t.Fatalf("the replaced list is not newest first: %s", ev.data)
		}
	})
}

// TestWorkStreamReplacesAReorderedList: a work item updated moves to the
// top of the list (it is ordered by update time), so the stream replaces
// the list instead of inserting a row twice.
func TestWorkStreamReplacesAReorderedList(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.addWork("work_a", "first")
	if _, err := f.ent().WorkItem.Create().SetID("work_b").SetObjective("second").SetAcceptanceCriteria([]string{"done"}).
		SetRisks([]string{}).SetUnresolvedQuestions([]string{}).SetChangedFiles([]string{}).
		SetCreatedAt(f.now.Add(time.Second)).SetUpdatedAt(f.now.Add(time.Second)).Save(ctx); err != nil {
		t.Fatal(err)
	}
	_, body := f.get("/desk/work", bearer...)
	if i, j := strings.Index(body, `data-work-id="work_b"`), strings.Index(body, `data-work-id="work_a"`); i < 0 || j < 0 || i > j {
		t.Fatalf("the work list is not most recently updated first")
	}
	s := f.stream(liveURL(t, body), bearer...)
	s.next(t, streamWait) // connected
	if _, err := f.ent().WorkItem.UpdateOneID("work_a").SetStatus("in_progress").SetUpdatedAt(f.now.Add(2 * time.Second)).Save(ctx); err != nil {
		t.Fatal(err)
	}
	ev := s.next(t, streamWait)
	if !strings.Contains(ev.data, `<tbody hx-swap-oob="innerHTML:#work-rows">`) || strings.Count(ev.data, `data-work-id="work_a"`) != 1 ||
		strings.Index(ev.data, "work_a") > strings.Index(ev.data, "work_b") || !strings.Contains(ev.data, `id="work-rows-pager"`) {
		t.Fatalf("reorder event %+v", ev)
	}
}

func TestSessionStreamAppendsEventsAfterItsCursor(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.ent().ProviderSession.Create().SetProvider("codex").SetNativeID("thread-1").SetFirstSeenAt(f.now).SetLastSeenAt(f.now).Save(ctx); err != nil {
		t.Fatal(err)
	}
	log := f.h.read.events
	appendEvent := func(typ string) {
		t.Helper()
		if _, err := log.Append(ctx, "codex", "thread-1", 1, []providers.NativeEvent{{NativeID: "thread-1", Timestamp: f.now, Type: typ, Data: json.RawMessage(`{"text":"<b>hi</b>"}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	appendEvent("turn/started")
	s := f.stream("/desk/live/session?provider=codex&nativeId=thread-1&after=1", bearer...)
	first := s.next(t, streamWait)
	if strings.Contains(first.data, `data-type="turn/started"`) {
		t.Fatalf("an event at the cursor was sent again: %s", first.data)
	}
	appendEvent("item/commandExecution/requestApproval")
	// The summary is read before the new rows in one step, so an event
	// stored between the two reads reaches the page with the old summary
	// and the summary follows in a later message: wait for both.
	var sawEvent, sawSummary bool
	for !sawEvent || !sawSummary {
		ev := s.next(t, streamWait)
		if strings.Contains(ev.data, `data-liveness="waiting_on_approval"`) {
			sawSummary = true
		}
		if !strings.Contains(ev.data, `data-type="item/commandExecution/requestApproval"`) {
			t.Logf("skipped %+v", ev)
			continue
		}
		if ev.id != "2" || !strings.Contains(ev.data, `beforeend:#event-rows`) || !strings.Contains(ev.data, `&lt;b&gt;hi&lt;/b&gt;`) {
			t.Fatalf("event %+v", ev)
		}
		sawEvent = true
	}
}

// TestSessionStreamSwapsOnlyWhatThePageHas: every element the session
// stream swaps out of band by id is on the page it streams to, also when the
// page already had events (htmx logs oobErrorNoTarget for a missing one; the
// real-browser approval test saw it for #event-rows-empty).
func TestSessionStreamSwapsOnlyWhatThePageHas(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.ent().ProviderSession.Create().SetProvider("codex").SetNativeID("thread-1").SetFirstSeenAt(f.now).SetLastSeenAt(f.now).Save(ctx); err != nil {
		t.Fatal(err)
	}
	appendEvent := func(typ string) {
		t.Helper()
		if _, err := f.h.read.events.Append(ctx, "codex", "thread-1", 1, []providers.NativeEvent{{NativeID: "thread-1", Timestamp: f.now, Type: typ, Data: json.RawMessage(`{}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	appendEvent("turn/started")
	_, page := f.get("/desk/sessions/codex/thread-1", bearer...)
	if !strings.Contains(page, `id="event-rows-empty"`) {
		t.Fatal(`the page with events has no #event-rows-empty for the stream to hide`)
	}
	s := f.stream("/desk/live/session?provider=codex&nativeId=thread-1&after=1", bearer...)
	oob := regexp.MustCompile(`id="([^"]+)"[^>]*hx-swap-oob="true"|hx-swap-oob="true"[^>]*id="([^"]+)"`)
	appendEvent("turn/completed")
	for sawEvent := false; !sawEvent; {
		ev := s.next(t, streamWait)
		sawEvent = strings.Contains(ev.data, `data-type="turn/completed"`)
		for _, m := range oob.FindAllStringSubmatch(ev.data, -1) {
			id := m[1] + m[2]
			if !strings.Contains(page, `id="`+id+`"`) {
				t.Errorf("the stream swaps #%s, which the page does not have", id)
			}
		}
	}
}

func TestStreamsEndWhenTheDeskCloses(t *testing.T) {
	f := newFixture(t)
	s := f.stream("/desk/live/claims", bearer...)
	s.next(t, streamWait)
	f.h.Close()
	s.awaitEnd(t, "the stream to end when the desk closed")
}

// TestClaimsStreamNoticesALeaseEnding: nothing is written when a claim's
// lease ends, so the stream looks again at every heartbeat.
func TestClaimsStreamNoticesALeaseEnding(t *testing.T) {
	// Heartbeat and poll every 2 minutes of the mock clock: moving it past
	// the lease is one step, with no read under way while it moves.
	f := newFixture(t, func(o *Options) {
		o.Heartbeat, o.PollEvery, o.StreamLifetime = 2*time.Minute, 2*time.Minute, 24*time.Hour
	})
	w := f.addWork("work_1", "w")
	if _, err := f.ent().Claim.Create().SetID("claim_1").SetWorkID(w.ID).SetSessionID("codex:a").SetResource("src/a.go").
		SetAcquiredAt(f.now).SetExpiresAt(f.now.Add(time.Minute)).Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := f.stream("/desk/live/claims", bearer...)
	if ev := s.next(t, streamWait); !strings.Contains(ev.data, `data-claim-id="claim_1"`) {
		t.Fatalf("first event %+v", ev)
	}
	f.advance(2 * time.Minute)
	ev := s.next(t, streamWait)
	if strings.Contains(ev.data, `data-claim-id="claim_1"`) || !strings.Contains(ev.data, "No active claim.") {
		t.Fatalf("after the lease ended: %+v", ev)
	}
}

// TestSessionsStreamSendsOnlyWhatChanged: a write that leaves a session's
// row as it was sends nothing for it.
func TestSessionsStreamSendsOnlyWhatChanged(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, id := range []string{"thread-1", "thread-2"} {
		if _, err := f.ent().ProviderSession.Create().SetProvider("codex").SetNativeID(id).SetFirstSeenAt(f.now).SetLastSeenAt(f.now).Save(ctx); err != nil {
			t.Fatal(err)
		}
	}
	f.addOwner("rt_alive", f.now, nil)
	// A stream that does not know what its page shows replaces the list.
	s := f.stream("/desk/live/sessions", bearer...)
	if ev := s.next(t, streamWait); strings.Count(ev.data, "data-native-id=") != 2 || !strings.Contains(ev.data, "innerHTML:#session-rows") {
		t.Fatalf("first event %+v", ev)
	}
	f.addWork("work_1", "unrelated") // a commit that changes no session
	f.addOwnedOperation("op_1", "thread-2", "send", operation.StatusQueued, f.now, "rt_alive")
	ev := s.next(t, streamWait)
	if strings.Contains(ev.data, `data-native-id="thread-1"`) || !strings.Contains(ev.data, `data-native-id="thread-2"`) ||
		!strings.Contains(ev.data, `data-liveness="working"`) {
		t.Fatalf("update %+v", ev)
	}
	// The counts come with the row they count, in the same message.
	if !strings.Contains(ev.data, `id="session-counts"`) || !strings.Contains(ev.data, `data-count="working">1<`) {
		t.Fatalf("the update does not carry the counts of its rows: %+v", ev)
	}
}

// TestConversationPageAndStream: messages show sender, recipient, text as
// text, a reply link to a message on the page and the delivery state; a
// new message is appended live and a delivery change replaces its item.
func TestConversationPageAndStream(t *testing.T) {
	pgtest.EachDialect(t, testConversationPageAndStream)
}

func testConversationPageAndStream(t *testing.T, location string) {
	f := newFixtureAt(t, location)
	ctx := context.Background()
	c := f.ent()
	if _, err := c.Conversation.Create().SetID("conversation_1").SetTitle("Review <b>it</b>").SetCreatedAt(f.now).SetUpdatedAt(f.now).Save(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Participant.Create().SetConversationID("conversation_1").SetParticipantID("codex:a").SetProvider("codex").SetNativeID("a").SetJoinedAt(f.now).Save(ctx); err != nil {
		t.Fatal(err)
	}
	add := func(id string, seq int64, text, replyTo string) {
		t.Helper()
		op := f.addOperation("op-"+id, "b", "send", operation.StatusQueued, f.now) // the one ledger carries the message
		m := c.Message.Create().SetID(id).SetConversationID("conversation_1").SetSequence(seq).SetSender("codex:a").SetRecipient("claude-code:b").
			SetText(text).SetCreatedAt(f.now).SetIdempotencyKey("k-" + id).SetOperationID(op.ID)
		if replyTo != "" {
			m.SetReplyTo(replyTo)
		}
		if _, err := m.Save(ctx); err != nil {
			t.Fatal(err)
		}
		// As the service does in the same transaction.
		if err := c.Conversation.UpdateOneID("conversation_1").SetLastSequence(seq).SetUpdatedAt(f.now.Add(time.Duration(seq) * time.Second)).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	add("message_1", 1, "first <script>x</script>", "")
	add("message_2", 2, "second", "message_1")
	res, body := f.get("/desk/conversations/conversation_1", bearer...)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%d", res.StatusCode)
	}
	for _, want := range []string{"2 messages", "38 of 40 messages left", "tokens unknown used of 2000000", `href="#m-message_1"`, "first &lt;script&gt;x&lt;/script&gt;", `data-delivery="queued"`, "Review &lt;b&gt;it&lt;/b&gt;",
		`<span class="sender"><a href="/desk/sessions/codex/a"><code>codex:a</code></a></span>`, `<a href="/desk/receipts/op-message_2">receipt</a>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	s := f.stream("/desk/live/conversation?id=conversation_1&after=2", bearer...)
	s.next(t, streamWait)
	add("message_3", 3, "third", "")
	ev := s.next(t, streamWait)
	if !strings.Contains(ev.data, `beforeend:#messages`) || !strings.Contains(ev.data, `id="m-message_3"`) || ev.id != "3" {
		t.Fatalf("append event %+v", ev)
	}
	if _, err := c.Operation.UpdateOneID("op-message_1").SetStatus(operation.StatusCompleted).SetNativeTurn("turn-9").Save(ctx); err != nil {
		t.Fatal(err)
	}
	ev = s.next(t, streamWait)
	if !strings.Contains(ev.data, `id="m-message_1" hx-swap-oob="true"`) || !strings.Contains(ev.data, `data-delivery="completed"`) ||
		!strings.Contains(ev.data, "turn-9") {
		t.Fatalf("delivery event %+v", ev)
	}
}

// TestStreamsEndAfterTheirLifetime: a stream ends by itself after
// StreamLifetime, so the browser reconnects (and its credential is checked
// again).
func TestStreamsEndAfterTheirLifetime(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.StreamLifetime = 100 * time.Millisecond })
	s := f.stream("/desk/live/receipts", bearer...)
	s.next(t, streamWait) // connected: its lifetime runs
	f.advance(100 * time.Millisecond)
	s.awaitEnd(t, "the stream to end after its lifetime")
}

// TestBoardAndOverviewStreams: the board and the dependency overview are
// live like the lists: a stream opened from the page sends nothing while
// nothing changed (only its greeting), then the new card with its column's
// count, or the overview with the new tie, when the store changes.
func TestBoardAndOverviewStreams(t *testing.T) {
	for _, c := range []struct {
		name, page string
		change     func(f *fixture)
		want       []string
	}{
		{"board", "/desk/work?view=board", func(f *fixture) { f.addWork("work_new", "A new card") },
			[]string{`id="work-board" hx-swap-oob="true"`, `data-work-id="work_new"`, `id="work-counts" hx-swap-oob="true"`, `data-count="all">3<`, `data-count="open">2<`}},
		{"overview", "/desk/graph", func(f *fixture) { f.addWork("work_new", "A new tie", "work_b") },
			[]string{`id="overview-graph" hx-swap-oob="true"`, `id="ge-work_new--work_b"`, `data-chained="3"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.addWork("work_a", "First")
			f.addWork("work_b", "Second", "work_a")
			res, body := f.get(c.page, bearer...)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("%s: %d", c.page, res.StatusCode)
			}
			s := f.stream(liveURL(t, body), bearer...)
			if first := s.next(t, streamWait); strings.Contains(first.data, "work-board") || strings.Contains(first.data, "overview-graph") {
				t.Fatalf("the greeting of an unchanged page sent the page again: %+v", first)
			}
			c.change(f)
			f.poll()
			ev := s.next(t, streamWait)
			for _, want := range c.want {
				if !strings.Contains(ev.data, want) {
					t.Fatalf("the update lacks %s: %s", want, ev.data)
				}
			}
		})
	}
}

// TestStreamStepReadsOneSnapshot: a list's rows and counts read in one
// snapshot agree although another process writes between the two reads
// (read apart, the counts would count a row the rows do not show: the
// control). On both dialects.
func TestStreamStepReadsOneSnapshot(t *testing.T) {
	pgtest.EachDialect(t, func(t *testing.T, location string) {
		f := newFixtureAt(t, location)
		ctx := context.Background()
		f.addSession("thread-1")
		f.addOperation("op_1", "thread-1", "send", operation.StatusCompleted, f.now)
		read := func(r *reader, write func()) (rows, counted, sessions, sessionsCounted int) {
			t.Helper()
			page, err := r.receipts(ctx, ReceiptFilter{})
			if err != nil {
				t.Fatal(err)
			}
			sp, err := r.sessions(ctx, SessionFilter{})
			if err != nil {
				t.Fatal(err)
			}
			write()
			counts, err := r.receiptCounts(ctx, ReceiptFilter{})
			if err != nil {
				t.Fatal(err)
			}
			sc, err := r.sessionCounts(ctx, SessionFilter{})
			if err != nil {
				t.Fatal(err)
			}
			return len(page.Rows), counts.Total, len(sp.Rows), sc.Total
		}
		// The control: read apart, a write in between is counted but not shown.
		rows, counted, _, _ := read(f.h.read, func() {
			f.addOperation("op_2", "thread-1", "send", operation.StatusCompleted, f.now.Add(time.Second))
		})
		if rows != 1 || counted != 2 {
			t.Fatalf("control: %d rows, %d counted; want 1 and 2", rows, counted)
		}
		err := f.h.read.snapshot(ctx, func(r *reader) error {
			rows, counted, sessions, sessionsCounted := read(r, func() {
				f.addOperation("op_3", "thread-1", "send", operation.StatusCompleted, f.now.Add(2*time.Second))
				f.addSession("thread-2")
			})
			if rows != 2 || counted != 2 || sessions != 1 || sessionsCounted != 1 {
				t.Errorf("in one snapshot: %d receipt rows, %d counted; %d session rows, %d counted; want 2, 2, 1, 1",
					rows, counted, sessions, sessionsCounted)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
