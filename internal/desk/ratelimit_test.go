package desk

import (
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// signInCookie signs in with the token form and returns the session
// cookie as a request header value.
func signInCookie(t *testing.T, f *fixture) string {
	t.Helper()
	res, _ := f.do(http.MethodPost, "/desk/login", "token="+url.QueryEscape(testToken), "Content-Type", "application/x-www-form-urlencoded")
	for _, c := range res.Cookies() {
		if c.Name == f.h.auth.cookie {
			return c.Name + "=" + c.Value
		}
	}
	t.Fatalf("sign-in: %d %v", res.StatusCode, res.Cookies())
	return ""
}

// TestManyTabsFromLoopbackAreNotLimited: the desk's limit is a token
// bucket per desk session (its tabs share it) or bearer token, not a
// window per address. 16 concurrent tabs of one browser × 40 requests
// from 127.0.0.1 at the default limit: none refused. A client guessing
// the token from the same address runs out of its own bucket of failures
// and is refused 429, while the signed-in tabs and a second session
// still pass; one session's exhausted bucket refuses only that session.
func TestManyTabsFromLoopbackAreNotLimited(t *testing.T) {
	f := newFixture(t)
	cookie := signInCookie(t, f)
	const tabs, calls = 16, 40
	var refused, failed atomic.Int64
	var wg sync.WaitGroup
	for range tabs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range calls {
				req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/desk/receipts", nil)
				req.Header.Set("Cookie", cookie)
				res, err := f.client.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				res.Body.Close()
				if res.StatusCode == http.StatusTooManyRequests {
					refused.Add(1)
				} else if res.StatusCode != http.StatusOK {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d tabs × %d requests from 127.0.0.1: %d refused", tabs, calls, refused.Load())
	if refused.Load() != 0 || failed.Load() != 0 {
		t.Fatalf("%d refused, %d failed; want none", refused.Load(), failed.Load())
	}

	// A small limit: failures are limited per address, calls per session.
	f = newFixture(t, func(o *Options) { o.RateLimit = 5 })
	a := signInCookie(t, f)
	form := "application/x-www-form-urlencoded"
	guesses := 0
	for ; guesses < 20; guesses++ {
		if res, _ := f.do(http.MethodPost, "/desk/login", "token=guess", "Content-Type", form); res.StatusCode == http.StatusTooManyRequests {
			break
		}
	}
	if guesses == 20 {
		t.Fatal("20 wrong tokens from one address were never limited")
	}
	if res, _ := f.get("/desk/receipts"); res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a request without a credential after the guesses: %d, want 429", res.StatusCode)
	}
	for i := range 5 {
		if res, _ := f.get("/desk/receipts", "Cookie", a); res.StatusCode != http.StatusOK {
			t.Fatalf("signed-in request %d after another client's guesses: %d", i+1, res.StatusCode)
		}
	}
	if res, _ := f.get("/desk/receipts", "Cookie", a); res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Errorf("the session's 6th request within its burst of 5: %d, want 429 with Retry-After", res.StatusCode)
	}
	if res, _ := f.get("/desk/receipts", bearer...); res.StatusCode != http.StatusOK {
		t.Errorf("the bearer token after a session ran out: %d, want 200", res.StatusCode)
	}
}
