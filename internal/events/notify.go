package events

import (
	"sync"

	"github.com/agent-interop/runtime/internal/providers"
)

type key struct {
	provider providers.ID
	nativeID string
}

// notifier wakes in-process waiters when a session's log grows. A waiter
// takes the channel before it reads, so an append between its read and its
// wait is never missed.
type notifier struct {
	mu sync.Mutex
	ch map[key]chan struct{}
}

func newNotifier() *notifier { return &notifier{ch: map[key]chan struct{}{}} }

// wait returns a channel closed at the next append to k.
func (n *notifier) wait(k key) <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := n.ch[k]
	if c == nil {
		c = make(chan struct{})
		n.ch[k] = c
	}
	return c
}

func (n *notifier) notify(k key) {
	n.mu.Lock()
	c := n.ch[k]
	delete(n.ch, k)
	n.mu.Unlock()
	if c != nil {
		close(c)
	}
}
