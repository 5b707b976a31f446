package interrupt

import (
	"context"
	"errors"
	"testing"
)

func installed(h *Handlers) bool {
	select {
	case <-h.installed:
		return true
	default:
		return false
	}
}

func TestNothingIsInstalledUntilAsked(t *testing.T) {
	ctx, stop := Notify(context.Background(), testSignal)
	h := From(ctx)
	if h == nil {
		t.Fatal("From found no handlers in Notify's context")
	}
	if installed(h) {
		t.Fatal("the handlers were installed before Start or Wait")
	}
	h.Wait()
	if !installed(h) {
		t.Fatal("Wait returned before the handlers were installed")
	}
	h.Start() // again: nothing more happens
	stop()
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("after stop: ctx.Err() = %v, want context.Canceled", ctx.Err())
	}
}

func TestStopBeforeStartReleasesWaitAndInstallsNothing(t *testing.T) {
	ctx, stop := Notify(context.Background(), testSignal)
	h := From(ctx)
	stop()
	Wait(ctx) // returns: nothing will ever be installed
	h.Start()
	select {
	case <-h.done:
		t.Fatal("a goroutine installed the handlers after stop")
	default:
	}
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("ctx.Err() = %v, want context.Canceled", ctx.Err())
	}
}

func TestAContextWithoutHandlers(t *testing.T) {
	ctx := context.Background()
	if From(ctx) != nil {
		t.Fatal("From found handlers in a plain context")
	}
	Wait(ctx) // returns at once
	var h *Handlers
	h.Start()
	h.Wait()
}

func TestParentEndsTheGoroutine(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	ctx, stop := Notify(parent, testSignal)
	Wait(ctx)
	cancel()
	<-From(ctx).done // the goroutine ends with the context; the package's leak check sees no other
	stop()
}
