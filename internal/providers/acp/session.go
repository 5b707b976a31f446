package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
)

const (
	// subscriberBuffer is each subscriber's channel capacity; a subscriber
	// that falls this far behind is dropped (its channel closed) and must
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
	subs        map[chan providers.NativeEvent]struct{}
	backlog     []providers.NativeEvent
	subscribed  bool
	subsStopped bool
}

func newSession(id, cwd string, now time.Time) *session {
	return &session{
		id:       id,
		cwd:      cwd,
		slot:     make(chan struct{}, 1),
		openedAt: now,
		subs:     make(map[chan providers.NativeEvent]struct{}),
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
// while nobody has subscribed yet. A subscriber whose buffer is full is
// dropped so one slow reader never blocks the connection.
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
	for ch := range s.subs {
		select {
		case ch <- ev:
		default:
			delete(s.subs, ch)
			close(ch)
		}
	}
}

func (s *session) subscribe() (chan providers.NativeEvent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.subsStopped {
		return nil, fmt.Errorf("session %s is closed", s.id)
	}
	ch := make(chan providers.NativeEvent, subscriberBuffer+len(s.backlog))
	for _, ev := range s.backlog {
		ch <- ev
	}
	s.backlog = nil
	s.subscribed = true
	s.subs[ch] = struct{}{}
	return ch, nil
}

func (s *session) unsubscribe(ch chan providers.NativeEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.subs[ch]; ok {
		delete(s.subs, ch)
		close(ch)
	}
}

func (s *session) closeSubscribers() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subsStopped = true
	for ch := range s.subs {
		delete(s.subs, ch)
		close(ch)
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
		Data:      append(json.RawMessage(nil), data...),
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
	ch, err := s.subscribe()
	if err != nil {
		return nil, err
	}
	go func() {
		select {
		case <-ctx.Done():
			s.unsubscribe(ch)
		case <-c.conn.Done():
		}
	}()
	return ch, nil
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
