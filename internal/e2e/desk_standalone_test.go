package e2e

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestStandaloneDeskActions: the stand-alone `desk` command, over a store
// a `serve` process writes, releases a claim a signed-in person posts
// (through the claims service: the claim is no longer active for the MCP
// tools), and refuses a permission answer and a cancel, which need the
// provider connection it does not have, with 403 and needs_provider; its
// session page offers neither.
func TestStandaloneDeskActions(t *testing.T) {
	env := isolatedEnv(t)
	cs := connectWith(t, []string{"serve"}, env, nil)
	var work struct {
		ID string `json:"id"`
	}
	call(t, cs, "create_work_item", map[string]any{"objective": "Standalone release", "acceptanceCriteria": []string{"done"}}, &work)
	var held struct {
		ID string `json:"id"`
	}
	call(t, cs, "acquire_claim", map[string]any{"workId": work.ID, "sessionId": "codex:standalone-1", "resource": "src/held.go"}, &held)
	dk := startDesk(t, env)

	client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path, cookie string, form url.Values) (int, string, *http.Response) {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, err := http.NewRequest(method, dk.base+path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "text/html")
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", dk.base)
			req.Header.Set("Sec-Fetch-Site", "same-origin")
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		return res.StatusCode, string(b), res
	}
	link, err := url.Parse(dk.loginLink(t))
	if err != nil {
		t.Fatal(err)
	}
	_, _, res := do(http.MethodGet, link.RequestURI(), "", nil)
	var cookie string
	for _, c := range res.Cookies() {
		cookie = c.Name + "=" + c.Value
	}
	if cookie == "" {
		t.Fatalf("the login link set no cookie: %d", res.StatusCode)
	}
	code, claims, _ := do(http.MethodGet, "/desk/claims", cookie, nil)
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(claims)
	if code != http.StatusOK || m == nil || !strings.Contains(claims, `form="release-form"`) {
		t.Fatalf("the claims page offers no release: %d %.2000s", code, claims)
	}
	csrf := m[1]

	for _, c := range []struct {
		path string
		form url.Values
	}{
		{"/desk/act/permission", url.Values{"provider": {"codex"}, "nativeId": {"standalone-1"}, "requestId": {"r-1"}, "decision": {"accept"}}},
		{"/desk/act/cancel", url.Values{"provider": {"codex"}, "nativeId": {"standalone-1"}}},
	} {
		c.form.Set("csrf", csrf)
		if code, body, _ := do(http.MethodPost, c.path, cookie, c.form); code != http.StatusForbidden || !strings.Contains(body, "needs_provider") {
			t.Fatalf("%s: %d %s, want 403 needs_provider", c.path, code, body)
		}
	}
	code, page, _ := do(http.MethodGet, "/desk/sessions/codex/standalone-1", cookie, nil)
	if code != http.StatusOK || strings.Contains(page, `action="/desk/act/cancel"`) || !strings.Contains(page, `id="act-elsewhere"`) {
		t.Fatalf("the session page: %d %.3000s", code, page)
	}

	if code, body, res := do(http.MethodPost, "/desk/act/release", cookie, url.Values{"csrf": {csrf}, "claimId": {held.ID}}); code != http.StatusSeeOther ||
		res.Header.Get("Location") != "/desk/claims" {
		t.Fatalf("release: %d %s", code, body)
	}
	var active struct {
		Claims []struct {
			ID string `json:"id"`
		} `json:"claims"`
	}
	call(t, cs, "list_claims", map[string]any{"workId": work.ID, "activeOnly": true}, &active)
	if len(active.Claims) != 0 {
		t.Fatalf("the claim is still active after the desk released it: %+v", active.Claims)
	}
}
