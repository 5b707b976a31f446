package codex

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestApprovalPaths: which files each approval would let Codex write, and
// when they cannot be named (a command; a grant on a pattern; a file
// change whose item was not seen).
func TestApprovalPaths(t *testing.T) {
	a := New(Config{})
	t.Cleanup(func() { a.Close() })
	a.rememberFileChange(json.RawMessage(`{"item":{"type":"fileChange","id":"call_1","changes":[{"path":"/ws/a.go"},{"path":"/ws/b/c.go"}]}}`))
	a.rememberFileChange(json.RawMessage(`{"item":{"type":"commandExecution","id":"call_9","changes":[{"path":"/ws/x"}]}}`))
	for _, tc := range []struct {
		name, method, params string
		paths                []string
		unknown              bool
	}{
		{"file change of a seen item", "item/fileChange/requestApproval", `{"itemId":"call_1"}`, []string{"/ws/a.go", "/ws/b/c.go"}, false},
		{"file change asking a root", "item/fileChange/requestApproval", `{"itemId":"call_1","grantRoot":"/ws/b"}`, []string{"/ws/a.go", "/ws/b/c.go", "/ws/b"}, false},
		{"file change of an unseen item", "item/fileChange/requestApproval", `{"itemId":"call_7"}`, nil, true},
		{"a command item is no file change", "item/fileChange/requestApproval", `{"itemId":"call_9"}`, nil, true},
		{"command", "item/commandExecution/requestApproval", `{"itemId":"call_2","command":"printf x > a.go"}`, nil, true},
		{"legacy command", "execCommandApproval", `{"callId":"c","command":["bash","-lc","rm -rf b"]}`, nil, true},
		{"legacy patch", "applyPatchApproval", `{"callId":"c","fileChanges":{"/ws/z.go":{},"/ws/y.go":{}}}`, []string{"/ws/y.go", "/ws/z.go"}, false},
		{"write grant", "item/permissions/requestApproval", `{"itemId":"p","permissions":{"fileSystem":{"write":["/ws/out"],"entries":[` +
			`{"access":"write","path":{"type":"path","path":"/ws/gen"}},{"access":"read","path":{"type":"glob_pattern","pattern":"**"}}]}}}`,
			[]string{"/ws/out", "/ws/gen"}, false},
		{"write grant on a pattern", "item/permissions/requestApproval", `{"itemId":"p","permissions":{"fileSystem":{"entries":[` +
			`{"access":"write","path":{"type":"glob_pattern","pattern":"src/**"}}]}}}`, nil, true},
		{"write grant on project roots", "item/permissions/requestApproval", `{"itemId":"p","permissions":{"fileSystem":{"entries":[` +
			`{"access":"write","path":{"type":"special","value":{"kind":"project_roots"}}}]}}}`, nil, true},
		{"network grant", "item/permissions/requestApproval", `{"itemId":"p","permissions":{"network":{"enabled":true}}}`, nil, false},
	} {
		var p approvalParams
		if err := json.Unmarshal([]byte(tc.params), &p); err != nil {
			t.Fatal(err)
		}
		paths, unknown := a.approvalPaths(tc.method, p, json.RawMessage(tc.params))
		if len(paths) == 0 {
			paths = nil
		}
		if !reflect.DeepEqual(paths, tc.paths) || unknown != tc.unknown {
			t.Errorf("%s: paths %q unknown %v, want %q %v", tc.name, paths, unknown, tc.paths, tc.unknown)
		}
	}
}
