package importstate

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestMalformedInputIsRefused feeds each malformed fixture (as the state
// or the conversations file) and checks the refusal names the file, the
// position and the path of every problem, and that no store was touched.
func TestMalformedInputIsRefused(t *testing.T) {
	cases := []struct {
		file  string
		state bool // given as --state (else --conversations)
		want  []string
	}{
		{"syntax-state.json", true, []string{
			"syntax-state.json:7:5: not valid JSON: invalid character '}' looking for beginning of object key string"}},
		{"truncated-conversations.json", false, []string{
			"truncated-conversations.json:4:48: not valid JSON: unexpected end of JSON input"}},
		{"not-an-object.json", true, []string{
			"not-an-object.json:1:1: expected an object, found array"}},
		{"wrongtype-state.json", true, []string{
			"wrongtype-state.json:4:81: works[1].acceptanceCriteria: expected an array, found string"}},
		{"wrongtype-conversations.json", false, []string{
			"wrongtype-conversations.json:10:22: conversations[0].messages[0].sequence: expected an integer, found string"}},
		{"wrongtype-receipt.json", false, []string{
			"wrongtype-receipt.json:4:129: conversations[0].messages[0].receipt.accepted: expected true or false, found string"}},
		{"future-version-conversations.json", false, []string{
			"future-version-conversations.json:1:13: version: version 3 is not a 0.3.x conversations file"}},
		{"dangling-state.json", true, []string{
			`dangling-state.json:3:96: works[0].dependsOn[0]: names work "work_missing", which is not in`,
			`works[0].evidenceIds[0]: names evidence "evidence_missing"`,
			`evidence[0].workId: names work "work_gone"`,
			`handoffs[0].workId: names work "work_nope"`,
			`dangling-state.json:15:81: reviews[0].subjectEvidenceIds[1]: names evidence "evidence_nowhere"`,
			`claims[0].workId: names work "work_other"`,
		}},
		{"dangling-conversations.json", false, []string{
			`dangling-conversations.json:9:57: conversations[0].messages[0].recipient: names "b", which is not a participant of conversation conversation_1`,
			`dangling-conversations.json:11:101: conversations[0].messages[1].replyTo: names message "message_404", which is not in conversation conversation_1 (and none of its messages were trimmed)`,
		}},
		{"badvalues-state.json", true, []string{
			`badvalues-state.json:3:68: works[0].status: must be one of open, in_progress, blocked, accepted, rejected; found "done"`,
			`badvalues-state.json:3:114: works[0].createdAt: must be an ISO-8601 time such as 2026-01-02T03:04:05.678Z; found "yesterday"`,
			`works[1].objective: required, must not be blank`,
			`works[2].id: work "work_2" appears twice`,
			`is part of a dependency cycle`,
			`badvalues-state.json:8:95: claims[0].kind: must be one of file, directory, interface, workspace; found "folder"`,
			`claims[0].releasedAt: required for a released claim`,
		}},
		{"badvalues-conversations.json", false, []string{
			`badvalues-conversations.json:8:33: conversations[0].participants[0].provider: must be one of freebuff, opencode, codex, claude-code, cursor, gemini, qwen, copilot, goose, kimi, opencode-acp, codex-acp; found "nobody"`,
			`conversations[0].participants[2].id: participant "b" appears twice`,
			`badvalues-conversations.json:14:37: conversations[0].messages[0].delivery: must be one of queued, rejected, delivery_unknown, completed, dispatching; found "sent"`,
			`conversations[0].messages[1].sequence: sequence 1 is taken by conversations[0].messages[0]`,
			`conversations[0].messages[1].idempotencyKey: key "k" is also used by conversations[0].messages[0]`,
			`conversations[0].messages[2].sequence: required: the other messages of conversation conversation_1 have one`,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", "malformed", tc.file)
			cfg := Config{Store: newDB(t), Clock: fixedClock(t), Lookup: func(string) (string, bool) { return "", false }}
			// The other file is a good one, so only this file is refused.
			state, convs := fixture("normal")
			if tc.state {
				cfg.StateFile, cfg.ConversationsFile = path, convs
			} else {
				cfg.StateFile, cfg.ConversationsFile = state, path
			}
			rep, err := Run(context.Background(), cfg)
			var mal *MalformedError
			if !errors.As(err, &mal) || rep != nil {
				t.Fatalf("err = %v (report %+v), want a refusal", err, rep)
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("refusal lacks %q:\n%s", w, msg)
				}
			}
			var ie *InputError
			if !errors.As(err, &ie) || ie.File != path || ie.Line < 1 || ie.Column < 1 {
				t.Errorf("first problem = %+v", ie)
			}
			if got := dump(t, cfg.Store); !strings.HasPrefix(got, "no store") {
				t.Error("a refused import created the store")
			}
			golden(t, filepath.Join("malformed", strings.TrimSuffix(tc.file, ".json")+".golden"), []byte(msg+"\n"))
		})
	}
}

// TestRefusalLeavesTheStoreUnchanged refuses a malformed file against a
// store that has records.
func TestRefusalLeavesTheStoreUnchanged(t *testing.T) {
	db := newDB(t)
	mustRun(t, "normal", db)
	before := dump(t, db)
	_, convs := fixture("full")
	_, err := Run(context.Background(), Config{StateFile: filepath.Join("testdata", "malformed", "dangling-state.json"), ConversationsFile: convs,
		Store: db, Clock: fixedClock(t), Lookup: func(string) (string, bool) { return "", false }})
	if err == nil {
		t.Fatal("a malformed file was imported")
	}
	if after := dump(t, db); after != before {
		t.Errorf("the store changed:\n%s", firstDiff(before, after))
	}
}

func TestPositions(t *testing.T) {
	doc := []byte("{\n  \"a\": [1, {\"b\": \"é\"}],\n  \"c\": null\n}")
	cases := []struct {
		off       int
		line, col int
		path      string
	}{
		{0, 1, 1, ""},
		{4, 2, 3, ""}, // the key "a" is part of the object
		{10, 2, 9, "a[0]"},
		{13, 2, 12, "a[1]"},
		{19, 2, 18, "a[1].b"}, // the string "é" starts here
		{22, 2, 20, "a[1].b"}, // é is 2 bytes, 1 character
		{23, 2, 21, "a[1]"},
		{34, 3, 8, "c"},
	}
	for _, tc := range cases {
		line, col := position(doc, tc.off)
		sp := pathAt(doc, tc.off)
		if line != tc.line || col != tc.col || sp.path != tc.path {
			t.Errorf("offset %d (%q): %d:%d %q, want %d:%d %q", tc.off, doc[tc.off], line, col, sp.path, tc.line, tc.col, tc.path)
		}
	}
	src := newSource("x.json", append([]byte("\xef\xbb\xbf"), doc...))
	if e := src.field("a[1].b", "m"); e.Line != 2 || e.Column != 18 {
		t.Errorf("field a[1].b at %d:%d", e.Line, e.Column)
	}
	if e := src.field("a[1].missing", "m"); e.Line != 2 || e.Column != 12 {
		t.Errorf("a missing member is reported at its object: %d:%d", e.Line, e.Column)
	}
}
