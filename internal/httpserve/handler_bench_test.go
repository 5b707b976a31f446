package httpserve

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/internal/httpguard"
)

// BenchmarkCall measures one tools/call round trip over loopback HTTP
// (keep-alive): through the SDK's Streamable HTTP handler alone, answering
// an SSE stream per POST (sdk-sse) or, with its JSONResponse option, one
// application/json body (sdk-json), and through the whole Handler (guarded:
// the guard, and a call that sends nothing but its answer answered
// application/json), so the guard's share and the answer's form show:
//
//	go test -run '^$' -bench Call -benchtime 3000x ./internal/httpserve/
func BenchmarkCall(b *testing.B) {
	for _, mode := range []string{"sdk-sse", "sdk-json", "guarded"} {
		b.Run(mode, func(b *testing.B) {
			srv := echoServer()
			sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{DisableLocalhostProtection: true, JSONResponse: mode == "sdk-json"})
			var h http.Handler = sdk
			if mode == "guarded" {
				h = NewHandler(Options{MCP: sdk, Guard: httpguard.New(httpguard.Options{LoopbackHostOnly: true, RateLimit: 1 << 30}), Token: httpguard.NewSecret(testToken)})
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			hs := NewHTTPServer(h, ServeOptions{})
			go hs.Serve(ln)
			defer hs.Close()
			url := "http://" + ln.Addr().String() + "/mcp"
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			post := func(session, body string) (*http.Response, error) {
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Authorization", "Bearer "+testToken)
				if session != "" {
					req.Header.Set(HeaderSessionID, session)
				}
				return client.Do(req)
			}
			resp, err := post("", initialize)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			id := resp.Header.Get(HeaderSessionID)
			resp, _ = post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			resp.Body.Close()
			call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
			b.ResetTimer()
			cpu := cpuTime()
			for range b.N {
				resp, err := post(id, call)
				if err != nil {
					b.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if !bytes.Contains(body, []byte(":hi")) {
					b.Fatalf("answer %s", body)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
