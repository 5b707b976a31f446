package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/providers"
)

const (
	// subscriberBuffer is how many events wait for each subscriber; a
	// subscriber that falls this far behind is dropped (its channel closed) and must
	// subscribe again.
	subscriberBuffer = 1024
	// backlogLimit bounds the events kept for a session nobody subscribed to
	// yet (a load's replay arrives before anyone can subscribe).
	backlogLimit = 4096
)

// SessionView is a snapshot of an open session.
type SessionView struct {
	ID            string
	CWD           string
	Title         string
	Modes         *ModeState
	Models        *ModelState
	ConfigOptions []ConfigOption
	OpenedAt      time.Time
	UpdatedAt     time.Time
	Busy          bool
}

type session struct {
	id   string
	slot chan struct{} // one prompt at a time

	mu          sync.Mutex
	cwd         string
	title       string
	modes       *ModeState
	models      *ModelState
	config      []ConfigOption
	openedAt    time.Time
	updatedAt   time.Time
	current     *Turn
	subs        map[*subscriber]struct{}
	progress    chan struct{} // closed (and renewed) when a subscriber took an event or left
	backlog     []providers.NativeEvent
	subscribed  bool
	subsStopped bool
}

// subscriber is one Subscribe: its events wait in queue (bounded by
// subscriberBuffer) and a forwarder hands them one at a time over the
// unbuffered out, so the session knows which events the consumer took
// (sent): a turn's outcome waits for that (awaitDelivery).
type subscriber struct {
	out    chan providers.NativeEvent
	wake   chan struct{} // cap 1: queue grew or closing was set
	stop   chan struct{} // closed to end the forwarder at once
	gone   chan struct{} // closed when the forwarder ended
	queue  []providers.NativeEvent
	limit  int    // how long queue may grow: subscriberBuffer plus the backlog it started with
	queued uint64 // events published to it
	sent   uint64 // events the consumer took
	// closing: the session's subscriptions end; the forwarder hands over
	// what is queued, then closes out.
	closing bool
	stopped bool
}

func newSession(id, cwd string, now time.Time) *session {
	return &session{
		id:       id,
		cwd:      cwd,
		slot:     make(chan struct{}, 1),
		openedAt: now,
		subs:     make(map[*subscriber]struct{}),
		progress: make(chan struct{}),
	}
}

func (s *session) view() SessionView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SessionView{
		ID: s.id, CWD: s.cwd, Title: s.title, Modes: s.modes, Models: s.models,
		ConfigOptions: append([]ConfigOption(nil), s.config...),
		OpenedAt:      s.openedAt, UpdatedAt: s.updatedAt, Busy: s.current != nil,
	}
}

func (s *session) apply(setup SessionSetup) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if setup.Modes != nil {
		s.modes = setup.Modes
	}
	if setup.Models != nil {
		s.models = setup.Models
	}
	if setup.ConfigOptions != nil {
		s.config = setup.ConfigOptions
	}
}

func (s *session) setTurn(t *Turn) {
	s.mu.Lock()
	s.current = t
	s.mu.Unlock()
}

func (s *session) turn() *Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current
}

func (s *session) setConfigOptions(opts []ConfigOption) {
	s.mu.Lock()
	s.config = opts
	s.mu.Unlock()
}

func (s *session) setConfigValue(id, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.config {
		if s.config[i].ID == id {
			b, _ := json.Marshal(value)
			s.config[i].CurrentValue = b
		}
	}
}

func (s *session) setMode(mode string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.modes != nil {
		m := *s.modes
		m.CurrentModeID = mode
		s.modes = &m
	}
}

func (s *session) setModel(model string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.models != nil {
		m := *s.models
		m.CurrentModelID = model
		s.models = &m
	}
}

// observe updates the session's state from a session/update it carries.
func (s *session) observe(kind string, update json.RawMessage, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.updatedAt = now
	switch kind {
	case "current_mode_update":
		var u struct {
			CurrentModeID string `json:"currentModeId"`
		}
		if json.Unmarshal(update, &u) == nil && u.CurrentModeID != "" && s.modes != nil {
			m := *s.modes
			m.CurrentModeID = u.CurrentModeID
			s.modes = &m
		}
	case "config_option_update":
		var u struct {
			ConfigOptions []json.RawMessage `json:"configOptions"`
		}
		if json.Unmarshal(update, &u) == nil && u.ConfigOptions != nil {
			s.config = decodeConfigOptions(u.ConfigOptions)
		}
	case "session_info_update":
		var u struct {
			Title *string `json:"title"`
		}
		if json.Unmarshal(update, &u) == nil && u.Title != nil {
			s.title = *u.Title
		}
	}
}

// publish hands an event to every subscriber, or keeps it in the backlog
// while nobody has subscribed yet. A subscriber that falls
// subscriberBuffer events behind is dropped (its channel closed) so one
// slow reader never blocks the connection.
func (s *session) publish(ev providers.NativeEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.subsStopped {
		return
	}
	if !s.subscribed {
		if len(s.backlog) >= backlogLimit {
			s.backlog = s.backlog[1:]
		}
		s.backlog = append(s.backlog, ev)
		return
	}
	for sub := range s.subs {
		if len(sub.queue) >= sub.limit {
			s.dropLocked(sub)
			continue
		}
		sub.queue = append(sub.queue, ev)
		sub.queued++
		poke(sub.wake)
	}
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// dropLocked ends sub at once (s.mu held).
func (s *session) dropLocked(sub *subscriber) {
	if !sub.stopped {
		sub.stopped = true
		close(sub.stop)
	}
	s.leftLocked(sub)
}

// leftLocked forgets sub and wakes awaitDelivery (s.mu held).
func (s *session) leftLocked(sub *subscriber) {
	if _, ok := s.subs[sub]; ok {
		delete(s.subs, sub)
		s.progressLocked()
	}
}

func (s *session) progressLocked() {
	close(s.progress)
	s.progress = make(chan struct{})
}

// forward hands sub's queued events to its consumer in order, one at a
// time, and closes its channel when it is dropped or, after the queue
// was handed over, when the session's subscriptions end.
func (s *session) forward(sub *subscriber) {
	defer close(sub.gone)
	defer close(sub.out)
	for {
		s.mu.Lock()
		if sub.stopped {
			s.mu.Unlock()
			return
		}
		if len(sub.queue) == 0 {
			if sub.closing {
				s.leftLocked(sub)
				s.mu.Unlock()
				return
			}
			s.mu.Unlock()
			select {
			case <-sub.wake:
			case <-sub.stop:
			}
			continue
		}
		ev := sub.queue[0]
		s.mu.Unlock()
		select {
		case sub.out <- ev:
			s.mu.Lock()
			sub.queue[0] = providers.NativeEvent{}
			sub.queue = sub.queue[1:]
			sub.sent++
			s.progressLocked()
			s.mu.Unlock()
		case <-sub.stop:
			return
		}
	}
}

func (s *session) subscribe() (*subscriber, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.subsStopped {
		return nil, fmt.Errorf("session %s is closed", s.id)
	}
	sub := &subscriber{
		out: make(chan providers.NativeEvent), wake: make(chan struct{}, 1), stop: make(chan struct{}), gone: make(chan struct{}),
		queue: s.backlog, queued: uint64(len(s.backlog)), limit: subscriberBuffer + len(s.backlog),
	}
	s.backlog = nil
	s.subscribed = true
	s.subs[sub] = struct{}{}
	go s.forward(sub)
	return sub, nil
}

func (s *session) unsubscribe(sub *subscriber) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(sub)
}

// closeSubscribers ends the session's subscriptions: each consumer still
// gets what was published to it, then its channel is closed.
func (s *session) closeSubscribers() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subsStopped = true
	for sub := range s.subs {
		sub.closing = true
		poke(sub.wake)
	}
}

// deliveryWait bounds how long a turn's outcome waits for subscribers to
// take the events published before it (a consumer that stopped reading
// without unsubscribing).
const deliveryWait = 10 * time.Second

// awaitDelivery returns once every current subscriber took every event
// published to it so far (or left), or after deliveryWait on clock. A
// consumer that reads its channel in order has then also handled every
// event before the last one.
func (s *session) awaitDelivery(clock quartz.Clock) {
	s.mu.Lock()
	want := make(map[*subscriber]uint64, len(s.subs))
	for sub := range s.subs {
		want[sub] = sub.queued
	}
	s.mu.Unlock()
	var timeout <-chan time.Time
	for {
		s.mu.Lock()
		done := true
		for sub, n := range want {
			if _, ok := s.subs[sub]; ok && sub.sent < n {
				done = false
				break
			}
		}
		progress := s.progress
		s.mu.Unlock()
		if done {
			return
		}
		if timeout == nil {
			t := clock.NewTimer(deliveryWait, "acp", "delivery")
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-progress:
		case <-timeout:
			return
		}
	}
}

// emit publishes one event for a session the client knows. Events for
// unknown sessions are dropped (logged at debug level).
//
// An update can arrive for a session the client is about to register: the
// agent's notification right after its session/new answer is dispatched
// before NewSession has recorded the session. Such events are kept (bounded)
// and handed to the session when it is registered.
func (c *Client) emit(sessionID, typ string, data json.RawMessage) {
	ev := providers.NativeEvent{
		NativeID:  sessionID,
		Timestamp: c.clock.Now(),
		Type:      typ,
		Data:      bounded(data),
	}
	c.mu.Lock()
	s := c.sessions[sessionID]
	if s != nil {
		if t := s.turn(); t != nil {
			ev.TurnID = t.ID
		}
	}
	if s == nil {
		if len(c.orphans[sessionID]) < orphanLimit && (len(c.orphans) < orphanSessions || c.orphans[sessionID] != nil) {
			c.orphans[sessionID] = append(c.orphans[sessionID], ev)
		} else {
			c.log.Debug("event for a session not open here dropped", "session", sessionID, "type", typ)
		}
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	s.publish(ev)
}

// maxEventBytes bounds one event's data: one event must fit in a
// read_session_events answer with its structured copy (under half the
// 1 MiB wire cap). Qwen Code 0.24.4 sends an available_commands_update of
// 560 KB, nearly all of it its skills' bodies under _meta.
const maxEventBytes = 256 << 10

// bounded returns a copy of an event's data within maxEventBytes: an
// object over it loses its _meta (agent extension data the runtime does
// not read), noted under "_omitted"; one still over it keeps only its
// sessionUpdate and the note. The adapter's own bookkeeping (diffs,
// modes, turn facts) reads the update before this.
func bounded(data json.RawMessage) json.RawMessage {
	if len(data) <= maxEventBytes {
		return append(json.RawMessage(nil), data...)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		obj = map[string]json.RawMessage{}
	}
	if meta, ok := obj["_meta"]; ok {
		delete(obj, "_meta")
		obj["_omitted"], _ = json.Marshal(fmt.Sprintf("_meta of %d bytes (an event is kept up to %d bytes)", len(meta), maxEventBytes))
		if b, err := json.Marshal(obj); err == nil && len(b) <= maxEventBytes {
			return b
		}
	}
	small := map[string]json.RawMessage{}
	if kind, ok := obj["sessionUpdate"]; ok && len(kind) < 256 {
		small["sessionUpdate"] = kind
	}
	small["_omitted"], _ = json.Marshal(fmt.Sprintf("the agent's data of %d bytes (an event is kept up to %d bytes)", len(data), maxEventBytes))
	b, _ := json.Marshal(small)
	return b
}

const (
	orphanLimit    = 256 // events kept per unregistered session
	orphanSessions = 16  // unregistered sessions events are kept for
)

// Subscribe streams the session's events until ctx ends, the session is
// closed or the connection ends; the channel is then closed. The first
// subscriber also receives the events that arrived before it (a load's
// replay).
func (c *Client) Subscribe(ctx context.Context, sessionID string) (<-chan providers.NativeEvent, error) {
	s := c.lookup(sessionID)
	if s == nil {
		return nil, fmt.Errorf("session %s is not open in this agent process", sessionID)
	}
	select {
	case <-c.conn.Done():
		return nil, fmt.Errorf("connection closed: %w", c.conn.Err())
	default:
	}
	sub, err := s.subscribe()
	if err != nil {
		return nil, err
	}
	go func() {
		select {
		case <-ctx.Done():
			s.unsubscribe(sub)
		case <-sub.gone:
		}
	}()
	return sub.out, nil
}

func (c *Client) closeSubscribers() {
	c.mu.Lock()
	list := make([]*session, 0, len(c.sessions))
	for _, s := range c.sessions {
		list = append(list, s)
	}
	c.mu.Unlock()
	for _, s := range list {
		s.closeSubscribers()
	}
}
