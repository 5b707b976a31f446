package desktop

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
	"github.com/agent-interop/runtime/internal/providers/kit/fanout"
)

// Bounds of the live-progress buffers (0.3.x events.ts).
const (
	maxThreadEvents = 200
	maxThreadBytes  = 512_000
	maxFrameChars   = 512_000
	progressTTL     = 30 * time.Minute
	staleAfter      = 90 * time.Second
	maxWait         = limits.GetThreadProgressTimeoutMsMax * time.Millisecond
	maxTextChars    = 100_000
	maxFiles        = 100
	maxFileChars    = 1000
	defaultLimit    = limits.GetThreadProgressLimitDefault
	maxLimit        = limits.GetThreadProgressLimitMax
	subscriberQueue = 256
)

// progressStore keeps the bounded per-thread progress logs fed by the SSE
// client, wakes waiters and fans events out to adapter subscribers.
type progressStore struct {
	clock quartz.Clock

	mu           sync.Mutex
	threads      map[string]*threadLog
	connected    bool
	lastActivity time.Time
	subs         *fanout.Hub // the adapter's Subscribe streams, per thread
}

type threadLog struct {
	entries []logEntry
	bytes   int
	seq     int64
	notify  chan struct{} // closed and replaced on every append
}

type logEntry struct {
	ev    core.ProgressEvent
	at    time.Time
	bytes int
}

func newProgressStore(c quartz.Clock) *progressStore {
	return &progressStore{clock: c, threads: map[string]*threadLog{}, subs: fanout.New(subscriberQueue)}
}

// setConnected records the stream state; connecting counts as activity.
func (p *progressStore) setConnected(v bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.connected = v
	if v {
		p.lastActivity = p.clock.Now()
	}
}

// touch records transport activity (any bytes, keep-alive comments included).
func (p *progressStore) touch() {
	p.mu.Lock()
	p.lastActivity = p.clock.Now()
	p.mu.Unlock()
}

func (p *progressStore) log(threadID string) *threadLog {
	l := p.threads[threadID]
	if l == nil {
		l = &threadLog{notify: make(chan struct{})}
		p.threads[threadID] = l
	}
	return l
}

// prune drops entries older than the TTL. Callers hold p.mu.
func (p *progressStore) prune(l *threadLog, now time.Time) {
	i := 0
	for i < len(l.entries) && now.Sub(l.entries[i].at) > progressTTL {
		l.bytes -= l.entries[i].bytes
		i++
	}
	if i > 0 {
		l.entries = append([]logEntry(nil), l.entries[i:]...)
	}
}

// append assigns the next per-thread sequence to ev, stores it within the
// bounds, wakes waiters and feeds subscribers.
func (p *progressStore) append(ev core.ProgressEvent) core.ProgressEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	l := p.log(ev.ThreadID)
	p.prune(l, now)
	l.seq++
	ev.Sequence = l.seq
	if ev.Timestamp == "" {
		ev.Timestamp = core.ISOTime(now)
	}
	b, _ := json.Marshal(ev)
	l.entries = append(l.entries, logEntry{ev: ev, at: now, bytes: len(b)})
	l.bytes += len(b)
	for len(l.entries) > 1 && (len(l.entries) > maxThreadEvents || l.bytes > maxThreadBytes) {
		l.bytes -= l.entries[0].bytes
		l.entries = l.entries[1:]
	}
	close(l.notify)
	l.notify = make(chan struct{})
	// A reader that cannot keep up loses its stream; the registry reopens
	// it and counts a new epoch instead of blocking the shared SSE reader.
	p.subs.Publish(providers.NativeEvent{NativeID: ev.ThreadID, Timestamp: now, Type: ev.Kind, Data: b})
	return ev
}

// read returns a page after afterSequence plus the thread summary, and the
// channel that is closed on the thread's next append.
// Only a waiter (create) allocates a log for a thread that has none yet.
func (p *progressStore) read(threadID string, after int64, limit int, summary, create bool) (core.ProgressSnapshot, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	l := p.threads[threadID]
	switch {
	case l != nil:
		p.prune(l, now)
	case create:
		l = p.log(threadID)
	default:
		l = &threadLog{}
	}
	if limit <= 0 {
		limit = defaultLimit
	}
	if limit > maxLimit {
		limit = maxLimit
	}
	snap := core.ProgressSnapshot{
		ThreadID:  threadID,
		Events:    []core.ProgressEvent{},
		Connected: p.connected,
		Stale:     !(p.connected && now.Sub(p.lastActivity) <= staleAfter),
	}
	next := after
	if !summary {
		for _, e := range l.entries {
			if e.ev.Sequence <= after {
				continue
			}
			if len(snap.Events) == limit {
				break
			}
			snap.Events = append(snap.Events, e.ev)
			next = e.ev.Sequence
		}
		if l.seq > after {
			oldest := l.seq + 1
			if len(l.entries) > 0 {
				oldest = l.entries[0].ev.Sequence
			}
			if oldest > after+1 {
				snap.Gap = &core.Gap{From: after + 1, To: oldest - 1}
			}
		}
	} else if l.seq > 0 {
		next = l.seq
	}
	snap.Next, snap.NextSequence = core.Ptr(next), core.Ptr(next)
	summarize(&snap, l.entries, now)
	return snap, l.notify
}

// summarize fills the summary fields from every retained event.
func summarize(s *core.ProgressSnapshot, entries []logEntry, now time.Time) {
	if len(entries) == 0 {
		return
	}
	latest := entries[len(entries)-1]
	s.LatestEventAt = latest.ev.Timestamp
	s.SecondsSinceLastEvent = core.Ptr(int64(max(0, now.Sub(latest.at)/time.Second)))
	toolDone := false
	seenFiles := map[string]struct{}{}
	var files []string
	for i := len(entries) - 1; i >= 0; i-- {
		ev := entries[i].ev
		if s.CurrentState == "" && ev.State != "" {
			s.CurrentState = ev.State
		}
		if ev.Kind == core.KindCompleted || ev.Kind == core.KindFailed {
			toolDone = true
		}
		if s.ActiveTool == "" && !toolDone && ev.Tool != "" && (ev.Kind == core.KindToolStart || ev.Kind == core.KindToolOutput) {
			s.ActiveTool = ev.Tool
		}
		if s.LastMeaningfulUpdate == "" && (ev.Kind != core.KindUnknown || ev.Phase != "") {
			s.LastMeaningfulUpdate = ev.Timestamp
		}
		if s.Phase == "" && ev.Phase != "" {
			s.Phase = ev.Phase
		}
		if s.LastError == "" && ev.Error != "" {
			s.LastError = ev.Error
		}
		for _, f := range ev.Files {
			if _, ok := seenFiles[f]; !ok && len(files) < maxFiles {
				seenFiles[f] = struct{}{}
				files = append(files, f)
			}
		}
	}
	// Oldest first, like the 0.3.x list.
	for i, j := 0, len(files)-1; i < j; i, j = i+1, j-1 {
		files[i], files[j] = files[j], files[i]
	}
	s.FilesChanged = files
}

// wait returns the page as soon as it holds an event, or when the timeout
// (capped at 30 s) or ctx ends.
func (p *progressStore) wait(ctx context.Context, q core.ProgressQuery) core.ProgressSnapshot {
	timeout := min(time.Duration(q.TimeoutMs)*time.Millisecond, maxWait)
	snap, notify := p.read(q.ThreadID, q.AfterSequence, q.Limit, q.Summary, timeout > 0 && !q.Summary)
	if len(snap.Events) > 0 || timeout <= 0 || q.Summary {
		return snap
	}
	timer := p.clock.NewTimer(timeout, TagWait)
	defer timer.Stop()
	for {
		select {
		case <-notify:
			snap, notify = p.read(q.ThreadID, q.AfterSequence, q.Limit, false, true)
			if len(snap.Events) > 0 {
				return snap
			}
		case <-timer.C:
			snap, _ = p.read(q.ThreadID, q.AfterSequence, q.Limit, false, false)
			return snap
		case <-ctx.Done():
			snap, _ = p.read(q.ThreadID, q.AfterSequence, q.Limit, false, false)
			return snap
		}
	}
}

// active returns the ids of threads that are running or in an active phase.
func (p *progressStore) active() []string {
	p.mu.Lock()
	ids := make([]string, 0, len(p.threads))
	for id := range p.threads {
		ids = append(ids, id)
	}
	p.mu.Unlock()
	var out []string
	for _, id := range ids {
		s, _ := p.read(id, 0, 1, true, false)
		if s.CurrentState == "running" || s.Phase == core.PhasePlanning || s.Phase == core.PhaseRunningTests || s.Phase == core.PhaseEditingFiles {
			out = append(out, id)
		}
	}
	return out
}
