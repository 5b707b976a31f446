package desk

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed templates/*.html
var templateFiles embed.FS

// Base is the path the desk is served under.
const Base = "/desk"

// pageNames are the page templates; each is parsed with layout.html and
// rows.html into its own set.
var pageNames = []string{"sessions", "session", "receipts", "receipt", "work", "workitem", "claims", "conversations", "conversation", "notfound", "search", "graph"}

// templates are parsed once, on first use: nothing here runs at package
// initialisation, so a binary that links the desk pays for it only when a
// page is served.
type templates struct {
	once  sync.Once
	err   error
	pages map[string]*template.Template
	rows  *template.Template // rows.html alone: the fragments the live streams push
	login *template.Template // signin.html: the refusal page with the token form
}

func (t *templates) load() error {
	t.once.Do(func() {
		t.pages = map[string]*template.Template{}
		funcs := templateFuncs()
		base, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/rows.html")
		if err != nil {
			t.err = fmt.Errorf("parse the desk's layout: %w", err)
			return
		}
		for _, name := range pageNames {
			set, err := base.Clone()
			if err == nil {
				_, err = set.ParseFS(templateFiles, "templates/"+name+".html")
			}
			if err != nil {
				t.err = fmt.Errorf("parse the desk's %s page: %w", name, err)
				return
			}
			t.pages[name] = set
		}
		if t.rows, err = template.New("rows.html").Funcs(funcs).ParseFS(templateFiles, "templates/rows.html"); err != nil {
			t.err = fmt.Errorf("parse the desk's rows: %w", err)
			return
		}
		if t.login, err = template.New("signin.html").Funcs(funcs).ParseFS(templateFiles, "templates/signin.html"); err != nil {
			t.err = fmt.Errorf("parse the desk's sign-in page: %w", err)
		}
	})
	return t.err
}

// page renders a whole page.
func (t *templates) page(name string, data any) ([]byte, error) {
	if err := t.load(); err != nil {
		return nil, err
	}
	set := t.pages[name]
	if set == nil {
		return nil, fmt.Errorf("no desk page %q", name)
	}
	var b bytes.Buffer
	if err := set.ExecuteTemplate(&b, "layout.html", data); err != nil {
		return nil, fmt.Errorf("render the %s page: %w", name, err)
	}
	return b.Bytes(), nil
}

// fragment renders one named template of rows.html.
func (t *templates) fragment(name string, data any) (string, error) {
	if err := t.load(); err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.rows.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("render %s: %w", name, err)
	}
	return b.String(), nil
}

// signin renders the sign-in page.
func (t *templates) signin(data any) ([]byte, error) {
	if err := t.load(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.login.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("render the sign-in page: %w", err)
	}
	return b.Bytes(), nil
}

func templateFuncs() template.FuncMap {
	return template.FuncMap{
		"when":    formatTime,
		"whenp":   func(t *time.Time) string { return formatTimePtr(t) },
		"iso":     func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) },
		"isop":    func(t *time.Time) string { return formatISOPtr(t) },
		"short":   shorten,
		"session": sessionPath,
		"path":    func(parts ...string) string { return joinPath(parts...) },
		"query":   queryString,
		"hash":    func(h string) string { return shorten(h, 12) },
		"join":    strings.Join,
		"pct": func(a, b int) int {
			if b <= 0 {
				return 0
			}
			return a * 100 / b
		},
		"dict": func(kv ...any) map[string]any {
			m := make(map[string]any, len(kv)/2)
			for i := 0; i+1 < len(kv); i += 2 {
				m[fmt.Sprint(kv[i])] = kv[i+1]
			}
			return m
		},
		"sessionOf": splitSessionRef,
		"label":     func(s string) string { return strings.ReplaceAll(s, "_", " ") },
		"list":      func(v ...int) []int { return v },
		"num":       groupDigits,
		"nextURL": func(base, query, cursor string) string {
			if query == "" {
				return base + "?cursor=" + url.QueryEscape(cursor)
			}
			return base + query + "&cursor=" + url.QueryEscape(cursor)
		},
	}
}

// formatTime is the desk's one time format: UTC, to the second.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func formatTimePtr(t *time.Time) string {
	if t == nil {
		return "—"
	}
	return formatTime(*t)
}

func formatISOPtr(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// shorten cuts s to n characters with an ellipsis.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:max(n-1, 1)]) + "…"
	}
	return s
}

// joinPath builds a desk URL path from raw segments, each escaped.
func joinPath(parts ...string) string {
	var b strings.Builder
	b.WriteString(Base)
	for _, p := range parts {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(p))
	}
	return b.String()
}

// sessionPath is the page of a provider session.
func sessionPath(provider, nativeID string) string { return joinPath("sessions", provider, nativeID) }

// splitSessionRef reads a "<provider>:<nativeId>" reference (the form work
// items, claims and handoffs use) into the session page's path, or "" when
// it is not one. Provider ids are open (the agent catalog and a user's
// agents file), so any id of the catalog's form is taken; the page itself
// exists for every session the store mentions.
func splitSessionRef(ref string) string {
	p, n, ok := strings.Cut(ref, ":")
	if !ok || !providerIDForm(p) || n == "" || strings.HasPrefix(n, "//") {
		return ""
	}
	return sessionPath(p, n)
}

// providerIDForm reports a string shaped like a provider id: 1–64
// lower-case letters, digits, '-', '_' or '.', starting with a letter.
func providerIDForm(p string) bool {
	if p == "" || len(p) > 64 || p[0] < 'a' || p[0] > 'z' {
		return false
	}
	for _, c := range p {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// queryString builds "?k=v&..." from pairs, leaving out empty values.
func queryString(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			v.Set(kv[i], kv[i+1])
		}
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// groupDigits writes n with a comma between groups of three digits: 1,234.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
