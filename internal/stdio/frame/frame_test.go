package frame

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func nested(depth int, inner string) string {
	return strings.Repeat("[", depth) + inner + strings.Repeat("]", depth)
}

func TestInspect(t *testing.T) {
	cases := []struct {
		name string
		line string
		want string // "" = forwarded; else a fragment of the answer
	}{
		{"ping", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""},
		{"response", `{"jsonrpc":"2.0","id":"a","result":{}}`, ""},
		{"null params", `{"jsonrpc":"2.0","id":2,"method":"ping","params":null}`, ""},
		{"not json", `{not json`, `"id":null,"error":{"code":-32700`},
		{"invalid utf-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", `"code":-32700`},
		{"invalid utf-8 sanitized", string(Sanitize([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}"))), ""},
		{"batch", `[]`, `"code":-32600,"message":"Invalid Request: batches`},
		{"scalar", `42`, `"code":-32600`},
		{"bad version", `{"jsonrpc":"1.0","id":3,"method":"x"}`, `"id":3,"error":{"code":-32600`},
		{"numeric version", `{"jsonrpc":2.0,"id":3,"method":"x"}`, `"id":3,"error":{"code":-32600`},
		{"object id", `{"jsonrpc":"2.0","id":{"x":1},"method":"x"}`, `"id":null,"error":{"code":-32600`},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, `"id":null,"error":{"code":-32600,"message":"Invalid Request: id must not be null"`},
		{"no method", `{"jsonrpc":"2.0","id":4}`, `"id":4,"error":{"code":-32600`},
		{"empty method", `{"jsonrpc":"2.0","id":5,"method":""}`, `"code":-32600`},
		{"method not a string", `{"jsonrpc":"2.0","id":6,"method":7}`, `"id":6,"error":{"code":-32600`},
		{"params scalar", `{"jsonrpc":"2.0","id":7,"method":"ping","params":3}`, `"id":7,"error":{"code":-32602`},
		{"duplicate id member", `{"jsonrpc":"2.0","id":8,"id":9,"method":"ping"}`, `"code":-32600`},
		{"params at the depth limit", `{"jsonrpc":"2.0","id":10,"method":"ping","params":` + nested(MaxDepth-1, "") + `}`, ""},
		{"params one level too deep", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":` + nested(MaxDepth, "") + `}`, `"id":11,"error":{"code":-32602`},
		{"params far too deep", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"a":` + nested(200000, "1") + `}}`, `"id":12,"error":{"code":-32602`},
		{"unknown member too deep", `{"jsonrpc":"2.0","id":13,"method":"ping","x":` + nested(MaxDepth, "") + `}`, `"id":13,"error":{"code":-32600`},
		{"deep and broken", `{"jsonrpc":"2.0","id":14,"method":"ping","params":` + nested(5000, "") + `]}`, `"code":-32700`},
		{"huge exponent id", `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, ""},
		{"huge exponent id refused later", `{"jsonrpc":"2.0","id":1e400,"method":""}`, `"id":1e400,"error"`},
		{"bad response error", `{"jsonrpc":"2.0","id":1,"error":"boom"}`, "silent"},
		{"response with null id", `{"jsonrpc":"2.0","id":null,"result":{}}`, "silent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, ref := Inspect([]byte(c.line))
			got := ""
			if ref != nil {
				got = "silent"
				if !ref.Silent {
					got = string(ErrorAnswer(ref.ID, ref.Code, ref.Msg))
				}
			}
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("inspect = %.200s, want %q", got, c.want)
			}
			if c.want == "" {
				if _, err := jsonrpc.DecodeMessage([]byte(c.line)); err != nil && !strings.Contains(c.name, "id") {
					t.Errorf("forwarded a line the SDK cannot decode: %v", err)
				}
			}
		})
	}
}

func TestClassifyID(t *testing.T) {
	cases := map[string]IDKind{
		`"x"`: IDString, `0`: IDInteger, `-12`: IDInteger, `9007199254740992`: IDInteger,
		`9007199254740993`: IDOther, `-0`: IDOther, `1.5`: IDOther, `1e400`: IDOther, `1E2`: IDOther,
		`123456789012345678901234567890`: IDOther, `null`: IDNull, `true`: IDInvalid, `[1]`: IDInvalid,
	}
	for raw, want := range cases {
		if got := ClassifyID([]byte(raw)); got != want {
			t.Errorf("ClassifyID(%s) = %d, want %d", raw, got, want)
		}
	}
}

// FuzzFrames checks the frame layer's promise on any input line: it is
// either answered by the guard with a well-formed JSON-RPC error, or
// forwarded as a message the SDK decodes (so the session cannot end on it).
func FuzzFrames(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo","arguments":{"a":[1,2,{"b":null}]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1e400}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"ok":true}}`,
		`{"jsonrpc":"2.0","id":8,"error":{"code":-1,"message":"m","data":[1]}}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping","params":` + nested(999, "") + `}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping","params":` + nested(1001, "") + `}`,
		`{"jsonrpc":"2\u002e0","\u0069d":3,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":"\ud800","method":"p\u0000"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\":\"\x01\"}}",
		`{"jsonrpc":"2.0","id":-0.0e-0,"method":"ping"}`,
		// Decode's own path and its edges.
		`{"jsonrpc":"2.0","id":"é","method":"tools/call","params":{}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools\/call","params":[]}`,
		`{"jsonrpc":"2.0","id":6,"method":"ping","params":null}`,
		`{"jsonrpc":"2.0","id":7,"method":"ping","extra":1}`,
		`{"id":-9007199254740991,"method":"ping","jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		` {"jsonrpc" : "2.0" , "id" : "a b" , "method" : "tools/call" , "params" : { "name" : "x" , "arguments" : { } } } `,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(line, '\n') >= 0 || len(bytes.TrimSpace(line)) == 0 {
			return
		}
		line = Sanitize(line)
		msg, ref := Inspect(line)
		if ref != nil {
			if ref.Silent {
				if bytes.Contains(line, []byte(`"method"`)) && !bytes.Contains(line, []byte(`"result"`)) && !bytes.Contains(line, []byte(`"error"`)) {
					// A request is never dropped silently; only responses are.
					if m, err := jsonrpc.DecodeMessage(line); err == nil {
						if _, isReq := m.(*jsonrpc.Request); isReq {
							t.Fatalf("request dropped without an answer: %q", line)
						}
					}
				}
				return
			}
			answer := ErrorAnswer(ref.ID, ref.Code, ref.Msg)
			var a struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(answer, &a); err != nil || a.JSONRPC != "2.0" || a.Error.Code == 0 || a.Error.Message == "" {
				t.Fatalf("answer %q to %q is not a JSON-RPC error: %v", answer, line, err)
			}
			return
		}
		fwd := line
		if msg.IsCall && msg.IDKind == IDOther {
			fwd = Splice(line, msg.IDStart, msg.IDStart+len(msg.ID), []byte(`"interop-id-fuzz-1"`))
		}
		m, err := jsonrpc.DecodeMessage(fwd)
		if err != nil {
			t.Fatalf("forwarded %q, which the SDK cannot decode: %v", fwd, err)
		}
		// Plain is jsonrpc.DecodeMessage's request, also for a line the
		// guard changed (msg is what Inspect said of the line before).
		if p, ok := msg.Plain(); ok {
			id, err := jsonrpc.MakeID(p.ID)
			if err != nil {
				t.Fatalf("Plain(%q) id %#v: %v", fwd, p.ID, err)
			}
			if why := differ(&jsonrpc.Request{ID: id, Method: p.Method, Params: p.Params}, m); why != "" {
				t.Fatalf("Plain(%q) differs from jsonrpc.DecodeMessage: %s", fwd, why)
			}
		}
		if req, ok := m.(*jsonrpc.Request); ok && msg.IsCall && !req.IsCall() {
			t.Fatalf("forwarded call %q became a notification", fwd)
		}
	})
}

// differ says how a request differs from a decoded message ("" when it
// does not).
func differ(a *jsonrpc.Request, m jsonrpc.Message) string {
	b, ok := m.(*jsonrpc.Request)
	switch {
	case !ok:
		return fmt.Sprintf("a request against %T", m)
	case a.ID != b.ID:
		return fmt.Sprintf("id %#v against %#v", a.ID.Raw(), b.ID.Raw())
	case a.Method != b.Method:
		return fmt.Sprintf("method %q against %q", a.Method, b.Method)
	case !bytes.Equal(a.Params, b.Params) || (a.Params == nil) != (b.Params == nil):
		return fmt.Sprintf("params %q against %q", a.Params, b.Params)
	case b.Extra != nil:
		return "extra"
	}
	return ""
}
