package workflow

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"testing"
)

func TestCanonicalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"whitespace and key order", "{ \"b\" : 1 ,\n \"a\" : [ true , null ] }", `{"a":[true,null],"b":1}`},
		{"nested", `{"z":{"y":1,"x":2},"a":{}}`, `{"a":{},"z":{"x":2,"y":1}}`},
		{"numbers as given", `[1.0, 1e3, -0, 12345678901234567890]`, `[1.0,1e3,-0,12345678901234567890]`},
		{"html kept literal", `{"s":"<a href=\"x\">&</a>"}`, `{"s":"<a href=\"x\">&</a>"}`},
		{"escapes", `"\u0001\b\f\n\r\t\\\/"`, `"\u0001\b\f\n\r\t\\/"`},
		{"unicode literal", `"\u00e9\u2028😀"`, "\"é\u2028😀\""},
		{"utf16 key order", `{"\ufb33":1,"😀":2}`, "{\"😀\":2,\"\ufb33\":1}"},
		{"duplicate key last wins", `{"a":1,"a":2}`, `{"a":2}`},
		{"scalar", ` "x" `, `"x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Canonicalize([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("Canonicalize(%s) = %s, want %s", tt.in, got, tt.want)
			}
			again, err := Canonicalize(got)
			if err != nil || string(again) != string(got) {
				t.Fatalf("not idempotent: %s -> %s (%v)", got, again, err)
			}
		})
	}
	for _, bad := range []string{"", "{", `{"a":}`, `[1] [2]`, `nul`} {
		if _, err := Canonicalize([]byte(bad)); err == nil {
			t.Errorf("Canonicalize(%q) accepted", bad)
		}
	}
}

func TestContentHashIsSHA256OfCanonicalForm(t *testing.T) {
	c, err := CanonicalJSON(map[string]any{"b": "<x>", "a": 1})
	if err != nil {
		t.Fatal(err)
	}
	if string(c) != `{"a":1,"b":"<x>"}` {
		t.Fatalf("canonical = %s", c)
	}
	sum := sha256.Sum256([]byte(`{"a":1,"b":"<x>"}`))
	if got := ContentHash(c); got != hex.EncodeToString(sum[:]) {
		t.Fatalf("hash = %s", got)
	}
}

// FuzzCanonicalize: the canonical form is valid JSON, idempotent, and means
// the same as the input.
func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[true,null,"x"]}`, `"\u2028<&>"`, `[1.50,-0,1e10]`, `{"😀":1,"\ufb33":2}`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := Canonicalize(raw)
		if err != nil {
			return
		}
		again, err := Canonicalize(c)
		if err != nil || string(again) != string(c) {
			t.Fatalf("not idempotent: %s -> %s (%v)", c, again, err)
		}
		decode := func(b []byte) any {
			d := json.NewDecoder(bytes.NewReader(b))
			d.UseNumber()
			var v any
			if err := d.Decode(&v); err != nil {
				t.Fatalf("decode %s: %v", b, err)
			}
			return v
		}
		if !reflect.DeepEqual(decode(raw), decode(c)) {
			t.Fatalf("meaning changed: %s -> %s", raw, c)
		}
	})
}
