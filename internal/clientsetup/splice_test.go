package clientsetup

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tailscale/hujson"
)

// TestMergeKeepsEveryOtherByte: a merge rewrites only our entry (or adds
// it at the end of its object); every other byte of the user's file, in
// every layout, is kept, and the result reads back with our entry and
// every other key unchanged.
func TestMergeKeepsEveryOtherByte(t *testing.T) {
	for _, tc := range []struct {
		name   string
		client Client
		entry  Entry
		old    string
		// want is the exact output; "" checks only the invariants.
		want string
	}{
		{
			name: "entry patched in a tab-indented file", client: Claude, entry: stdioEntry,
			old:  "{\n\t\"a\": {\"x\": \"{not a brace}\"},\n\t\"mcpServers\": {\n\t\t\"agent-interop\": {\"type\": \"stdio\", \"command\": \"/old\", \"args\": [\"serve\"], \"timeout\": 5}\n\t},\n\t\"z\": [1,2]\n}\n",
			want: "{\n\t\"a\": {\"x\": \"{not a brace}\"},\n\t\"mcpServers\": {\n\t\t\"agent-interop\": {\n\t\t\t\"type\": \"stdio\",\n\t\t\t\"command\": \"/opt/bin/interop-runtime\",\n\t\t\t\"args\": [\n\t\t\t\t\"serve\",\n\t\t\t\t\"--profile\",\n\t\t\t\t\"core\"\n\t\t\t],\n\t\t\t\"timeout\": 5,\n\t\t\t\"env\": {\n\t\t\t\t\"INTEROP_READ_ONLY\": \"1\"\n\t\t\t}\n\t\t}\n\t},\n\t\"z\": [1,2]\n}\n",
		},
		{
			name: "server table added at the end", client: Cursor, entry: Entry{HTTP: true},
			old:  "{\n  \"theme\": \"dark\",\n  \"nested\": {\"mcpServers\": 1}\n}\n",
			want: "{\n  \"theme\": \"dark\",\n  \"nested\": {\"mcpServers\": 1},\n  \"mcpServers\": {\n    \"agentInterop\": {\n      \"url\": \"http://127.0.0.1:8788/mcp\",\n      \"headers\": {\n        \"Authorization\": \"Bearer ${env:AGENT_INTEROP_HTTP_TOKEN}\"\n      }\n    }\n  }\n}\n",
		},
		{
			name: "entry added after the other servers", client: Claude, entry: Entry{HTTP: true},
			old:  "{\n  \"mcpServers\": {\n    \"docs\": {\"command\": \"d\"}\n  },\n  \"tail\": true\n}",
			want: "{\n  \"mcpServers\": {\n    \"docs\": {\"command\": \"d\"},\n    \"agent-interop\": {\n      \"type\": \"http\",\n      \"url\": \"http://127.0.0.1:8788/mcp\",\n      \"headers\": {\n        \"Authorization\": \"Bearer ${AGENT_INTEROP_HTTP_TOKEN}\"\n      }\n    }\n  },\n  \"tail\": true\n}",
		},
		{
			name: "jsonc trailing comma and comment after the last server", client: OpenCode, entry: Entry{HTTP: true},
			old:  "{\n  \"mcp\": {\n    \"docs\": {\"type\": \"local\", \"command\": [\"d\"]}, // docs\n    /* end */\n  },\n}\n",
			want: "{\n  \"mcp\": {\n    \"docs\": {\"type\": \"local\", \"command\": [\"d\"]}, // docs\n    /* end */\n    \"agent-interop\": {\n      \"type\": \"remote\",\n      \"url\": \"http://127.0.0.1:8788/mcp\",\n      \"headers\": {\n        \"Authorization\": \"Bearer {env:AGENT_INTEROP_HTTP_TOKEN}\"\n      },\n      \"enabled\": true\n    },\n  },\n}\n",
		},
		{
			name: "jsonc comment after the last server without a comma", client: OpenCode, entry: Entry{HTTP: true},
			old:  "{\n  \"mcp\": {\n    \"docs\": {\"type\": \"local\"} // docs\n  }\n}\n",
			want: "{\n  \"mcp\": {\n    \"docs\": {\"type\": \"local\"}, // docs\n    \"agent-interop\": {\n      \"type\": \"remote\",\n      \"url\": \"http://127.0.0.1:8788/mcp\",\n      \"headers\": {\n        \"Authorization\": \"Bearer {env:AGENT_INTEROP_HTTP_TOKEN}\"\n      },\n      \"enabled\": true\n    }\n  }\n}\n",
		},
		{
			name: "strings holding quotes, slashes and braces", client: Cursor, entry: stdioEntry,
			old: "{\n  \"note\": \"a \\\"quoted\\\" // not a comment /* nor this */ {\",\n  \"mcpServers\": {\"x\": {\"command\": \"\\\\\"}, \"agentInterop\": null}\n}\n",
		},
		{
			name: "escaped key names our entry", client: Cursor, entry: stdioEntry,
			old: "{\n  \"mcp\\u0053ervers\": {\n    \"agentInterop\": {\"command\": \"/old\", \"env\": {\"INTEROP_DB\": \"/srv/x.db\"}}\n  }\n}\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, err := TargetFor(tc.client, Paths{Home: "/home/ann"}, false)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Merge(target, tc.entry, []byte(tc.old))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" && string(got) != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
			// Every key outside our entry reads back unchanged.
			before, after := standardized(t, []byte(tc.old)), standardized(t, got)
			servers, _ := after[jsonContainer(tc.client)].(map[string]any)
			delete(servers, target.Name)
			if ob, _ := before[jsonContainer(tc.client)].(map[string]any); ob != nil {
				delete(ob, target.Name)
			} else {
				delete(before, jsonContainer(tc.client))
				if len(servers) == 0 {
					delete(after, jsonContainer(tc.client))
				}
			}
			if !equalJSON(before, after) {
				t.Errorf("keys outside our entry changed:\nbefore %v\nafter  %v", before, after)
			}
			again, err := Merge(target, tc.entry, got)
			if err != nil || !bytes.Equal(again, got) {
				t.Fatalf("second merge differs (err %v):\n%s", err, again)
			}
		})
	}
}

func standardized(t *testing.T, b []byte) map[string]any {
	t.Helper()
	v, err := hujson.Standardize(append([]byte(nil), b...))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(v, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMergeLargeFileKeepsPrefixAndSuffix: on a large file the bytes
// before our entry and after it are the original's.
func TestMergeLargeFileKeepsPrefixAndSuffix(t *testing.T) {
	for _, c := range []Client{Claude, OpenCode} { // the fixture's entry is named agent-interop
		target, err := TargetFor(c, Paths{Home: "/home/ann"}, false)
		if err != nil {
			t.Fatal(err)
		}
		doc := bigJSONConfig(256<<10, jsonContainer(c))
		got, err := Merge(target, stdioEntry, doc)
		if err != nil {
			t.Fatal(err)
		}
		key := []byte(`"` + target.Name + `": `)
		at := bytes.Index(doc, key)
		end := at + bytes.IndexByte(doc[at:], '\n')
		if !bytes.Equal(got[:at], doc[:at]) {
			t.Errorf("%s: the bytes before our entry changed", c)
		}
		tail := doc[end-1:] // the comma after our entry and everything after
		if !bytes.HasSuffix(got, tail) {
			t.Errorf("%s: the bytes after our entry changed", c)
		}
		if !bytes.Contains(got, []byte(`"INTEROP_DB": "/srv/team.db"`)) || !bytes.Contains(got, []byte(`"timeout": 60000`)) {
			t.Errorf("%s: the entry lost the user's keys:\n%s", c, got[at:len(got)-len(tail)])
		}
	}
}

// TestMergeRefusesDuplicateKeys: a server table or entry written twice is
// refused with its position (clients disagree on which one counts), and
// nothing is written.
func TestMergeRefusesDuplicateKeys(t *testing.T) {
	for _, tc := range []struct {
		name, old, wantErr string
	}{
		{"table", "{\n  \"mcpServers\": {},\n  \"mcpServers\": {\"a\": {}}\n}", `x\.json:3:3: "mcpServers" appears 2 times in the top-level object`},
		{"entry", "{\"mcpServers\": {\"agent-interop\": {}, \"agent-interop\": {\"command\": \"a\"}}}", `x\.json:1:38: "agent-interop" appears 2 times in mcpServers`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, err := TargetFor(Claude, Paths{Home: "/home/ann"}, false)
			if err != nil {
				t.Fatal(err)
			}
			target.File = "x.json"
			_, err = Merge(target, stdioEntry, []byte(tc.old))
			if err == nil || !regexp.MustCompile(tc.wantErr).MatchString(err.Error()) {
				t.Fatalf("err = %v, want /%s/", err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), "not changed") {
				t.Errorf("err = %v, want it to say the file is not changed", err)
			}
		})
	}
}

// FuzzJSONCValidation: the one-pass JSONC check accepts exactly what
// hujson (the JSONC library OpenCode's format is checked against)
// accepts as an object document, and the scanner then finds the same
// server table hujson does. Its seeds run as a test.
func FuzzJSONCValidation(f *testing.F) {
	for _, s := range []string{
		`{"mcp": {,}}`, `{"mcp": {"a": 1,,}}`, `{"mcp": [,]}`, `{"a": [1,],}`, `{,}`, `[1,]`,
		"{\n // c \"quoted\"\n \"mcp\": {}, /* b */\n}", "{\"a\": \"//not a comment\", \"mcp\": {\"x\": 1,},}",
		"{/* unterminated", "{\"a\": 1 // c", `{"a": "\"", "mcp": null}`, `{"a":1}/**/`, `{"a":1},`,
		"{\"a\": tru}", "{\"a\": 01}", "{\"a\": [1 /*x*/ , 2 , /*y*/ ]}", "{\"mcp\":{\"agent-interop\":{\"type\":\"local\",},},}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		v, herr := hujson.Parse(b)
		ours := validJSONC("f.json", b) == nil
		if !utf8.ValidString(s) {
			if ours {
				t.Fatalf("%q: invalid UTF-8 accepted", s)
			}
			return // refused whole; hujson checks it only in comments
		}
		if herr != nil && ours && strings.Contains(herr.Error(), "parsing comment: unexpected EOF") && !strings.Contains(s[strings.LastIndex(s, "//")+2:], "\n") {
			return // a last line comment with no newline: OpenCode accepts it, hujson does not
		}
		if ours != (herr == nil) {
			t.Fatalf("%q: one-pass check says valid=%v, hujson says %v", s, ours, herr)
		}
		if !ours {
			return
		}
		obj, isObj := v.Value.(*hujson.Object)
		sc := jsonScan{b: b}
		start := sc.space(0)
		if isObj != (start < len(b) && b[start] == '{') {
			t.Fatalf("%q: object=%v but scanner starts at %d", s, isObj, start)
		}
		if !isObj {
			return
		}
		n := 0
		for _, m := range obj.Members {
			if k, ok := m.Name.Value.(hujson.Literal); ok && k.String() == "mcp" {
				n++
			}
		}
		if got := len(sc.object(start, "mcp").found); got != n {
			t.Fatalf("%q: scanner found %d mcp members, hujson %d", s, got, n)
		}
	})
}
