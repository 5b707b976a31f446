package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/internal/testutil/answercheck"
)

// shapes checks every tools/call answer of every client in this package
// (go-sdk clients over stdio and HTTP, and raw JSON-RPC sessions) against
// the answer shape the spec declares for the tool, in the profile the
// client's server serves: the modern shape, or the 0.3.x one for a legacy
// alias (whose non-object shapes carry no structuredContent).
var shapes = answercheck.New()

// newClient is mcp.NewClient with the answer check installed, for a
// server started with args and env.
func newClient(t testing.TB, name string, args, env []string, opts *mcp.ClientOptions) *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, opts)
	c.AddSendingMiddleware(shapes.Middleware(profileOf(args, env), t.Errorf))
	return c
}

// profileOf is the profile a server started with args and env serves ("":
// the default).
func profileOf(args, env []string) string {
	for i, a := range args {
		if a == "--profile" && i+1 < len(args) {
			return args[i+1]
		}
		if p, ok := strings.CutPrefix(a, "--profile="); ok {
			return p
		}
	}
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "INTEROP_TOOLS_PROFILE="); ok {
			return p
		}
	}
	return ""
}

// checkRawAnswer checks a raw session's response to a tools/call request.
func checkRawAnswer(t testing.TB, profile, name string, result json.RawMessage) {
	if err := shapes.CheckRaw(profile, name, result); err != nil {
		t.Errorf("answer check: %v", err)
	}
}

// reportAnswers prints, after the suite, how many shapes of each tool
// were checked against their declared shape.
func reportAnswers() {
	checked := shapes.Checked()
	names := make([]string, 0, len(checked))
	total := 0
	for n, k := range checked {
		names = append(names, fmt.Sprintf("%s=%d", n, k))
		total += k
	}
	sort.Strings(names)
	fmt.Fprintf(os.Stderr, "e2e: %d answers of %d tools checked against their declared shape: %s\n", total, len(names), strings.Join(names, " "))
}
