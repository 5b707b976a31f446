package conversations_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
)

func TestCreate(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	c, err := e.svc.Create(ctx, "  Review auth  ")
	if err != nil {
		t.Fatal(err)
	}
	if c.Title != "Review auth" || !strings.HasPrefix(c.ID, "conversation_") || c.LastSequence != 0 ||
		c.MessageCount != 0 || len(c.Participants) != 0 || !c.CreatedAt.Equal(t0) || !c.UpdatedAt.Equal(t0) {
		t.Fatalf("created %+v", c)
	}
	long, err := e.svc.Create(ctx, strings.Repeat("é", 310))
	if err != nil || long.Title != strings.Repeat("é", 300) {
		t.Fatalf("long title: %q, %v", long.Title, err)
	}
	before := e.counts(t)
	for _, title := range []string{"", "   \n\t"} {
		_, err := e.svc.Create(ctx, title)
		if err == nil || err.Error() != "Conversation title must not be blank" {
			t.Errorf("Create(%q) err = %v", title, err)
		}
	}
	if e.counts(t) != before {
		t.Fatalf("rejected create changed the store")
	}
}

func TestJoin(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	c, _ := e.svc.Create(ctx, "t")
	testclock.Pass(ctx, e.clock, time.Second)
	got, err := e.svc.Join(ctx, conversations.JoinInput{ConversationID: c.ID, Provider: "codex", NativeID: " thread-1 ", WorkspaceID: "/repo", Role: "editor"})
	if err != nil {
		t.Fatal(err)
	}
	want := conversations.Participant{ID: "codex:thread-1", Provider: "codex", NativeID: "thread-1", WorkspaceID: "/repo", Role: "editor", JoinedAt: t0.Add(time.Second)}
	if len(got.Participants) != 1 || got.Participants[0] != want || !got.UpdatedAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("join = %+v", got)
	}

	testclock.Pass(ctx, e.clock, time.Second)
	again, err := e.svc.Join(ctx, conversations.JoinInput{ConversationID: c.ID, Provider: "codex", NativeID: "thread-1", Role: "reviewer"})
	if err != nil || len(again.Participants) != 1 || again.Participants[0] != want || !again.UpdatedAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("re-join is not a no-op: %+v, %v", again, err)
	}
	alias, err := e.svc.Join(ctx, conversations.JoinInput{ConversationID: c.ID, Provider: "codex", NativeID: "thread-1", ParticipantID: "lead"})
	if err != nil || len(alias.Participants) != 1 {
		t.Fatalf("same session under another ID: %+v, %v", alias, err)
	}
	custom, err := e.svc.Join(ctx, conversations.JoinInput{ConversationID: c.ID, Provider: "cursor", NativeID: "c1", ParticipantID: "reviewer"})
	if err != nil || len(custom.Participants) != 2 || custom.Participants[1].ID != "reviewer" {
		t.Fatalf("custom participant ID: %+v, %v", custom, err)
	}

	tests := []struct {
		name string
		in   conversations.JoinInput
		want string
	}{
		{"rebinding a participant ID", conversations.JoinInput{ConversationID: c.ID, Provider: "opencode", NativeID: "x", ParticipantID: "reviewer"},
			"Participant ID 'reviewer' is already bound to cursor:c1"},
		{"rebinding a default ID", conversations.JoinInput{ConversationID: c.ID, Provider: "opencode", NativeID: "x", ParticipantID: "codex:thread-1"},
			"Participant ID 'codex:thread-1' is already bound to codex:thread-1"},
		{"unknown conversation", conversations.JoinInput{ConversationID: "conversation_nope", Provider: "codex", NativeID: "x"},
			"Unknown conversation conversation_nope"},
		{"unknown provider", conversations.JoinInput{ConversationID: c.ID, Provider: "No_Such", NativeID: "x"}, "Unknown provider No_Such: an agent id is lower-case letters, digits and dashes"},
		{"blank native ID", conversations.JoinInput{ConversationID: c.ID, Provider: "codex", NativeID: " "}, "nativeId must not be blank"},
		{"bad role", conversations.JoinInput{ConversationID: c.ID, Provider: "codex", NativeID: "y", Role: "owner"},
			`role must be one of sender, reviewer, editor; received "owner"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.snapshot(t)
			n := e.counts(t)
			_, err := e.svc.Join(ctx, tt.in)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if e.counts(t) != n || e.snapshot(t) != before {
				t.Fatal("rejected join changed the store")
			}
		})
	}
}

func TestListAndGet(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	if got, err := e.svc.List(ctx, conversations.ListInput{}); err != nil || len(got.Conversations) != 0 {
		t.Fatalf("empty list = %v, %v", got, err)
	}
	first := e.conv(t)
	testclock.Pass(ctx, e.clock, time.Second)
	second, _ := e.svc.Create(ctx, "second")
	testclock.Pass(ctx, e.clock, time.Second)
	if _, err := e.send(t, first, "hello", ""); err != nil {
		t.Fatal(err)
	}

	page, err := e.svc.List(ctx, conversations.ListInput{})
	list := page.Conversations
	if err != nil || len(list) != 2 || list[0].ID != first || list[1].ID != second.ID {
		t.Fatalf("list order = %+v, %v (want most recently updated first)", list, err)
	}
	if list[0].MessageCount != 1 || list[0].Messages != nil || len(list[0].Participants) != 2 || list[1].MessageCount != 0 {
		t.Fatalf("list summary = %+v", list)
	}
	raw, _ := json.Marshal(list[1])
	if strings.Contains(string(raw), `"messages"`) {
		t.Fatalf("summary without detail carries messages: %s", raw)
	}

	detailPage, err := e.svc.List(ctx, conversations.ListInput{Detail: true})
	detail := detailPage.Conversations
	if err != nil || len(detail[0].Messages) != 1 || detail[0].Messages[0].Text != "hello" || detail[1].Messages == nil {
		t.Fatalf("detail list = %+v, %v", detail, err)
	}
	raw, _ = json.Marshal(detail[1])
	if !strings.Contains(string(raw), `"messages":[]`) {
		t.Fatalf("detail of an empty conversation lacks messages: %s", raw)
	}

	got, err := e.svc.Get(ctx, first, true)
	if err != nil || got.ID != first || len(got.Messages) != 1 {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if _, err := e.svc.Get(ctx, "conversation_nope", false); err == nil || err.Error() != "Unknown conversation conversation_nope" {
		t.Fatalf("Get unknown: %v", err)
	}
}

func TestJSONShape(t *testing.T) {
	e := newEnv(t, acceptQueued())
	id := e.conv(t)
	res, err := e.send(t, id, "hi", "k1")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res)
	for _, field := range []string{`"message":{`, `"conversationId":`, `"sequence":1`, `"sender":"codex:a"`, `"recipient":"claude-code:b"`,
		`"createdAt":"2025-03-01T12:00:00Z"`, `"delivery":"queued"`, `"idempotencyKey":"k1"`, `"receipt":{"provider":"claude-code","nativeId":"b","operation":"send","accepted":true,"status":"queued","providerState":"transport_accepted"`} {
		if !strings.Contains(string(raw), field) {
			t.Errorf("send result lacks %s: %s", field, raw)
		}
	}
	for _, absent := range []string{`"dispatchLease"`, `"replyTo"`, `"deliveryUnknownAt"`, `"trimmedAt"`} {
		if strings.Contains(string(raw), absent) {
			t.Errorf("send result has %s: %s", absent, raw)
		}
	}
}

func TestReadPaging(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	id := e.conv(t)
	for i := range 5 {
		if _, err := e.send(t, id, "m"+string(rune('1'+i)), ""); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		in       conversations.ReadInput
		wantSeqs []int64
		wantNext int64
	}{
		{conversations.ReadInput{ConversationID: id}, []int64{1, 2, 3, 4, 5}, 5},
		{conversations.ReadInput{ConversationID: id, After: 2, Limit: 2}, []int64{3, 4}, 4},
		{conversations.ReadInput{ConversationID: id, After: 4, Limit: 1000}, []int64{5}, 5},
		{conversations.ReadInput{ConversationID: id, After: 5}, nil, 5},
		{conversations.ReadInput{ConversationID: id, After: 9}, nil, 9},
		{conversations.ReadInput{ConversationID: id, After: -3, Limit: -1}, []int64{1}, 1},
	}
	for _, tt := range tests {
		p, err := e.svc.Read(ctx, tt.in)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		for _, m := range p.Messages {
			seqs = append(seqs, m.Sequence)
		}
		if !equalSeqs(seqs, tt.wantSeqs) || p.Next != tt.wantNext || p.LatestSequence != 5 || p.Gap != nil ||
			p.Conversation.MessageCount != 5 || p.Conversation.Messages != nil {
			t.Errorf("Read(%+v) = seqs %v next %d latest %d gap %v", tt.in, seqs, p.Next, p.LatestSequence, p.Gap)
		}
	}
	var nf *conversations.NotFoundError
	if _, err := e.svc.Read(ctx, conversations.ReadInput{ConversationID: "conversation_x"}); !errors.As(err, &nf) || err.Error() != "Unknown conversation conversation_x" {
		t.Fatalf("unknown conversation: %v", err)
	}
}

func equalSeqs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestReadAndListCursors pages a conversation with nextCursor (also after
// a cut) and the conversation list with its own cursor; each cursor is
// refused by the other tool.
func TestReadAndListCursors(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	id := e.conv(t)
	for i := range 7 {
		if _, err := e.send(t, id, "m"+string(rune('1'+i)), ""); err != nil {
			t.Fatal(err)
		}
	}
	var seqs []int64
	cursor := ""
	for pages := 0; pages < 10; pages++ {
		p, err := e.svc.Read(ctx, conversations.ReadInput{ConversationID: id, Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if pages == 0 {
			p = p.CutPage(2).(conversations.Page)
		}
		for _, m := range p.Messages {
			seqs = append(seqs, m.Sequence)
		}
		if p.NextCursor == "" {
			break
		}
		cursor = p.NextCursor
	}
	if !equalSeqs(seqs, []int64{1, 2, 3, 4, 5, 6, 7}) {
		t.Fatalf("read pages = %v", seqs)
	}
	if _, err := e.svc.Read(ctx, conversations.ReadInput{ConversationID: id, After: 2, Cursor: cursor}); err == nil || !strings.Contains(err.Error(), "cursor") {
		t.Fatalf("cursor with after: %v", err)
	}
	for range 4 {
		testclock.Pass(ctx, e.clock, time.Second)
		if _, err := e.svc.Create(ctx, "more"); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	list, err := e.svc.List(ctx, conversations.ListInput{Limit: 2})
	for pages := 0; err == nil && pages < 10; pages++ {
		for _, c := range list.Conversations {
			if seen[c.ID] {
				t.Fatalf("conversation %s listed twice", c.ID)
			}
			seen[c.ID] = true
		}
		if list.NextCursor == "" {
			break
		}
		if _, rerr := e.svc.Read(ctx, conversations.ReadInput{ConversationID: id, Cursor: list.NextCursor}); rerr == nil || !strings.Contains(rerr.Error(), "issued by list_conversations") {
			t.Fatalf("list cursor given to read: %v", rerr)
		}
		list, err = e.svc.List(ctx, conversations.ListInput{Limit: 2, Cursor: list.NextCursor})
	}
	if err != nil || len(seen) != 5 {
		t.Fatalf("listed %d conversations, %v", len(seen), err)
	}
}
