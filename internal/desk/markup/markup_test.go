package markup

import (
	"html/template"
	"strings"
	"testing"
)

// hostile are values shaped to break out of each context.
var hostile = []string{
	"", "plain", `<script>alert(1)</script>`, `"><img src=x onerror=alert(1)>`, `' onmouseover='x`,
	"a+b&c=d", "nul\x00byte", "javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,<b>x</b>",
	"//evil.example/x", `/\evil.example`, "/desk/x y?z=1#f", "%41%zz%", "é ü 日本 \xff", "?q=<x>", "#frag\"",
	strings.Repeat("long<", 400),
}

func TestEscapingByContext(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(w *Writer)
		want  string
	}{
		{"text", func(w *Writer) { w.Text(`<script>"a" & 'b' + c</script>` + "\x00") },
			"&lt;script&gt;&#34;a&#34; &amp; &#39;b&#39; &#43; c&lt;/script&gt;\uFFFD"},
		{"attribute", func(w *Writer) { w.Attr("title", `"><img src=x>`) }, ` title="&#34;&gt;&lt;img src=x&gt;"`},
		{"attribute opened by Raw", func(w *Writer) { w.Raw(`<b class="st-`); w.Text(`x" onclick="y`); w.Raw(`">`) },
			`<b class="st-x&#34; onclick=&#34;y">`},
		{"URL: javascript", func(w *Writer) { w.URL("href", "", "javascript:alert(1)") }, ` href="#ZgotmplZ"`},
		{"URL: data", func(w *Writer) { w.URL("href", "", "data:text/html,x") }, ` href="#ZgotmplZ"`},
		{"URL: another host", func(w *Writer) { w.URL("href", "", "//evil.example/x") }, ` href="#ZgotmplZ"`},
		{"URL: backslash host", func(w *Writer) { w.URL("href", "", `/\evil.example`) }, ` href="#ZgotmplZ"`},
		{"URL: absolute http", func(w *Writer) { w.URL("href", "", "https://example.com/") }, ` href="#ZgotmplZ"`},
		{"URL: desk path", func(w *Writer) { w.URL("href", "", "/desk/sessions/codex/a b?x=1&y=\"2\"") },
			` href="/desk/sessions/codex/a%20b?x=1&amp;y=%222%22"`},
		{"URL: query", func(w *Writer) { w.URL("href", "", "?cursor=a+b") }, ` href="?cursor=a&#43;b"`},
		{"URL: path after a prefix", func(w *Writer) { w.URL("href", "/desk/work/", "javascript:x <y>") },
			` href="/desk/work/javascript:x%20%3cy%3e"`},
		{"URL: query value", func(w *Writer) { w.URLQuery("href", "/desk/c/", "id 1", "?before=", "1&x=<y>") },
			` href="/desk/c/id%201?before=1%26x%3d%3cy%3e"`},
		{"URL: fragment", func(w *Writer) { w.URL("href", "#", `m-"x"/y`) }, ` href="#m-%22x%22%2fy"`},
		{"numbers", func(w *Writer) { w.Int(-1234); w.Raw(" "); w.Int64(9) }, "-1234 9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w Writer
			tc.write(&w)
			if got := w.String(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestMatchesHTMLTemplate compares each context with what html/template
// writes for the same value (only in this test: the package itself must
// not import it).
func TestMatchesHTMLTemplate(t *testing.T) {
	contexts := []struct {
		name, tpl string
		write     func(w *Writer, s string)
	}{
		{"text", `<p>{{.}}</p>`, func(w *Writer, s string) { w.Raw("<p>"); w.Text(s); w.Raw("</p>") }},
		{"title", `<title>{{.}}</title>`, func(w *Writer, s string) { w.Raw("<title>"); w.Text(s); w.Raw("</title>") }},
		{"pre", `<pre>{{.}}</pre>`, func(w *Writer, s string) { w.Raw("<pre>"); w.Text(s); w.Raw("</pre>") }},
		{"attribute", `<p title="{{.}}">`, func(w *Writer, s string) { w.Raw("<p"); w.Attr("title", s); w.Raw(">") }},
		{"attribute part", `<p class="st-{{.}}">`, func(w *Writer, s string) { w.Raw(`<p class="st-`); w.Text(s); w.Raw(`">`) }},
		{"URL path", `<a href="/desk/work/{{.}}">`, func(w *Writer, s string) { w.Raw("<a"); w.URL("href", "/desk/work/", s); w.Raw(">") }},
		{"URL query", `<a href="/desk/c/x?before={{.}}">`, func(w *Writer, s string) {
			w.Raw("<a")
			w.URLQuery("href", "/desk/c/", "x", "?before=", s)
			w.Raw(">")
		}},
		{"URL fragment", `<a href="#{{.}}">`, func(w *Writer, s string) { w.Raw("<a"); w.URL("href", "#", s); w.Raw(">") }},
		{"whole URL", `<a href="{{.}}">`, func(w *Writer, s string) { w.Raw("<a"); w.URL("href", "", s); w.Raw(">") }},
	}
	for _, c := range contexts {
		tpl := template.Must(template.New(c.name).Parse(c.tpl))
		for _, s := range hostile {
			var want strings.Builder
			if err := tpl.Execute(&want, s); err != nil {
				t.Fatal(err)
			}
			var w Writer
			c.write(&w, s)
			if c.name == "whole URL" && !safeURL(s) {
				// Stricter than html/template, which lets a relative path,
				// "//host" and http(s)/mailto through.
				if got := w.String(); got != `<a href="#ZgotmplZ">` {
					t.Errorf("%s %q: got %q, want the failsafe", c.name, s, got)
				}
				continue
			}
			if got := w.String(); got != want.String() {
				t.Errorf("%s %q:\ngot  %q\nwant %q", c.name, s, got, want.String())
			}
		}
	}
}

func TestSafeURL(t *testing.T) {
	for s, want := range map[string]bool{
		"": true, "/": true, "/desk/x": true, "?a=b": true, "#x": true, "//host": false, `/\host`: false,
		"javascript:x": false, "http://x": false, "desk/x": false, " /x": false,
	} {
		if got := safeURL(s); got != want {
			t.Errorf("safeURL(%q) = %v, want %v", s, got, want)
		}
	}
}
