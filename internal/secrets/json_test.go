package secrets

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestJSONRedactsStringsKeepsShape(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range corpus() {
		doc, _ := json.Marshal(map[string]any{"z": 1, "text": "before " + tc.context + " after", "list": []any{tc.context, 2}})
		got := r.JSON(doc)
		if !json.Valid(got) {
			t.Fatalf("%s: invalid JSON %s", tc.name, got)
		}
		var v map[string]any
		_ = json.Unmarshal(got, &v)
		if strings.Contains(v["text"].(string), tc.secret) || strings.Contains(v["list"].([]any)[0].(string), tc.secret) {
			t.Errorf("%s: secret kept: %s", tc.name, got)
		}
		if !strings.HasPrefix(string(got), `{"list":`) || !strings.HasPrefix(v["text"].(string), "before ") || v["z"] != 1.0 {
			t.Errorf("%s: shape changed: %s", tc.name, got)
		}
	}
	// An escaped spelling is decoded before matching.
	esc := `{"a":"` + `redis://:pw1234567\u0040host"}`
	if got := string(r.JSON([]byte(esc))); strings.Contains(got, "pw1234567") {
		t.Errorf("escaped @ hid the password: %s", got)
	}
	clean := []byte(`{"sessions":[{"id":"ses_1","cwd":"/tmp/x","title":"hello <b>"}],"nextCursor":"abc"}`)
	if got := r.JSON(clean); string(got) != string(clean) {
		t.Errorf("clean document changed: %s", got)
	}
}

func TestJSONSecretKeys(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	doc := `{"env":{"DB_PASSWORD" : "plainpw","authToken":"tok-short","inputTokens":12,"tokenizer":"o200k_base","clientSecret":"","note":"password"},"apiKey":"k1"}`
	got := string(r.JSON([]byte(doc)))
	want := `{"env":{"DB_PASSWORD" : "[REDACTED]","authToken":"[REDACTED]","inputTokens":12,"tokenizer":"o200k_base","clientSecret":"","note":"password"},"apiKey":"[REDACTED]"}`
	if got != want {
		t.Errorf("JSON =\n%s\nwant\n%s", got, want)
	}
}
