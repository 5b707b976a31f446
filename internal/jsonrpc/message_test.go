package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestEncodeRequest(t *testing.T) {
	b, err := EncodeRequest(7, "tools/call", map[string]any{"name": "x", "arguments": map[string]string{"s": "a\nb"}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(b, []byte("\n")) || bytes.Count(b, []byte("\n")) != 1 {
		t.Fatalf("not exactly one line: %q", b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["jsonrpc"] != "2.0" || m["id"] != float64(7) || m["method"] != "tools/call" {
		t.Errorf("request = %s", b)
	}

	n, err := EncodeRequest(-1, "notifications/initialized", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(n), `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"; got != want {
		t.Errorf("notification = %q, want %q", got, want)
	}

	z, err := EncodeRequest(0, "ping", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(z), `"id":0`) {
		t.Errorf("id 0 dropped: %s", z)
	}

	if _, err := EncodeRequest(1, "bad", func() {}); err == nil {
		t.Error("unencodable params accepted")
	}
}

func TestDecodeMessage(t *testing.T) {
	m, err := DecodeMessage([]byte(`{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !m.IsResponseTo(3) || m.IsResponseTo(4) {
		t.Errorf("IsResponseTo wrong for %+v", m)
	}
	n, err := DecodeMessage([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	if n.IsResponseTo(0) {
		t.Error("a notification answers a request")
	}
	r, err := DecodeMessage([]byte(`{"jsonrpc":"2.0","id":3,"method":"roots/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.IsResponseTo(3) {
		t.Error("a server request with the same id answers ours")
	}
	s, err := DecodeMessage([]byte(`{"jsonrpc":"2.0","id":"3","result":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.IsResponseTo(3) {
		t.Error("a string id matches a numeric one")
	}
	for _, bad := range []string{`not json`, `{"id":1,"result":{}}`, `[1]`} {
		if _, err := DecodeMessage([]byte(bad)); err == nil {
			t.Errorf("DecodeMessage(%q) accepted", bad)
		}
	}
}
