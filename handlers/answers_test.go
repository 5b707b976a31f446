package handlers

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
)

// A pending permission's answer carries every fact the adapter gave, in
// particular that a command's writes are unknown (no claim was checked).
func TestPendingPermissionAnswerKeepsWhatTheRequestWouldWrite(t *testing.T) {
	tests := []struct {
		name string
		req  providers.PermissionRequest
		want []string // substrings of the compact JSON
		not  []string
	}{
		{"a command's writes are unknown",
			providers.PermissionRequest{Provider: providers.Codex, RequestID: "1-2", NativeID: "t", Method: "item/commandExecution/requestApproval", PathsUnknown: true},
			[]string{`"pathsUnknown":true`}, []string{`"paths"`}},
		{"an edit names its file",
			providers.PermissionRequest{Provider: providers.ClaudeCode, RequestID: "r", NativeID: "s", Method: "session/request_permission", Paths: []string{"/w/a.go"}},
			[]string{`"paths":["/w/a.go"]`}, []string{`"pathsUnknown"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(pendingPermissionAnswer(tt.req, nil))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("answer %s lacks %s", b, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(string(b), n) {
					t.Errorf("answer %s has %s", b, n)
				}
			}
		})
	}
}
