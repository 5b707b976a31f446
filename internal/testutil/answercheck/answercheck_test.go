package answercheck

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCheckAcceptsTheDeclaredShapeOnly(t *testing.T) {
	claim := `{"id":"claim_1","workId":"work_1","sessionId":"codex:a","resource":"src/a.go","kind":"file","mode":"exclusive","status":"active","acquiredAt":"2026-01-02T03:04:05Z","expiresAt":"2026-01-02T03:19:05.5Z"}`
	obj := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	c := New()
	for _, tc := range []struct {
		name, profile, tool, text string
		structured                any
		wantErr                   string
	}{
		{"a claim", "", "acquire_claim", claim, obj(claim), ""},
		{"a required field missing", "", "acquire_claim", strings.Replace(claim, `"workId":"work_1",`, "", 1), nil, "missing property 'workId'"},
		{"a field the spec does not declare", "", "acquire_claim", strings.Replace(claim, `{"id"`, `{"extra":1,"id"`, 1), nil, "additional properties 'extra'"},
		{"a value outside its enum", "", "acquire_claim", strings.Replace(claim, `"kind":"file"`, `"kind":"folder"`, 1), nil, "value must be one of"},
		{"a timestamp that is not RFC 3339", "", "acquire_claim", strings.Replace(claim, `2026-01-02T03:04:05Z`, `yesterday`, 1), nil, "is not valid date-time"},
		{"structuredContent that differs from the text", "", "acquire_claim", claim, obj(strings.Replace(claim, "claim_1", "claim_2", 1)), "differs from the text"},
		{"an object answer without structuredContent", "", "acquire_claim", claim, nil, "without structuredContent"},
		{"the legacy bare array", "legacy", "claim_list", "[" + claim + "]", nil, ""},
		{"the legacy bare array with structuredContent", "legacy", "claim_list", "[" + claim + "]", obj(`{"claims":[` + claim + `]}`), "structuredContent sent with a []interface {} answer"},
		{"the modern shape under the legacy name", "legacy", "claim_list", `{"claims":[` + claim + `]}`, obj(`{"claims":[` + claim + `]}`), "does not match its declared shape"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			structured := tc.structured
			if tc.wantErr != "" && structured == nil && strings.HasPrefix(tc.text, "{") && tc.name != "an object answer without structuredContent" {
				structured = obj(tc.text)
			}
			e, err := Entry(tc.profile, tc.tool)
			if err != nil {
				t.Fatal(err)
			}
			err = c.Check(e, tc.text, structured)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("got %v, want an error with %q", err, tc.wantErr)
			}
		})
	}
	if got := c.Checked(); got["acquire_claim"] != 1 || got["claim_list"] != 1 {
		t.Errorf("checked = %v", got)
	}
}
