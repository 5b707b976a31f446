package desk

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/desk/markup"
)

// openUnsafe matches markup that ends inside an attribute whose value is a
// URL, script or style (or inside a <script> or <style> element): a
// dynamic value written next would skip markup.Writer.URL's filter and be
// escaped only as text.
var openUnsafe = regexp.MustCompile(`(?is)(\s(href|src|srcset|action|formaction|poster|cite|data|sse-connect|hx-(get|post|put|patch|delete)|on[a-z]+|style)\s*=\s*("[^"]*|'[^']*|[^\s"'>]*)$)|(<(script|style)\b([^<]|<[^/])*$)`)

// TestRawNeverOpensAURLForADynamicValue reads every w.Raw(…) of the desk's
// sources: each must be a string literal (or a sum of them), and none may
// leave a URL, event-handler or style attribute open; those take
// markup.Writer.URL (filtered) or a constant.
func TestRawNeverOpensAURLForADynamicValue(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	calls := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Raw" || len(call.Args) != 1 {
				return true
			}
			calls++
			text, ok := literal(call.Args[0])
			if !ok {
				t.Errorf("%s: Raw's argument is not a string literal: this check cannot read it", fset.Position(call.Pos()))
				return true
			}
			if m := openUnsafe.FindString(text); m != "" {
				t.Errorf("%s: Raw leaves %q open for a dynamic value: use Writer.URL", fset.Position(call.Pos()), m)
			}
			return true
		})
	}
	if calls < 100 {
		t.Errorf("found only %d Raw calls: is the check reading the renderer?", calls)
	}
}

func TestOpenUnsafeCatches(t *testing.T) {
	for s, want := range map[string]bool{
		`<a href="`: true, `<a class="x" href="/desk/work/`: true, `<form action='`: true, `<p onclick="`: true,
		`<div hx-ext="sse" sse-connect="`: true, `<p style="color:`: true, `<script>var x = `: true, `<style>p{`: true,
		`<a href="/desk/">traffic desk</a>`: false, `<tr id="ev-`: false, `<span class="badge st-`: false,
		`<style>p{}</style>`: false, `<script src="/x.js" defer></script>`: false, `<p>`: false,
	} {
		if got := openUnsafe.MatchString(s); got != want {
			t.Errorf("%q: matched %v, want %v", s, got, want)
		}
	}
}

// literal evaluates a string literal or a sum of them.
func literal(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		a, ok := literal(e.X)
		if !ok {
			return "", false
		}
		b, ok := literal(e.Y)
		return a + b, ok
	case *ast.ParenExpr:
		return literal(e.X)
	}
	return "", false
}

// TestHostileValuesAreEscapedInEveryContext renders parts of pages with a
// hostile value in each kind of place the desk writes one.
func TestHostileValuesAreEscapedInEveryContext(t *testing.T) {
	const x = `"><script>alert('x'+1)</script>` + "\x00"
	const escaped = `&#34;&gt;&lt;script&gt;alert(&#39;x&#39;&#43;1)&lt;/script&gt;` + "\uFFFD"
	render := func(write func(w *markup.Writer)) string { return fragment(write) }
	for _, tc := range []struct {
		name, got, want string
	}{
		{"text", render(func(w *markup.Writer) { statusHTML(w, x) }), `>` + escaped + `</span>`},
		{"attribute", render(func(w *markup.Writer) { statusHTML(w, x) }), ` data-status="` + escaped + `"`},
		{"attribute part", render(func(w *markup.Writer) { statusHTML(w, x) }), `class="badge st-` + escaped + `"`},
		{"title", string(must(renderPage("notfound", pageData{Title: x, Data: "y"}))), `<title>` + escaped + ` · traffic desk</title>`},
		{"pre", render(func(w *markup.Writer) { eventRowHTML(w, EventRow{Data: x}) }), `<pre>` + escaped + `</pre>`},
		{"URL path", render(func(w *markup.Writer) { workLink(w, x) }), `href="/desk/work/%22%3e%3cscript%3ealert%28%27x%27&#43;1%29%3c/script%3e%00"`},
		{"URL fragment", render(func(w *markup.Writer) {
			receiptDetailHTML(w, ReceiptDetail{MessageID: "m", ConversationID: "c", MessageDOMID: x}, "")
		}), `href="/desk/conversations/c#%22%3e%3cscript%3ealert%28%27x%27%2b1%29%3c%2fscript%3e%00"`},
		{"URL query", string(must(renderPage("conversation", pageData{Data: ConversationDetail{ConversationRow: ConversationRow{ID: x}, Earlier: 7}}))),
			`href="/desk/conversations/%22%3e%3cscript%3ealert%28%27x%27&#43;1%29%3c/script%3e%00?before=7"`},
		{"whole URL: script", render(func(w *markup.Writer) { pagerHTML(w, listTail{ID: "l", Base: "javascript:alert(1)", Next: "n"}) }),
			`<a href="#ZgotmplZ">First page</a>`},
		{"whole URL: another host", render(func(w *markup.Writer) { pagerHTML(w, listTail{ID: "l", Base: "//evil.example", Next: "n"}) }),
			`<a href="#ZgotmplZ">First page</a>`},
		{"live stream URL", string(must(renderPage("notfound", pageData{Title: "t", Data: "y", Live: "javascript:alert(1)"}))),
			`sse-connect="#ZgotmplZ"`},
		{"session reference", render(func(w *markup.Writer) { refHTML(w, "codex:"+x) }),
			`<a href="/desk/sessions/codex/%22%3E%3Cscript%3Ealert%28%27x%27&#43;1%29%3C%2Fscript%3E%00"><code>codex:` + escaped + `</code></a>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(tc.got, tc.want) {
				t.Errorf("want %q in\n%s", tc.want, tc.got)
			}
			if strings.Contains(tc.got, "<script>") || strings.Contains(tc.got, "\x00") {
				t.Errorf("the value is in the markup unescaped:\n%s", tc.got)
			}
		})
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
