package desk

// Temporary: the html/template renderer and the Go one must write the same
// bytes for every page and fragment. Deleted with the templates.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/desk/markup"
	"github.com/agent-interop/runtime/internal/events"
)

// hostileValues: markup, quotes, '+', NUL, a script URL, another host,
// empty, long, non-ASCII.
var hostileValues = []string{
	`<script>alert("x")</script> & 'y' +1 ` + "\x00 é 日本",
	`javascript:alert(1)`,
	"",
	`//evil.example/"><img src=x onerror=alert(1)>` + strings.Repeat("ab+<", 80),
	`codex:thread-1`,
	`codex://evil`,
	`a_b_c waiting_on_approval`,
	"%41%zz%",
}

type variant struct {
	i int
	s func(tag string) string
}

func variants() []variant {
	var out []variant
	for i := range hostileValues {
		out = append(out, variant{i: i, s: func(tag string) string {
			v := hostileValues[(i+len(tag))%len(hostileValues)]
			if i%3 == 1 && v != "" {
				return tag + v
			}
			return v
		}})
	}
	return out
}

func (v variant) on(k int) bool { return (v.i>>k)&1 == 1 || v.i == 7 }

func (v variant) when() time.Time {
	if v.i == 2 {
		return time.Time{}
	}
	return time.Date(2026, 1, 2, 3, 4, 5, 123456789*v.i, time.FixedZone("x", 3600))
}

func (v variant) whenp() *time.Time {
	if v.on(0) {
		return nil
	}
	t := v.when()
	return &t
}

func (v variant) strs(tag string) []string {
	if v.on(1) {
		return nil
	}
	return []string{v.s(tag + "1"), v.s(tag + "2"), "plain"}
}

func (v variant) pick(options ...string) string { return options[v.i%len(options)] }

func (v variant) liveness() Liveness {
	return Liveness{State: v.pick(LiveWorking, LiveWaitingOnApproval, LiveIdle, LiveDead, LiveUnknown, v.s("state")),
		ObservedAt: v.whenp(), Reason: v.s("reason"), Source: v.pick(SourceRuntime, SourceStore, v.s("src")), OwnerGone: v.on(2)}
}

func (v variant) sessionRow() SessionRow {
	r := SessionRow{ID: v.i * 7, Provider: v.s("prov"), NativeID: v.s("native"), Title: v.s("title"), CWD: v.s("cwd"),
		Endpoint: v.s("endpoint"), Host: v.s("host"), State: v.s("pstate"), FirstSeen: v.when(), LastSeen: v.when(),
		LastEvent: v.whenp(), LastSeq: int64(v.i * 11), Liveness: v.liveness()}
	if !v.on(1) {
		r.Pending = []PendingRequest{{Sequence: 3, Type: v.s("ptype"), Title: v.s("ptitle"), At: v.when()}, {Sequence: 4, Type: "x"}}
	}
	return r
}

func (v variant) receiptRow() ReceiptRow {
	return ReceiptRow{ID: v.s("op"), Key: v.s("key"), Provider: v.s("prov"), NativeID: v.s("native"),
		Operation: v.pick("send", "cancel", v.s("operation")), Status: v.pick("queued", "completed", v.s("status")),
		ProviderState: v.s("ps"), Reason: v.s("reason") + strings.Repeat("r", 200*(v.i%2)), Classification: v.s("class"), Turn: v.s("turn"),
		TextSHA: v.s("sha"), Owner: v.s("owner"), Created: v.when(), Updated: v.when(), Verdict: v.s("verdict"), Usage: v.pick(v.s("usage"), "", "x", ""),
		TurnError: v.s("turnerr"), ChangedFiles: v.strs("file")}
}

func (v variant) eventRows() []EventRow {
	if v.on(1) {
		return nil
	}
	return []EventRow{{Sequence: 1, Epoch: 1, Timestamp: v.when(), Type: v.s("type"), Data: v.s("data") + strings.Repeat("d", 100), Cut: true},
		{Sequence: 2, Epoch: int64(v.i), Timestamp: v.when(), Type: "t", Data: v.s("data2")}}
}

func (v variant) workRow() WorkRow {
	return WorkRow{ID: v.s("work"), Objective: v.s("objective") + strings.Repeat("o", 150*(v.i%2)), Status: v.pick("open", "done", v.s("st")),
		Source: v.pick("codex:thread-1", "", v.s("src"), "javascript:alert(1)"), Destination: v.pick("", "opencode:x y", v.s("dst")),
		Created: v.when(), Updated: v.when(), Blocked: v.on(2)}
}

func (v variant) graph() Graph {
	g := Graph{Focus: v.s("focus"), Depth: v.i%3 + 1, Truncated: v.on(0), Mermaid: v.s("mermaid")}
	for k := range v.i % 3 {
		g.Nodes = append(g.Nodes, GraphNode{Key: fmt.Sprint("n", k), ID: v.s("node")})
	}
	if !v.on(1) {
		g.Edges = []GraphEdge{{From: v.s("from"), To: v.s("to")}, {From: "a", To: "b"}}
	}
	return g
}

func (v variant) conflicts() []ConflictRow {
	if v.on(1) {
		return nil
	}
	return []ConflictRow{{ID: 1, WorkID: v.s("cw"), Session: v.s("cs"), Resource: v.s("cr"), Kind: v.s("ck"), Mode: v.s("cm"),
		HeldClaim: v.s("hc"), HeldSession: v.pick("codex:a", v.s("hs")), At: v.when()}}
}

func (v variant) claimRows() []ClaimRow {
	if v.on(0) {
		return nil
	}
	return []ClaimRow{{ID: v.s("claim"), WorkID: v.s("cwork"), Session: v.s("csess"), Resource: v.s("res"), Kind: v.s("kind"),
		Mode: v.s("mode"), Status: v.pick("active", "expired", v.s("cst")), Expires: v.when(), Conflicts: v.conflicts()},
		{ID: "c2", Status: "active"}}
}

func (v variant) tail(id string) listTail {
	return listTail{ID: v.pick(id, v.s("tail")), Text: v.s("empty"), Base: Base + "/sessions",
		Query: queryString("provider", v.s("qp"), "q", v.s("qq")), Next: v.s("next"), OOB: v.pick("", "true"), Hidden: v.on(1)}
}

func (v variant) position(id string) Position {
	return Position{ID: v.pick(id, v.s("pos")), From: v.i * 1000, To: v.i*1000 + 49*(v.i%2), Total: v.i * 12345, OOB: v.pick("true", "")}
}

func (v variant) tally() Tally {
	t := Tally{Total: v.i * 1234}
	if !v.on(1) {
		t.Counts = []StatusCount{{Status: "completed", N: 1234567}, {Status: v.s("cnt"), N: v.i}, {Status: "waiting_on_approval"}}
	}
	return t
}

func (v variant) workDetail() WorkDetail {
	d := WorkDetail{WorkRow: v.workRow(), Acceptance: v.strs("acc"), Risks: v.strs("risk"), Questions: v.strs("q"),
		ChangedFiles: v.strs("cf"), Graph: v.graph(), Claims: v.claimRows(), MoreEvidence: v.on(0), MoreHandoffs: v.on(1),
		MoreReviews: v.on(0), Usage: v.s("usage")}
	if !v.on(2) {
		d.Evidence = []EvidenceRow{{ID: v.s("ev"), Kind: v.s("kind"), Trust: v.s("trust_x"), Session: v.pick("codex:a", "", v.s("es")),
			Summary: v.s("sum") + strings.Repeat("s", 170), Hash: v.s("hash") + "0123456789abcdef", Bytes: v.i * 100, Captured: v.when()}}
		d.Handoffs = []HandoffRow{{ID: v.s("ho"), Source: v.s("hsrc"), Destination: v.pick("", "codex:d", v.s("hdst")), Objective: v.s("hobj"),
			Status: v.s("hst"), Continuation: v.s("cont_x"), Tokens: v.i * 10, Budget: v.i * 7, Omitted: v.strs("om"), Created: v.when(), Updated: v.when()}}
		d.Reviews = []ReviewRow{{ID: v.s("rv"), Reviewer: v.s("rvr"), Verdict: v.s("verdict"), Provenance: v.s("prov_x"), Findings: v.i,
			Blocking: v.i % 2, Subjects: v.strs("subj"), Created: v.when()}}
	}
	return d
}

func (v variant) message() MessageRow {
	return MessageRow{ID: v.s("msg"), Sender: v.pick("codex:s", v.s("snd")), Recipient: v.s("rcp"), Text: v.s("text"),
		ReplyTo: v.s("reply"), Delivery: v.s("delivery"), Sequence: int64(v.i), Created: v.when(), Operation: v.s("op"),
		Turn: v.s("turn"), ProviderState: v.s("ps"), ReplyOnPage: v.on(0)}
}

func (v variant) budget() *conversations.BudgetLeft {
	if v.on(2) {
		return nil
	}
	b := &conversations.BudgetLeft{MessagesLeft: int64(v.i), TokensUsed: conversations.TokensUsed{Known: v.on(0), Count: 99}}
	b.Messages, b.TurnsPerParticipant, b.Tokens = 100, 5, 1000
	if !v.on(1) {
		b.TurnsLeft = []conversations.ParticipantTurns{{ParticipantID: v.s("pid"), Left: 3}}
	}
	return b
}

func (v variant) conversationDetail() ConversationDetail {
	d := ConversationDetail{ConversationRow: v.conversationRow(), Earlier: int64(v.i % 2 * 42), Budget: v.budget(), Usage: v.s("usage")}
	if !v.on(1) {
		d.Participants = []ParticipantRow{{ID: v.s("part"), Provider: v.s("pp"), NativeID: v.s("pn"), Workspace: v.s("ws"), Role: v.s("role")}}
		d.Messages = []MessageRow{v.message(), {ID: "m2"}}
	}
	if v.on(0) {
		d.Gap = &conversations.Gap{From: 1, To: 9}
	}
	return d
}

func (v variant) conversationRow() ConversationRow {
	return ConversationRow{ID: v.s("conv"), Title: v.s("ctitle") + strings.Repeat("t", 110*(v.i%2)), Participants: v.i, Messages: v.i * 2, Created: v.when(), Updated: v.when()}
}

func (v variant) sessionView() sessionView {
	sv := sessionView{Session: v.sessionRow(), Events: EventPage{Rows: v.eventRows()}, Receipts: ReceiptPage{},
		Undiscovered: v.on(0), Work: WorkPage{}, Claims: ClaimPage{Rows: v.claimRows()}, Conversations: v.strs("convid"),
		Usage: v.s("usage"), AsksErr: v.s("askserr"), CanAct: v.on(1) || v.i == 0, ActNote: v.on(2)}
	if v.on(0) {
		sv.Events.Gap = &events.Gap{From: 2, To: 5}
	}
	if !v.on(1) {
		sv.Receipts.Rows = []ReceiptRow{v.receiptRow()}
		sv.Work.Rows = []WorkRow{v.workRow(), {ID: "w2", Blocked: true}}
	}
	if !v.on(2) {
		sv.Asks = []PermissionAsk{{RequestID: v.s("req"), Method: v.s("method"), Title: v.s("atitle"), Paths: v.strs("path"),
			Conflicts: v.strs("conf"), Options: []PermissionChoice{{ID: "allow_once", Kind: ""}, {ID: v.s("opt"), Name: v.s("name"), Kind: v.s("kind")}, {ID: "reject_always", Kind: "reject"}}}}
	}
	return sv
}

func (v variant) pages() map[string]pageData {
	pd := func(data any) pageData {
		return pageData{Title: v.s("title"), Nav: v.pick("sessions", "receipts", "work", "claims", "conversations", "", v.s("nav")),
			Live: v.pick("", Base+"/live/session"+queryString("provider", v.s("lp"), "nativeId", v.s("ln"), "after", "12")),
			Now:  v.when(), Data: data, Query: v.s("query"), CSRF: v.pick("", v.s("csrf"))}
	}
	wf := WorkFilter{Status: v.pick("", "open", v.s("wfs")), Session: v.s("wfsess"), Query: v.s("wfq"), Sort: v.pick("", "created", "status", "updated", v.s("sort"))}
	board := []BoardColumn{{Status: "open", N: 3, Rows: []WorkRow{v.workRow()}, More: v.on(0)}, {Status: v.s("col"), N: 0, More: true}}
	return map[string]pageData{
		"sessions": pd(sessionsView{Filter: SessionFilter{Provider: v.pick("", "codex", v.s("fp")), Workspace: v.s("fws")},
			Providers: []string{"codex", v.s("p")}, Page: SessionPage{Rows: []SessionRow{v.sessionRow(), {ID: 2}}},
			Tail: v.tail("session-rows"), Position: v.position("sessions"), Counts: SessionCounts{Tally: v.tally(), OOB: v.pick("", "true")}}),
		"session": pd(v.sessionView()),
		"receipts": pd(receiptsView{Filter: ReceiptFilter{Provider: v.s("rp"), NativeID: v.s("rn"), Status: v.pick("", "completed", v.s("rs")), Operation: v.pick("", "send")},
			Providers: []string{"codex", v.s("rp")}, States: []string{"completed", "waiting_on_x", v.s("rs")}, Operations: []string{"send", "cancel"},
			Page: ReceiptPage{Rows: []ReceiptRow{v.receiptRow()}, Searched: v.i * 100}, Tail: v.tail("receipt-rows"),
			Counts:   ReceiptCounts{Tally: v.tally(), Filter: ReceiptFilter{Provider: v.s("cp"), Status: v.pick("", "completed")}, OOB: v.pick("true", "")},
			Position: v.position("receipts")}),
		"receipt": pd(ReceiptDetail{ReceiptRow: v.receiptRow(), Detail: v.s("detail"), Events: v.eventRows(), MessageID: v.s("mid"),
			ConversationID: v.s("cid"), MessageSequence: 5, MessageDOMID: v.s("mdom"), ViaDesk: v.on(0)}),
		"work": pd(workView{Filter: wf, Statuses: []string{"open", "in_progress", v.s("ws")}, Sorts: workSorts,
			Page: WorkPage{Rows: []WorkRow{v.workRow()}}, Tail: v.tail("work-rows"), Position: v.position("work"),
			Counts: WorkCounts{Tally: v.tally(), Filter: wf}, View: v.pick("", "board", "list"), Board: board, BoardOOB: v.pick("", "true")}),
		"workitem":      pd(v.workDetail()),
		"claims":        pd(claimsView{Filter: ClaimFilter{Resource: v.s("cres"), Session: v.s("csess")}, Page: ClaimPage{Rows: v.claimRows(), Conflicts: v.conflicts(), Start: 1, Total: v.i}, Tail: v.tail("claim-rows")}),
		"conversations": pd(conversationsView{Page: ConversationPage{Rows: []ConversationRow{v.conversationRow()}}, Tail: v.tail("conversation-rows"), Position: v.position("conversations")}),
		"conversation":  pd(v.conversationDetail()),
		"graph":         pd(Overview{Graph: v.graph(), Session: v.s("osess"), Chained: v.i * 3, OOB: v.pick("", "true")}),
		"search":        pd(searchView{Query: v.s("q"), Work: []WorkRow{v.workRow()}[:v.i%2], Conversations: []ConversationRow{v.conversationRow()}[:(v.i/2)%2], Sessions: []SearchHit{{Provider: v.s("sp"), NativeID: v.s("sn"), Title: v.s("st")}}[:(v.i/4)%2]}),
		"notfound":      pd(v.s("what")),
	}
}

type fragCase struct {
	name string
	data any
	new  func(w *markup.Writer)
}

func (v variant) fragments() []fragCase {
	oob := v.pick("", "true")
	sr, rr, wr, cr, m := v.sessionRow(), v.receiptRow(), v.workRow(), v.conversationRow(), v.message()
	rd := ReceiptDetail{ReceiptRow: rr, Detail: v.s("detail"), Events: v.eventRows(), MessageID: v.s("mid"), ConversationID: v.s("cid"), MessageDOMID: v.s("md")}
	wd, sv := v.workDetail(), v.sessionView()
	cp := ClaimPage{Rows: v.claimRows(), Conflicts: v.conflicts(), Start: v.i, Total: v.i * 1000}
	wf := WorkFilter{Status: v.pick("", "open"), Session: v.s("s"), Query: v.s("q"), Sort: v.s("sort")}
	wv := workView{Filter: wf, Board: []BoardColumn{{Status: v.s("col"), N: v.i, Rows: []WorkRow{wr}, More: v.on(1)}, {Status: "done"}}, BoardOOB: oob}
	ov := Overview{Graph: v.graph(), Chained: v.i, OOB: oob}
	evs := v.eventRows()
	var gap *events.Gap
	if v.on(2) {
		gap = &events.Gap{From: 1, To: 2}
	}
	tail, pos, l := v.tail("x-rows"), v.position("x"), v.liveness()
	rc := ReceiptCounts{Tally: v.tally(), Filter: ReceiptFilter{Provider: v.s("p"), NativeID: v.s("n"), Operation: v.s("o"), Status: v.pick("", "completed")}, OOB: oob}
	sc := SessionCounts{Tally: v.tally(), OOB: oob}
	wc := WorkCounts{Tally: v.tally(), Filter: wf, OOB: oob}
	b := v.budget()
	return []fragCase{
		{"live-status", v.when(), func(w *markup.Writer) { liveStatusHTML(w, v.when()) }},
		{"liveness", l, func(w *markup.Writer) { livenessHTML(w, l) }},
		{"liveness-source", l, func(w *markup.Writer) { livenessSourceHTML(w, l) }},
		{"status", v.s("status"), func(w *markup.Writer) { statusHTML(w, v.s("status")) }},
		{"ref", v.s("ref"), func(w *markup.Writer) { refHTML(w, v.s("ref")) }},
		{"ref", "codex:" + v.s("ref"), func(w *markup.Writer) { refHTML(w, "codex:"+v.s("ref")) }},
		{"session-row", map[string]any{"Row": sr, "OOB": oob}, func(w *markup.Writer) { sessionRowHTML(w, sr, oob) }},
		{"session-summary", map[string]any{"Row": sr, "OOB": oob}, func(w *markup.Writer) { sessionSummaryHTML(w, sr, oob) }},
		{"receipt-row", map[string]any{"Row": rr, "OOB": oob}, func(w *markup.Writer) { receiptRowHTML(w, rr, oob) }},
		{"receipt-table", map[string]any{"Rows": sv.Receipts.Rows, "ID": "session-receipts", "OOB": oob}, func(w *markup.Writer) {
			receiptTableHTML(w, "session-receipts", sv.Receipts.Rows, oob)
		}},
		{"receipt-detail", map[string]any{"D": rd, "OOB": oob}, func(w *markup.Writer) { receiptDetailHTML(w, rd, oob) }},
		{"event-rows", map[string]any{"Rows": evs, "Gap": gap}, func(w *markup.Writer) { eventRowsHTML(w, evs, gap) }},
		{"work-row", map[string]any{"Row": wr, "OOB": oob}, func(w *markup.Writer) { workRowHTML(w, wr, oob) }},
		{"work-graph", map[string]any{"G": wd.Graph, "OOB": oob}, func(w *markup.Writer) { workGraphHTML(w, wd.Graph, oob) }},
		{"work-records", map[string]any{"D": wd, "OOB": oob}, func(w *markup.Writer) { workRecordsHTML(w, wd, oob) }},
		{"claims-live", map[string]any{"Page": cp, "OOB": oob}, func(w *markup.Writer) { claimsLiveHTML(w, cp, oob) }},
		{"conversation-row", map[string]any{"Row": cr, "OOB": oob}, func(w *markup.Writer) { conversationRowHTML(w, cr, oob) }},
		{"message", map[string]any{"Row": m, "OOB": oob}, func(w *markup.Writer) { messageHTML(w, m, oob) }},
		{"pager", tail, func(w *markup.Writer) { pagerHTML(w, tail) }},
		{"list-empty", tail, func(w *markup.Writer) { listEmptyHTML(w, tail) }},
		{"csrf", v.s("csrf"), func(w *markup.Writer) { csrfHTML(w, v.s("csrf")) }},
		{"session-actions", map[string]any{"V": sv, "CSRF": v.s("csrf"), "OOB": oob}, func(w *markup.Writer) { sessionActionsHTML(w, sv, v.s("csrf"), oob) }},
		{"session-mentions", sv, func(w *markup.Writer) { sessionMentionsHTML(w, sv) }},
		{"work-status", wr, func(w *markup.Writer) { workStatusHTML(w, wr) }},
		{"list-position", pos, func(w *markup.Writer) { listPositionHTML(w, pos) }},
		{"receipt-counts", rc, func(w *markup.Writer) { receiptCountsHTML(w, rc) }},
		{"session-counts", sc, func(w *markup.Writer) { sessionCountsHTML(w, sc) }},
		{"work-counts", wc, func(w *markup.Writer) { workCountsHTML(w, wc) }},
		{"work-board", wv, func(w *markup.Writer) { workBoardHTML(w, wv) }},
		{"overview-graph", ov, func(w *markup.Writer) { overviewGraphHTML(w, ov) }},
		{"usage-line", map[string]any{"ID": "session-usage", "Usage": v.s("usage"), "OOB": oob}, func(w *markup.Writer) { usageLineHTML(w, "session-usage", v.s("usage"), oob) }},
		{"work-usage", map[string]any{"Usage": v.s("usage"), "OOB": oob}, func(w *markup.Writer) { workUsageHTML(w, v.s("usage"), oob) }},
		{"conversation-budget", map[string]any{"Budget": b, "OOB": oob}, func(w *markup.Writer) { conversationBudgetHTML(w, b, oob) }},
	}
}

func TestGoRendererMatchesTheTemplates(t *testing.T) {
	old := &templates{}
	pages, frags := 0, 0
	for _, v := range variants() {
		for name, pd := range v.pages() {
			want, err := old.page(name, pd)
			if err != nil {
				t.Fatal(err)
			}
			got, err := renderPage(name, pd)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("variant %d page %s differs:\n%s", v.i, name, firstDiff(string(got), string(want)))
			}
			pages++
		}
		for _, fc := range v.fragments() {
			want, err := old.fragment(fc.name, fc.data)
			if err != nil {
				t.Fatal(err)
			}
			var w markup.Writer
			fc.new(&w)
			if w.String() != want {
				t.Errorf("variant %d fragment %s differs:\n%s", v.i, fc.name, firstDiff(w.String(), want))
			}
			frags++
		}
		msg, action := v.s("message"), Base+"/login"
		want, err := old.signin(map[string]any{"Message": msg, "Action": action})
		if err != nil {
			t.Fatal(err)
		}
		var w markup.Writer
		signinHTML(&w, msg, action)
		if w.String() != string(want) {
			t.Errorf("variant %d signin differs:\n%s", v.i, firstDiff(w.String(), string(want)))
		}
	}
	t.Logf("compared %d pages, %d fragments, %d sign-in pages byte for byte", pages, frags, len(variants()))
}

func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(i-200, 0)
	return fmt.Sprintf("at byte %d\ngot  …%q\nwant …%q", i, got[lo:min(i+200, len(got))], want[lo:min(i+200, len(want))])
}

// renderBenchPages are the pages the render benchmarks draw: every page of
// every variant, and a receipts page of 50 ordinary rows.
func renderBenchPages() (map[string]pageData, []map[string]pageData) {
	var all []map[string]pageData
	for _, v := range variants() {
		all = append(all, v.pages())
	}
	rows := make([]ReceiptRow, 50)
	for i := range rows {
		at := time.Date(2026, 1, 2, 3, 4, 5, i, time.UTC)
		rows[i] = ReceiptRow{ID: fmt.Sprintf("op_%08d", i), Provider: "codex", NativeID: fmt.Sprintf("thread-%d", i%100), Operation: "send",
			Status: "completed", Created: at, Updated: at}
	}
	receipts := map[string]pageData{"receipts": {Title: "Receipts", Nav: "receipts", Live: Base + "/live/receipts", Now: time.Now(),
		Data: receiptsView{Page: ReceiptPage{Rows: rows}, States: receiptStates, Operations: []string{"send", "cancel", "permission"},
			Tail: listTail{ID: "receipt-rows", Base: Base + "/receipts", Next: "abc"}, Position: Position{ID: "receipts", From: 1, To: 50, Total: 1000}}}}
	return receipts, all
}

func BenchmarkRender(b *testing.B) {
	receipts, all := renderBenchPages()
	old := &templates{}
	for _, tc := range []struct {
		name  string
		pages []map[string]pageData
	}{{"receipts50", []map[string]pageData{receipts}}, {"every-page", all}} {
		b.Run(tc.name+"/templates", func(b *testing.B) {
			for b.Loop() {
				for _, set := range tc.pages {
					for name, pd := range set {
						if _, err := old.page(name, pd); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
		})
		b.Run(tc.name+"/go", func(b *testing.B) {
			for b.Loop() {
				for _, set := range tc.pages {
					for name, pd := range set {
						if _, err := renderPage(name, pd); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
		})
	}
}
