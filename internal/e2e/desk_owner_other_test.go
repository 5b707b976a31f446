//go:build !unix

package e2e

import (
	"testing"

	"github.com/agent-interop/runtime/internal/testutil/browser"
	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
)

// deskOwnerGone kills a runtime process with SIGKILL and waits for its
// provider programs' process groups to end, which needs unix.
func deskOwnerGone(t *testing.T, _ *browser.Browser, _ *deskProcess, _ *realpeers.Env, _ *fakemodel.Server, _ string) {
	t.Skip("killing a runtime and its provider process groups needs unix")
}
