package desktop

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/agent-interop/runtime/internal/clockctx"
	"github.com/agent-interop/runtime/internal/httpguard"
)

// parseLoopbackURL accepts an http(s) URL whose host is a loopback address
// (or "localhost") and returns its scheme://host:port base.
func parseLoopbackURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("invalid Freebuff Desktop URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("Freebuff Desktop URL %q must use http or https", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("Freebuff Desktop URL must not carry credentials")
	}
	host := u.Hostname()
	if !httpguard.IsLoopbackHost(host) {
		return nil, fmt.Errorf("Freebuff Desktop URL %s is not a loopback address", u.Redacted())
	}
	if u.Port() == "" {
		return nil, fmt.Errorf("Freebuff Desktop URL %s has no port", u.Redacted())
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host}, nil
}

// newLoopbackClient returns an HTTP client that never follows redirects,
// never uses a proxy and refuses to connect anywhere but a loopback address
// (checked on the resolved address, so a hostile DNS answer cannot redirect
// it). timeout 0 means no overall timeout (the SSE stream); keepAlive false
// opens a new connection for every request.
func newLoopbackClient(timeout time.Duration, keepAlive bool) *http.Client {
	dialer := &net.Dialer{
		Timeout: 3 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				return fmt.Errorf("refusing to connect to non-loopback address %s", host)
			}
			return nil
		},
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		MaxIdleConns:          4,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: 0,
		DisableCompression:    true,
		DisableKeepAlives:     !keepAlive,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		// A redirect is never followed: the 3xx answer itself is returned
		// and treated as a refusal.
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// withTimeout derives a context that ends d after now on the backend's
// clock; tag names its timer (TagRequest, TagProbe).
func (d *Backend) withTimeout(ctx context.Context, timeout time.Duration, tag string) (context.Context, context.CancelFunc) {
	return clockctx.WithTimeout(ctx, d.cfg.Clock, timeout, tag)
}
