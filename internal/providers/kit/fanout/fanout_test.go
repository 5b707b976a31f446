package fanout

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

func ev(key, data string) providers.NativeEvent {
	return providers.NativeEvent{NativeID: key, Type: "t", Data: json.RawMessage(data)}
}

// recv takes one event that must be waiting.
func recv(t *testing.T, s *Sub) providers.NativeEvent {
	t.Helper()
	select {
	case e, ok := <-s.C():
		if !ok {
			t.Fatal("the subscription ended")
		}
		return e
	default:
		t.Fatal("no event waiting")
	}
	return providers.NativeEvent{}
}

func ended(s *Sub) bool {
	select {
	case <-s.Done():
	default:
		return false
	}
	_, open := <-s.C() // drained by the caller first
	return !open
}

func TestPublishReachesOnlyTheSessionsSubscriptions(t *testing.T) {
	h := New(4)
	a1, a2, b := h.Add("a"), h.Add("a"), h.Add("b")
	if !h.Has("a") || h.Has("c") || h.Len() != 2 {
		t.Fatalf("Has(a)=%v Has(c)=%v Len=%d", h.Has("a"), h.Has("c"), h.Len())
	}
	if keys := h.Keys(); !slices.Equal(slices.Sorted(slices.Values(keys)), []string{"a", "b"}) {
		t.Fatalf("Keys = %v", keys)
	}
	buf := []byte(`{"n":1}`)
	if n := h.Publish(ev("a", string(buf))); n != 0 {
		t.Fatalf("Publish ended %d subscriptions", n)
	}
	for _, s := range []*Sub{a1, a2} {
		if got := recv(t, s); got.NativeID != "a" || string(got.Data) != `{"n":1}` {
			t.Fatalf("event %+v", got)
		}
	}
	select {
	case e := <-b.C():
		t.Fatalf("session b received %+v", e)
	default:
	}
	if h.Publish(ev("nobody", "{}")) != 0 {
		t.Fatal("an event of a session without subscriptions ended one")
	}
}

// TestPublishCopiesTheData: the caller may reuse its buffer.
func TestPublishCopiesTheData(t *testing.T) {
	h := New(1)
	s := h.Add("a")
	buf := []byte(`"x"`)
	h.Publish(providers.NativeEvent{NativeID: "a", Data: buf})
	buf[1] = 'y'
	if got := recv(t, s); string(got.Data) != `"x"` {
		t.Fatalf("data = %s, want the bytes as published", got.Data)
	}
}

// TestASlowSubscriptionIsEnded: a full buffer ends that subscription (its
// events so far stay readable, then the channel closes) and not the others.
func TestASlowSubscriptionIsEnded(t *testing.T) {
	h := New(2)
	slow, fast := h.Add("a"), h.Add("a")
	h.Publish(ev("a", "1"))
	h.Publish(ev("a", "2"))
	recv(t, fast)
	recv(t, fast)
	if n := h.Publish(ev("a", "3")); n != 1 {
		t.Fatalf("Publish ended %d subscriptions, want the slow one", n)
	}
	if got := string(recv(t, fast).Data); got != "3" {
		t.Fatalf("fast got %s", got)
	}
	recv(t, slow)
	recv(t, slow)
	if !ended(slow) {
		t.Fatal("the slow subscription was not ended")
	}
	if h.Remove(slow) {
		t.Fatal("Remove of an ended subscription reported it open")
	}
}

func TestRemoveAndEndAll(t *testing.T) {
	h := New(1)
	a, b := h.Add("a"), h.Add("b")
	if !h.Remove(a) || !ended(a) || h.Has("a") {
		t.Fatal("Remove did not end the subscription")
	}
	h.EndAll()
	if !ended(b) || h.Len() != 0 {
		t.Fatalf("EndAll left %d sessions", h.Len())
	}
	c := h.Add("a") // the hub takes new subscriptions after EndAll
	h.Publish(ev("a", "1"))
	recv(t, c)
}

func TestRemoveOnDone(t *testing.T) {
	h := New(1)
	ctx, cancel := context.WithCancel(context.Background())
	s := h.Add("a")
	after := make(chan struct{})
	h.RemoveOnDone(ctx, s, func() { close(after) })
	cancel()
	wait.Recv(t, "the after call once the context ended", wait.InProcess, after)
	if !ended(s) {
		t.Fatal("the subscription outlived its context")
	}

	// A subscription that ended first does not call after.
	s = h.Add("a")
	h.RemoveOnDone(context.Background(), s, func() { t.Error("after called for a subscription that ended by itself") })
	h.EndAll()
	if !ended(s) {
		t.Fatal("EndAll did not end it")
	}
}
