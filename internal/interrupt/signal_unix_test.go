//go:build unix

package interrupt

import (
	"context"
	"syscall"
	"testing"
)

// testSignal is a signal the tests send to their own process. Its default
// effect ends the process, so it is sent only once the handlers are in.
const testSignal = syscall.SIGUSR1

func TestASignalEndsTheContextOnceInstalled(t *testing.T) {
	ctx, stop := Notify(context.Background(), testSignal)
	defer stop()
	Wait(ctx)
	if err := syscall.Kill(syscall.Getpid(), testSignal); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done() // the test's deadline bounds this wait
	if ctx.Err() != context.Canceled {
		t.Fatalf("ctx.Err() = %v, want context.Canceled", ctx.Err())
	}
}
