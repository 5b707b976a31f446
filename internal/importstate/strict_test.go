package importstate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// stateWith is a state file with one work whose fields are the given
// JSON members (after the id).
func stateWith(members string) string {
	return `{"works":[{"id":"work_1","objective":"o",` + members + `"status":"open","createdAt":"2026-01-01T00:00:00.000Z"}]}`
}

// convsWith is a conversations file with one message whose text is text
// (a JSON string).
func convsWith(text string) string {
	return `{"version":2,"conversations":[{"id":"conversation_1","title":"t","participants":[{"id":"a","provider":"codex","nativeId":"t-a"},{"id":"b","provider":"codex","nativeId":"t-b"}],` +
		`"messages":[{"id":"message_1","conversationId":"conversation_1","sender":"a","recipient":"b","text":` + text + `,"createdAt":"2026-01-01T00:07:00.000Z","sequence":1,"delivery":"queued"}]}]}`
}

func quoted(s string) string { return `"` + s + `"` }

// TestStrictInputIsRefused: import applies the tools' rules — every
// bound from the spec, strict UTF-8, no key given twice — and refuses a
// record that breaks one, naming the file, the position, the path and
// the rule, with nothing written.
func TestStrictInputIsRefused(t *testing.T) {
	many := func(n int, item string) string {
		return "[" + strings.TrimSuffix(strings.Repeat(quoted(item)+",", n), ",") + "]"
	}
	cases := []struct {
		name  string
		state string // "" = the normal fixture
		convs string // "" = the normal fixture
		want  string // regexp on the refusal
	}{
		{name: "objective over the bound",
			state: `{"works":[{"id":"work_1","objective":"` + strings.Repeat("x", 1<<20+1) + `","status":"open","createdAt":"2026-01-01T00:00:00.000Z"}]}`,
			want:  `state\.json:1:\d+: works\[0\]\.objective: must be at most 20000 characters \(the bound of create_work_item objective\); it has 1048577`},
		{name: "objective of 20000 multi-byte characters is accepted, 20001 not",
			state: `{"works":[{"id":"work_1","objective":"` + strings.Repeat("é", 20001) + `","status":"open","createdAt":"2026-01-01T00:00:00.000Z"}]}`,
			want:  `works\[0\]\.objective: must be at most 20000 characters .*it has 20001`},
		{name: "too many acceptance criteria",
			state: stateWith(`"acceptanceCriteria":` + many(101, "c") + `,`),
			want:  `works\[0\]\.acceptanceCriteria: must have at most 100 entries \(the bound of create_work_item acceptanceCriteria\); it has 101`},
		{name: "a risk over the item bound",
			state: stateWith(`"risks":["` + strings.Repeat("r", 4001) + `"],`),
			want:  `works\[0\]\.risks\[0\]: must be at most 4000 characters`},
		{name: "a changed file over the path bound",
			state: stateWith(`"changedFiles":["` + strings.Repeat("f", 1025) + `"],`),
			want:  `works\[0\]\.changedFiles\[0\]: must be at most 1024 characters \(the bound of create_handoff changedFiles\[\]\)`},
		{name: "message text over the bound",
			convs: convsWith(quoted(strings.Repeat("m", 100001))),
			want:  `conversations\.json:1:\d+: conversations\[0\]\.messages\[0\]\.text: must be at most 100000 characters \(the bound of send_conversation_message text\)`},
		{name: "invalid UTF-8",
			state: stateWith(`"risks":["ok","bad ` + "\xff" + ` byte"],`),
			want:  `state\.json:1:\d+: not valid UTF-8: byte 0xff at offset \d+`},
		{name: "invalid UTF-8 in conversations",
			convs: convsWith(quoted("caf\xc3")),
			want:  `conversations\.json:1:\d+: not valid UTF-8: byte 0xc3`},
		{name: "duplicate top-level key",
			state: `{"works":[{"id":"work_1","objective":"o","status":"open","createdAt":"2026-01-01T00:00:00.000Z"}],"works":[]}`,
			want:  `state\.json:1:99: works: the key "works" appears twice in this object`},
		{name: "duplicate nested key",
			state: `{"works":[{"id":"work_1","objective":"o","objective":"p","status":"open","createdAt":"2026-01-01T00:00:00.000Z"}]}`,
			want:  `state\.json:1:42: works\[0\]\.objective: the key "objective" appears twice`},
		{name: "duplicate key deep in evidence data",
			convs: `{"version":2,"conversations":[{"id":"c","x":{"y":{"z":1,"z":2}}}]}`,
			want:  `conversations\.json:1:\d+: conversations\[0\]\.x\.y\.z: the key "z" appears twice`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			state, convs := fixture("normal")
			if tc.state != "" {
				state = filepath.Join(dir, "state.json")
				if err := os.WriteFile(state, []byte(tc.state), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tc.convs != "" {
				convs = filepath.Join(dir, "conversations.json")
				if err := os.WriteFile(convs, []byte(tc.convs), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			db := newDB(t)
			_, err := Run(context.Background(), Config{StateFile: state, ConversationsFile: convs, Store: db, Clock: fixedClock(t),
				Lookup: func(string) (string, bool) { return "", false }})
			var mal *MalformedError
			if !errors.As(err, &mal) || !regexp.MustCompile(tc.want).MatchString(err.Error()) {
				t.Fatalf("err = %.600v, want /%s/", err, tc.want)
			}
			if strings.ContainsRune(err.Error(), '\uFFFD') {
				t.Errorf("the refusal holds U+FFFD: %q", err)
			}
			if got := dump(t, db); !strings.HasPrefix(got, "no store") {
				t.Error("a refused import created the store")
			}
		})
	}
}

// TestOnlyRegularFilesAreRead: a directory, a FIFO, a device and a file
// over the size cap are refused at once, before a byte is read, naming
// the file and the rule; nothing is written.
func TestOnlyRegularFilesAreRead(t *testing.T) {
	dir := t.TempDir()
	sparse := filepath.Join(dir, "sparse.json")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(600 << 20); err != nil { // 600 MB, no blocks
		t.Fatal(err)
	}
	f.Close()
	cases := []struct {
		name, path, want string
	}{
		{"directory", dir, `is a directory; the 0\.3\.x state file must be a regular file`},
		{"sparse 600 MB file", sparse, `is larger than 512 MiB \(629145600 bytes\)`},
	}
	cases = append(cases, specialFiles(t, dir)...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := newDB(t)
			_, convs := fixture("normal")
			done := make(chan error, 1)
			go func() {
				_, err := Run(context.Background(), Config{StateFile: tc.path, ConversationsFile: convs, Store: db, Clock: fixedClock(t),
					Lookup: func(string) (string, bool) { return "", false }})
				done <- err
			}()
			err := wait.Recv(t, "the import of "+tc.path+" to end", wait.InProcess, done)
			if err == nil || !strings.Contains(err.Error(), tc.path) || !regexp.MustCompile(tc.want).MatchString(err.Error()) {
				t.Fatalf("err = %v, want /%s/ naming %s", err, tc.want, tc.path)
			}
			if got := dump(t, db); !strings.HasPrefix(got, "no store") {
				t.Error("a refused import created the store")
			}
		})
	}
}
