package stdio

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	cases := []struct {
		line string
		want string // "" = passes through
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""},
		{`{"jsonrpc":"2.0","id":"a","result":{}}`, ""},
		{`{not json`, `"code":-32700`},
		{`[]`, `"code":-32600`},
		{`42`, `"code":-32600`},
		{`{"jsonrpc":"1.0","id":3,"method":"x"}`, `"id":3,"error":{"code":-32600`},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"x"}`, `"id":null,"error":{"code":-32600`},
		{`{"jsonrpc":"2.0","id":4}`, `"id":4,"error":{"code":-32600`},
		{`{"jsonrpc":"2.0","id":5,"method":""}`, `"code":-32600`},
	}
	for _, c := range cases {
		got := string(check([]byte(c.line)))
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("check(%s) = %s, want %q", c.line, got, c.want)
		}
	}
}

func TestPumpAnswersMalformedAndForwardsTheRest(t *testing.T) {
	long := strings.Repeat("x", MaxLineBytes+10)
	in := strings.NewReader("{bad\n" + `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n\n" + long + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	var out bytes.Buffer
	w := &lineWriter{out: &out}
	pr, pw := io.Pipe()
	go pump(in, pw, w)
	fwd, _ := io.ReadAll(pr)
	if got := string(fwd); got != `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n" {
		t.Errorf("forwarded %q", got)
	}
	sc := bufio.NewScanner(&out)
	var answers []string
	for sc.Scan() {
		answers = append(answers, sc.Text())
	}
	if len(answers) != 2 || !strings.Contains(answers[0], "-32700") || !strings.Contains(answers[1], "exceeds 4 MiB") {
		t.Errorf("answers %q", answers)
	}
}
