package stdio

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// TestBatchesIn20250326: a session that negotiated 2025-03-26 (the one
// protocol version whose servers must accept JSON-RPC batches) gets one
// array answering every call of a batch, in the batch's order, with the
// guard's refusals of bad messages in their places; notifications get no
// answer; initialize is refused inside a batch; the session goes on.
func TestBatchesIn20250326(t *testing.T) {
	s := startSessionAt(t, Options{}, "2025-03-26")
	s.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},` +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"delayMs":200}}},` +
		`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},` +
		`{"jsonrpc":"2.0","id":3,"method":""},` +
		`{"jsonrpc":"2.0","id":"four","method":"tools/call","params":{"name":"echo","arguments":{}}},` +
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"},` +
		`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}},` +
		`{"jsonrpc":"2.0","id":1,"method":"ping"},` +
		`42]`)
	line := s.recvLine()
	var answers []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &answers); err != nil {
		t.Fatalf("batch answer %q is not an array: %v", line, err)
	}
	want := []struct{ id, has string }{
		{"1", `"result"`},
		{"2", `"text":"ok"`},
		{"3", `"code":-32600`},
		{`"four"`, `"text":"ok"`},
		{"1e400", `"result"`},
		{"7", `initialize must not be part of a batch`},
		{"1", `already used by a request in flight`},
		{"null", `"code":-32600`},
	}
	if len(answers) != len(want) {
		t.Fatalf("batch answer has %d answers, want %d: %s", len(answers), len(want), line)
	}
	for i, w := range want {
		raw, _ := json.Marshal(answers[i])
		if string(answers[i]["id"]) != w.id || !strings.Contains(string(raw), w.has) {
			t.Errorf("answer %d: %s, want id %s with %s", i, raw, w.id, w.has)
		}
	}
	if !strings.Contains(line, `"id":1e400`) {
		t.Errorf("the substituted id was not restored as written: %s", line)
	}

	// Notifications only: no answer at all; the next line is the ping's.
	s.send(`[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]`)
	s.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	if got := s.recvLine(); !strings.Contains(got, `"id":"after"`) || strings.HasPrefix(got, "[") {
		t.Fatalf("after a batch of notifications: %s, want the ping's answer", got)
	}
	// An empty batch is one Invalid Request.
	s.send(`[]`)
	if got := s.recvLine(); !strings.Contains(got, `"id":null`) || !strings.Contains(got, `"Invalid Request: empty batch"`) {
		t.Fatalf("empty batch: %s", got)
	}
	// A batch of one is still answered with an array.
	s.send(`[{"jsonrpc":"2.0","id":"one","method":"ping"}]`)
	if got := s.recvLine(); !strings.HasPrefix(got, `[{"jsonrpc":"2.0","id":"one","result"`) {
		t.Fatalf("batch of one: %s", got)
	}
	if err := s.ended(); err != nil {
		t.Fatalf("server ended: %v", err)
	}
}

// TestBatchesRefusedFrom20250618: from 2025-06-18 on (and before a
// session is initialized) a batch is one Invalid Request and the session
// goes on, as over HTTP.
func TestBatchesRefusedFrom20250618(t *testing.T) {
	for _, tt := range []struct{ version, want string }{
		{"2025-06-18", "Invalid Request: batches are not supported in protocol version 2025-06-18 and later (this session: 2025-06-18)"},
		{"2025-11-25", "Invalid Request: batches are not supported in protocol version 2025-06-18 and later (this session: 2025-11-25)"},
		{"", "Invalid Request: batches are not supported before initialization"},
	} {
		t.Run("version "+tt.version, func(t *testing.T) {
			s := startSessionAt(t, Options{}, tt.version)
			s.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`)
			got := s.recvLine()
			if want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"` + tt.want + `"}}`; got != want {
				t.Fatalf("batch: %s\nwant %s", got, want)
			}
			if tt.version == "" {
				return
			}
			s.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
			if m := s.await(`"after"`); m["result"] == nil {
				t.Fatalf("ping after the refused batch: %v", m)
			}
		})
	}
}

// TestHostileBatchesNeverEndTheSession: in a 2025-03-26 session, batches
// with broken, deep, duplicated, cancelling or answering members each get
// their answer (or none, when nothing in them is a call) and the session
// goes on.
func TestHostileBatchesNeverEndTheSession(t *testing.T) {
	s := startSessionAt(t, Options{}, "2025-03-26")
	hostile := []struct{ line, want string }{
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":` + nested(1200, "1") + `}}]`, `"code":-32602`},
		{`[` + nested(5000, "") + `]`, `"code":-32600`},
		{`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, `in flight`},
		{`[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"delayMs":5000}}},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}]`, ""},
		{`[{"jsonrpc":"2.0","id":"x","result":{}},{"jsonrpc":"2.0","id":4,"error":"bad"}]`, ""},
		{`[{"jsonrpc":"2.0","id":null,"method":"ping"},{"jsonrpc":"1.0","id":5,"method":"ping"},"x",null,[]]`, `"id":5`},
		{`[{"jsonrpc":"2.0","id":1e400,"method":"ping"},{"jsonrpc":"2.0","id":1e400,"method":"ping"}]`, `"id":1e400`},
	}
	for i, h := range hostile {
		ping := `"after-` + string(rune('a'+i)) + `"`
		// Written while the answers are read: the guard writes its own
		// refusals from the reading goroutine, and the pipe has no buffer.
		go func() {
			_, _ = io.WriteString(s.in, h.line+"\n"+`{"jsonrpc":"2.0","id":`+ping+`,"method":"ping"}`+"\n")
		}()
		// The batch and the ping after it are served concurrently, so the
		// batch's answer may come before or after the ping's: read until the
		// ping's answer has come and, when the batch must be answered, the
		// batch's answer too.
		var got []string
		pinged := false
		for !pinged || (h.want != "" && !strings.Contains(strings.Join(got, "\n"), h.want)) {
			line := s.recvLine()
			if strings.Contains(line, `"id":`+ping) {
				pinged = true
				continue
			}
			got = append(got, line)
		}
		joined := strings.Join(got, "\n")
		// A call cancelled inside its own batch may still be answered
		// "context canceled" when the SDK's handler returns before the guard
		// drops its slot (seen under -race): the spec's SHOULD NOT answer is
		// a preference, so that one answer is allowed, no other error. It
		// may arrive while a later batch is read.
		joined = strings.ReplaceAll(joined, `[{"jsonrpc":"2.0","id":3,"error":{"code":0,"message":"context canceled"}}]`, "")
		if h.want == "" && strings.Contains(joined, "[") && strings.Contains(joined, `"error"`) {
			t.Errorf("batch %d: %s, want no error answer", i, joined)
		}
		if h.want != "" && !strings.Contains(joined, h.want) {
			t.Errorf("batch %d: answers %.300s, want %s", i, joined, h.want)
		}
	}
	if err := s.ended(); err != nil {
		t.Fatalf("server ended: %v", err)
	}
}
