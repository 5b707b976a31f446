package opencode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
)

// Event stream bounds.
const (
	subscriberBuffer  = 512      // events buffered per subscriber before it is closed
	maxEventBytes     = 16 << 20 // largest single SSE event
	maxStreamFailures = 3        // consecutive failed connections before the hub stops (no prompt followed)
	// followPatience is how long the hub keeps trying to reconnect while it
	// follows prompts and nothing proved the server gone (a busy server on a
	// loaded machine can be slow to answer); then they are reported lost.
	followPatience     = 2 * time.Minute
	maxPendingPerSess  = 256 // queued receipts followed per session
	maxAssistantMemory = 64  // assistant message ids remembered per session

	minReconnectDelay = 250 * time.Millisecond
	maxReconnectDelay = 8 * time.Second
	stableStream      = 10 * time.Second // a stream that lasted this long resets the back-off
	// adoptedPoll is how often the stored messages of a session are read
	// again while a reply another process sent is followed (adopt): its
	// end may have been shown only before this process's stream opened.
	adoptedPoll = 5 * time.Second
)

// hub owns the adapter's single GET /global/event connection and fans its
// events out to subscribers per session. It also follows queued prompts to
// report their outcome. It runs only while something needs it: a
// subscriber, a prompt being sent, or a queued receipt.
type hub struct {
	a    *Adapter
	base context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu       sync.Mutex
	closing  bool
	running  bool
	att      *attempt
	holds    int
	subs     map[string]map[*subscriber]struct{}
	pending  map[string][]*pendingSend
	assist   map[string][]string // session → recent assistant message ids
	turnOf   map[string]string   // assistant message id → the user message (turn) it answers
	live     map[string]*liveState
	down     *serverDown // the server was found gone and not reached since
	lastBase string      // the endpoint of the last stream attempt

	catchingUp map[string]bool // sessions being reconciled
	// catchUpAgain marks sessions asked to reconcile while a catch-up was
	// already reading: that read may predate what prompted the request (a
	// reply that finished meanwhile), so one more runs after it.
	catchUpAgain map[string]bool
	polling      map[string]bool // sessions with a poll of their adopted replies scheduled
}

// liveState is what the stream last showed of one session.
type liveState struct {
	state providers.LivenessState
	at    time.Time
	perms map[string]bool // permission requests asked and not replied
}

// serverDown records that the server went away with prompts in flight.
type serverDown struct {
	at     time.Time
	reason string
}

// attempt is one connection of the event stream.
type attempt struct {
	connected chan struct{} // closed on server.connected
	done      chan struct{} // closed when the attempt ended
	cancel    context.CancelFunc
	idleStop  bool  // ended because nothing needed the stream any more
	err       error // why it ended; set before done is closed
	once      sync.Once
}

func newAttempt() *attempt {
	return &attempt{connected: make(chan struct{}), done: make(chan struct{}), cancel: func() {}}
}

func (at *attempt) markConnected() { at.once.Do(func() { close(at.connected) }) }

func (at *attempt) isConnected() bool {
	select {
	case <-at.connected:
		return true
	default:
		return false
	}
}

type subscriber struct {
	ch     chan providers.NativeEvent
	gone   chan struct{}
	closed bool
}

// pendingSend is a queued prompt whose outcome is being followed.
type pendingSend struct {
	ref      string
	text     string
	msgID    string // the user message of the turn (chosen by Send)
	ready    bool   // Send has returned the receipt
	resolved bool
	status   providers.ReceiptStatus
	reason   string
	// lost says the server went away while the turn ran: it was reported
	// delivery_unknown (or will be, once ready) and no longer keeps the
	// stream open, but a result observed later still settles it.
	lost       bool
	lostReason string
	reported   bool // the lost report went out
	adopted    bool // sent by another process; followed since a restart
}

func newHub(a *Adapter) *hub {
	ctx, cancel := context.WithCancel(context.Background())
	return &hub{
		a: a, base: ctx, stop: cancel,
		subs:    map[string]map[*subscriber]struct{}{},
		pending: map[string][]*pendingSend{},
		assist:  map[string][]string{},
		turnOf:  map[string]string{},
		live:    map[string]*liveState{},

		catchingUp:   map[string]bool{},
		catchUpAgain: map[string]bool{},
		polling:      map[string]bool{},
	}
}

func (h *hub) neededLocked() bool {
	if h.holds > 0 || len(h.subs) > 0 {
		return true
	}
	for _, list := range h.pending {
		for _, p := range list {
			if !p.resolved && !p.lost {
				return true
			}
		}
	}
	return false
}

// followingLocked reports whether a prompt's outcome is being followed.
func (h *hub) followingLocked() bool {
	for _, list := range h.pending {
		for _, p := range list {
			if !p.resolved && !p.lost {
				return true
			}
		}
	}
	return false
}

func (h *hub) ensureRunningLocked() {
	if h.running || h.closing {
		return
	}
	h.running = true
	h.att = newAttempt()
	h.wg.Add(1)
	go h.run()
}

// maybeStopLocked ends the connection when nothing needs it any more.
func (h *hub) maybeStopLocked() {
	if h.running && !h.neededLocked() && h.att != nil {
		h.att.idleStop = true
		h.att.cancel()
	}
}

// run connects, reads until the stream ends, and reconnects while needed.
func (h *hub) run() {
	defer h.wg.Done()
	failures := 0
	next := minReconnectDelay
	reached := h.a.clock.Now() // when the stream was last connected (or the hub started)
	for {
		h.mu.Lock()
		att := h.att
		ctx, cancel := context.WithCancel(h.base)
		att.cancel = cancel
		if att.idleStop || h.closing {
			cancel()
		}
		h.mu.Unlock()

		started := h.a.clock.Now()
		err := h.stream(ctx, cancel, att)
		cancel()
		lasted := h.a.clock.Now().Sub(started)

		h.mu.Lock()
		stopping := h.closing || att.idleStop
		base := h.lastBase
		h.mu.Unlock()
		// A stream that ended on its own: is the server still there? If
		// not, the turns it was running are gone with it.
		goneWhy := ""
		if !stopping && h.base.Err() == nil {
			goneWhy = h.a.serverGone(err, base)
		}

		h.mu.Lock()
		att.err = err
		h.closeSubsLocked()
		close(att.done)
		switch {
		case att.isConnected() && lasted >= stableStream:
			failures, next = 0, minReconnectDelay
		case att.isConnected():
			failures = 0 // connected but dropped quickly: keep backing off
		default:
			failures++
		}
		if att.isConnected() {
			reached = h.a.clock.Now()
		}
		var reports []report
		if goneWhy != "" {
			reports = h.loseLocked(goneWhy)
		}
		giveUp := failures >= maxStreamFailures
		if giveUp && h.followingLocked() && h.a.clock.Now().Sub(reached) < followPatience {
			giveUp = false // prompts are followed: keep trying, with back-off
		}
		if !h.closing && h.neededLocked() && giveUp {
			reports = append(reports, h.loseLocked(fmt.Sprintf("the OpenCode event stream could not be reopened for %s (%d attempts; %v)",
				h.a.clock.Now().Sub(reached).Round(time.Second), failures, err))...)
		}
		if h.closing || !h.neededLocked() || giveUp {
			h.running = false
			h.att = nil
			h.mu.Unlock()
			h.deliver(reports)
			return
		}
		h.att = newAttempt()
		h.mu.Unlock()
		h.deliver(reports)

		if !h.sleep(next) {
			h.mu.Lock()
			h.closeSubsLocked()
			h.running = false
			h.att = nil
			h.mu.Unlock()
			return
		}
		next = min(next*2, maxReconnectDelay)
	}
}

// sleep waits d on the adapter's clock; false when the hub is closing.
func (h *hub) sleep(d time.Duration) bool {
	fired := make(chan struct{})
	t := h.a.clock.AfterFunc(d, func() { close(fired) })
	defer t.Stop()
	select {
	case <-fired:
		return true
	case <-h.base.Done():
		return false
	}
}

// stream runs one connection of GET /global/event.
func (h *hub) stream(ctx context.Context, cancel context.CancelFunc, att *attempt) error {
	ep, err := h.a.current(ctx)
	if err != nil {
		return fmt.Errorf("event stream: %w", err)
	}
	h.mu.Lock()
	h.lastBase = ep.base
	h.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ep.base+"/global/event", nil)
	if err != nil {
		return fmt.Errorf("event stream: %w", err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	h.a.authorize(req)

	// Silence longer than HeartbeatTimeout (the server beats every 10 s)
	// means a dead connection: cancel it and let run reconnect.
	idle := h.a.clock.AfterFunc(h.a.cfg.HeartbeatTimeout, cancel)
	defer idle.Stop()

	resp, err := h.a.http.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			h.a.invalidate(ep)
		}
		return &connectFailure{base: ep.base, err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return fmt.Errorf("event stream: %w", newAPIError(http.MethodGet, "/global/event", resp.StatusCode, resp.Header.Get("Content-Type"), data, h.a.secrets()))
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return fmt.Errorf("event stream: GET /global/event answered %q, not text/event-stream (not an OpenCode server?)", resp.Header.Get("Content-Type"))
	}

	r := bufio.NewReaderSize(resp.Body, 64<<10)
	var data bytes.Buffer
	for {
		line, err := readLine(r, maxEventBytes)
		if err != nil {
			if ctx.Err() != nil {
				h.mu.Lock()
				stopped := att.idleStop
				h.mu.Unlock()
				if stopped || h.base.Err() != nil {
					return errors.New("event stream stopped")
				}
				return fmt.Errorf("event stream: no data for %s (missed heartbeats)", h.a.cfg.HeartbeatTimeout)
			}
			if errors.Is(err, io.EOF) {
				return errors.New("event stream: server closed the stream")
			}
			return fmt.Errorf("event stream: %w", err)
		}
		idle.Reset(h.a.cfg.HeartbeatTimeout)
		switch {
		case len(line) == 0:
			if data.Len() > 0 {
				h.dispatch(att, data.Bytes())
				data.Reset()
			}
		case bytes.HasPrefix(line, []byte("data:")):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.Write(bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" ")))
			if data.Len() > maxEventBytes {
				return fmt.Errorf("event stream: event larger than %d bytes", maxEventBytes)
			}
		}
		// Comments (":…"), "event:", "id:" and "retry:" lines carry nothing
		// OpenCode uses.
	}
}

// readLine reads one line without its line ending, failing beyond max bytes.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > limit {
			return nil, fmt.Errorf("line longer than %d bytes", limit)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return nil, err
		}
		return bytes.TrimRight(line, "\r\n"), nil
	}
}

// globalEvent is one /global/event message.
type globalEvent struct {
	Directory string          `json:"directory"`
	Payload   json.RawMessage `json:"payload"`
}

// eventPayload holds the fields used to attribute and follow an event.
type eventPayload struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionID"`
	Info      *struct {
		SessionID string `json:"sessionID"`
	} `json:"info"`
	Properties struct {
		SessionID string `json:"sessionID"`
		Info      *struct {
			ID        string          `json:"id"`
			SessionID string          `json:"sessionID"`
			Role      string          `json:"role"`
			ParentID  string          `json:"parentID"`
			Finish    string          `json:"finish"`
			Directory string          `json:"directory"`
			Error     json.RawMessage `json:"error"`
			Time      struct {
				Completed int64 `json:"completed"`
			} `json:"time"`
		} `json:"info"`
		Part *struct {
			SessionID string `json:"sessionID"`
			MessageID string `json:"messageID"`
			Type      string `json:"type"`
			Text      string `json:"text"`
		} `json:"part"`
		Status *struct {
			Type string `json:"type"`
		} `json:"status"`
		Error     json.RawMessage `json:"error"`
		ID        string          `json:"id"`        // permission.asked
		RequestID string          `json:"requestID"` // permission.replied
	} `json:"properties"`
}

// sessionOf attributes an event to a session (upstream AI-06): sessionID,
// then properties.sessionID, info.sessionID, properties.info.sessionID,
// properties.part.sessionID.
func (p *eventPayload) sessionOf() string {
	switch {
	case p.SessionID != "":
		return p.SessionID
	case p.Properties.SessionID != "":
		return p.Properties.SessionID
	case p.Info != nil && p.Info.SessionID != "":
		return p.Info.SessionID
	case p.Properties.Info != nil && p.Properties.Info.SessionID != "":
		return p.Properties.Info.SessionID
	case p.Properties.Part != nil && p.Properties.Part.SessionID != "":
		return p.Properties.Part.SessionID
	}
	return ""
}

// report is an outcome to pass to the host outside the hub's lock.
type report struct {
	nativeID, ref string
	status        providers.ReceiptStatus
	reason        string
}

// dispatch handles one event: connection markers, outcome tracking, fan-out.
func (h *hub) dispatch(att *attempt, raw []byte) {
	var ge globalEvent
	if json.Unmarshal(raw, &ge) != nil || len(ge.Payload) == 0 {
		return
	}
	var p eventPayload
	if json.Unmarshal(ge.Payload, &p) != nil {
		return
	}
	switch p.Type {
	case "server.connected":
		att.markConnected()
		h.mu.Lock()
		h.down = nil
		// Events may have been missed while disconnected: read the followed
		// sessions' messages once.
		h.reconcileLocked(h.followedLocked()...)
		h.mu.Unlock()
		return
	case "server.heartbeat", "sync":
		// Heartbeats only keep the idle timer alive; "sync" events replicate
		// the typed events already delivered.
		return
	}
	sid := p.sessionOf()
	if sid == "" {
		return // not about a session: dropped
	}
	if p.Properties.Info != nil && p.Properties.Info.Directory != "" && p.Properties.Info.ID == sid {
		h.a.rememberDir(sid, p.Properties.Info.Directory)
	} else if ge.Directory != "" && ge.Directory != "global" {
		h.a.rememberDir(sid, ge.Directory)
	}

	h.mu.Lock()
	now := h.a.clock.Now().UTC()
	h.observeLiveLocked(sid, &p, now)
	reports := h.observeLocked(sid, &p)
	if subs := h.subs[sid]; len(subs) > 0 {
		ev := providers.NativeEvent{
			NativeID:  sid,
			Timestamp: now,
			Type:      p.Type,
			Data:      append(json.RawMessage(nil), ge.Payload...),
			TurnID:    h.turnOfLocked(&p),
		}
		for s := range subs {
			select {
			case s.ch <- ev:
			default:
				// A reader that falls this far behind gets its channel
				// closed; the registry reopens it as a new epoch.
				h.removeSubLocked(sid, s)
			}
		}
	}
	h.maybeStopLocked()
	h.mu.Unlock()
	h.deliver(reports)
}

func (h *hub) deliver(reports []report) {
	if h.a.host == nil {
		return
	}
	for _, r := range reports {
		h.a.host.ReportOutcome(providers.OpenCode, r.nativeID, r.ref, r.status, r.reason)
	}
}

// observeLocked follows queued prompts of session sid through the event.
func (h *hub) observeLocked(sid string, p *eventPayload) []report {
	list := h.pending[sid]
	if len(list) == 0 {
		return nil
	}
	var out []report
	props := &p.Properties
	switch p.Type {
	case "message.updated":
		info := props.Info
		if info == nil || info.Role != "assistant" {
			return nil
		}
		h.rememberAssistantLocked(sid, info.ID, info.ParentID)
		for _, ps := range list {
			if ps.resolved || ps.msgID == "" || ps.msgID != info.ParentID {
				continue
			}
			switch {
			case len(info.Error) > 0 && string(info.Error) != "null":
				out = h.resolveLocked(sid, ps, providers.StatusRejected, errorReason(info.Error), out)
			case info.Time.Completed > 0 && info.Finish != "" && info.Finish != "tool-calls":
				out = h.resolveLocked(sid, ps, providers.StatusCompleted, "", out)
			}
		}
	case "message.part.updated":
		part := props.Part
		if part == nil || part.Type != "text" || part.MessageID == "" || h.isAssistantLocked(sid, part.MessageID) {
			return nil
		}
		for _, ps := range list {
			if ps.msgID == part.MessageID {
				return nil // already attached
			}
		}
		for _, ps := range list { // a prompt sent without its own message id
			if !ps.resolved && ps.msgID == "" && ps.text == part.Text {
				ps.msgID = part.MessageID
				break
			}
		}
	case "session.error", "session.idle", "session.status":
		if p.Type == "session.status" && (props.Status == nil || props.Status.Type != "idle") {
			return nil
		}
		// Neither event names the prompt it concerns: an idle or an error
		// of the previous turn can arrive after the next prompt's user
		// message. So nothing is settled from them directly; the session's
		// stored messages are read instead, and a prompt is completed only
		// when an assistant message answering it finished (or rejected when
		// that answer failed). A prompt OpenCode stored but never ran stays
		// queued: accepted is never reported as completed.
		for _, ps := range list {
			if !ps.resolved {
				h.reconcileLocked(sid)
				break
			}
		}
	}
	return out
}

// errorReason renders an OpenCode error object as "<name>: <message>".
func errorReason(raw json.RawMessage) string {
	name, msg, ok := describeError(raw)
	if !ok {
		return "OpenCode reported an error"
	}
	msg = redact(msg, nil)
	if name == "" {
		return msg
	}
	if msg == "" {
		return name
	}
	return name + ": " + msg
}

// resolveLocked settles a queued prompt; the report waits until Send has
// returned the receipt.
func (h *hub) resolveLocked(sid string, ps *pendingSend, status providers.ReceiptStatus, reason string, out []report) []report {
	ps.resolved, ps.status, ps.reason = true, status, reason
	if !ps.ready {
		return out
	}
	h.removePendingLocked(sid, ps)
	return append(out, report{nativeID: sid, ref: ps.ref, status: status, reason: reason})
}

// loseLocked gives up every prompt still running: the server that ran them
// is gone, so each is reported delivery_unknown with reason (once its
// receipt is out) and no longer holds the stream open. A result observed
// later still settles it.
func (h *hub) loseLocked(reason string) []report {
	var out []report
	now := h.a.clock.Now().UTC()
	lostSome := false
	for sid, list := range h.pending {
		for _, ps := range list {
			if ps.resolved || ps.lost {
				continue
			}
			lostSome = true
			ps.lost, ps.lostReason = true, reason+"; the turn had not finished and may have run in part; it is not resent"
			if ps.ready {
				ps.reported = true
				out = append(out, report{nativeID: sid, ref: ps.ref, status: providers.StatusDeliveryUnknown, reason: ps.lostReason})
			}
		}
	}
	if lostSome || h.down == nil {
		h.down = &serverDown{at: now, reason: reason}
	}
	if rep, ok := h.a.host.(providers.EventReporter); ok {
		for sid := range out2sessions(out) {
			data, _ := json.Marshal(map[string]any{"reason": reason, "resent": false})
			go rep.ReportEvent(providers.OpenCode, providers.NativeEvent{NativeID: sid, Timestamp: now, Type: providers.EventProviderRestarted, Data: data})
		}
	}
	return out
}

func out2sessions(rs []report) map[string]bool {
	m := map[string]bool{}
	for _, r := range rs {
		m[r.nativeID] = true
	}
	return m
}

// lose is loseLocked for callers outside the hub's lock.
func (h *hub) lose(reason string) {
	h.mu.Lock()
	reports := h.loseLocked(reason)
	h.mu.Unlock()
	h.deliver(reports)
}

// adopt follows a turn a previous runtime process started (settlement of
// an operation whose owner is gone): its outcome is reported with ref.
func (h *hub) adopt(sid, ref, msgID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		return false
	}
	for _, ps := range h.pending[sid] {
		if ps.msgID == msgID {
			return true // followed already
		}
	}
	h.ensureRunningLocked()
	h.pending[sid] = append(h.pending[sid], &pendingSend{ref: ref, msgID: msgID, ready: true, adopted: true})
	h.reconcileLocked(sid)
	return true
}

// pollAdoptedLocked reads sid's stored messages again after adoptedPoll
// while a reply it adopted has no outcome, so that outcome is settled even
// if none of its events reached this process.
func (h *hub) pollAdoptedLocked(sid string) {
	adopted := false
	for _, ps := range h.pending[sid] {
		adopted = adopted || (ps.adopted && !ps.resolved && !ps.lost)
	}
	if !adopted || h.closing || h.polling[sid] {
		return
	}
	h.polling[sid] = true
	h.a.clock.AfterFunc(adoptedPoll, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.polling, sid)
		h.reconcileLocked(sid)
	}, "adopted-poll")
}

// liveness answers Adapter.Liveness from what the stream showed.
func (h *hub) liveness(sid string) providers.Liveness {
	h.mu.Lock()
	defer h.mu.Unlock()
	l := h.live[sid]
	if d := h.down; d != nil && (l == nil || !l.at.After(d.at)) {
		at := d.at
		return providers.Liveness{State: providers.LiveDead, ObservedAt: &at, Reason: d.reason}
	}
	running := false
	var since time.Time
	for _, ps := range h.pending[sid] {
		if !ps.resolved && !ps.lost {
			running = true
		}
	}
	if l == nil {
		if running {
			return providers.Liveness{State: providers.LiveWorking, Reason: "a prompt sent by this runtime is running"}
		}
		return providers.Liveness{State: providers.LiveUnknown}
	}
	since = l.at
	switch {
	case len(l.perms) > 0:
		return providers.Liveness{State: providers.LiveWaitingOnApproval, ObservedAt: &since, Reason: "a permission request is waiting for respond_to_permission"}
	case running && l.state != providers.LiveWorking:
		return providers.Liveness{State: providers.LiveWorking, ObservedAt: &since}
	}
	return providers.Liveness{State: l.state, ObservedAt: &since}
}

func (h *hub) removePendingLocked(sid string, ps *pendingSend) {
	list := h.pending[sid]
	for i, x := range list {
		if x == ps {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(h.pending, sid)
		delete(h.assist, sid)
		return
	}
	h.pending[sid] = list
}

func (h *hub) rememberAssistantLocked(sid, id, parent string) {
	if id == "" {
		return
	}
	if parent != "" {
		if len(h.turnOf) > 4*maxAssistantMemory*maxPendingPerSess {
			h.turnOf = map[string]string{}
		}
		h.turnOf[id] = parent
	}
	if h.isAssistantLocked(sid, id) {
		return
	}
	ids := append(h.assist[sid], id)
	if len(ids) > maxAssistantMemory {
		ids = ids[len(ids)-maxAssistantMemory:]
	}
	h.assist[sid] = ids
}

// turnOfLocked names the turn (the user message id) an event belongs to,
// when the event says: a user message, an assistant message (its parent),
// or a part of either.
func (h *hub) turnOfLocked(p *eventPayload) string {
	props := &p.Properties
	if info := props.Info; info != nil && strings.HasPrefix(info.ID, "msg") {
		if info.Role == "user" {
			return info.ID
		}
		if info.ParentID != "" {
			return info.ParentID
		}
	}
	if part := props.Part; part != nil && part.MessageID != "" {
		if t, ok := h.turnOf[part.MessageID]; ok {
			return t
		}
		if !h.isAssistantLocked(p.sessionOf(), part.MessageID) {
			return part.MessageID // a part of the user message itself
		}
	}
	return ""
}

// observeLiveLocked updates what the stream shows of a session's state.
func (h *hub) observeLiveLocked(sid string, p *eventPayload, now time.Time) {
	l := h.live[sid]
	if l == nil {
		if len(h.live) > 10000 {
			h.live = map[string]*liveState{}
		}
		l = &liveState{state: providers.LiveUnknown, perms: map[string]bool{}}
		h.live[sid] = l
	}
	l.at = now
	props := &p.Properties
	switch p.Type {
	case "session.status":
		if props.Status != nil {
			if props.Status.Type == "idle" {
				l.state = providers.LiveIdle
			} else {
				l.state = providers.LiveWorking
			}
		}
	case "session.idle":
		l.state = providers.LiveIdle
	case "permission.asked", "permission.v2.asked":
		if props.ID != "" {
			l.perms[props.ID] = true
		}
	case "permission.replied", "permission.v2.replied":
		delete(l.perms, props.RequestID)
	case "message.updated", "message.part.updated", "message.part.delta":
		if l.state != providers.LiveIdle || p.Type != "message.updated" {
			l.state = providers.LiveWorking
		}
	}
}

func (h *hub) isAssistantLocked(sid, id string) bool {
	for _, x := range h.assist[sid] {
		if x == id {
			return true
		}
	}
	return false
}

// hold keeps the stream running while a prompt is sent and reports whether
// it is connected. It waits at most the request timeout for the connection.
func (h *hub) hold(ctx context.Context) (bool, func()) {
	h.mu.Lock()
	if h.closing {
		h.mu.Unlock()
		return false, func() {}
	}
	h.holds++
	h.ensureRunningLocked()
	att := h.att
	h.mu.Unlock()
	release := func() {
		h.mu.Lock()
		h.holds--
		h.maybeStopLocked()
		h.mu.Unlock()
	}
	return h.waitConnected(ctx, att, h.a.cfg.RequestTimeout), release
}

// waitConnected waits for att to connect, for at most d.
func (h *hub) waitConnected(ctx context.Context, att *attempt, d time.Duration) bool {
	if att == nil {
		return false
	}
	expired := make(chan struct{})
	t := h.a.clock.AfterFunc(d, func() { close(expired) })
	defer t.Stop()
	select {
	case <-att.connected:
		return true
	case <-att.done:
		return att.isConnected()
	case <-ctx.Done():
	case <-expired:
	}
	return false
}

// track starts following a prompt about to be sent; false when the hub is
// closing.
func (h *hub) track(sid, ref, text, msgID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		return false
	}
	h.ensureRunningLocked()
	list := h.pending[sid]
	var dropped []report
	if len(list) >= maxPendingPerSess {
		old := list[0]
		list = list[1:]
		if old.ready && !old.resolved && !old.reported {
			dropped = append(dropped, report{nativeID: sid, ref: old.ref, status: providers.StatusDeliveryUnknown,
				reason: fmt.Sprintf("more than %d prompts of this session were in flight; this runtime stopped following the oldest, whose result was not observed", maxPendingPerSess)})
		}
	}
	h.pending[sid] = append(list, &pendingSend{ref: ref, text: text, msgID: msgID})
	if l := h.live[sid]; l != nil {
		l.state = providers.LiveWorking
	}
	if len(dropped) > 0 {
		go h.deliver(dropped)
	}
	return true
}

// untrack forgets a prompt that was not accepted.
func (h *hub) untrack(sid, ref string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ps := range h.pending[sid] {
		if ps.ref == ref {
			h.removePendingLocked(sid, ps)
			break
		}
	}
	h.maybeStopLocked()
}

// ready marks the receipt as returned; an outcome seen meanwhile is
// reported now.
func (h *hub) ready(sid, ref string) {
	h.mu.Lock()
	var out []report
	for _, ps := range h.pending[sid] {
		if ps.ref == ref {
			ps.ready = true
			switch {
			case ps.resolved:
				h.removePendingLocked(sid, ps)
				out = append(out, report{nativeID: sid, ref: ref, status: ps.status, reason: ps.reason})
			case ps.lost && !ps.reported:
				ps.reported = true
				out = append(out, report{nativeID: sid, ref: ref, status: providers.StatusDeliveryUnknown, reason: ps.lostReason})
			}
			break
		}
	}
	h.maybeStopLocked()
	h.mu.Unlock()
	if len(out) > 0 {
		// Reported from another goroutine so the caller of Send holds the
		// receipt before its outcome arrives.
		go h.deliver(out)
	}
}

// subscribe adds a subscriber for sid and waits until the stream is
// connected.
func (h *hub) subscribe(ctx context.Context, sid string) (<-chan providers.NativeEvent, error) {
	for try := 0; try < 3; try++ {
		h.mu.Lock()
		if h.closing {
			h.mu.Unlock()
			return nil, errClosed
		}
		s := &subscriber{ch: make(chan providers.NativeEvent, subscriberBuffer), gone: make(chan struct{})}
		if h.subs[sid] == nil {
			h.subs[sid] = map[*subscriber]struct{}{}
		}
		h.subs[sid][s] = struct{}{}
		h.ensureRunningLocked()
		att := h.att
		h.mu.Unlock()

		if h.waitConnected(ctx, att, h.a.cfg.RequestTimeout) {
			go h.watch(ctx, sid, s)
			return s.ch, nil
		}
		h.mu.Lock()
		h.removeSubLocked(sid, s)
		h.maybeStopLocked()
		retry := att != nil && att.idleStop && ctx.Err() == nil
		var err error
		select {
		case <-att.done:
			err = att.err
		default:
			err = errors.New("event stream did not connect in time")
		}
		h.mu.Unlock()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("subscribing to OpenCode session %s: %w", sid, ctx.Err())
		}
		if !retry {
			return nil, fmt.Errorf("subscribing to OpenCode session %s: %w", sid, err)
		}
	}
	return nil, fmt.Errorf("subscribing to OpenCode session %s: event stream kept stopping", sid)
}

// watch removes the subscriber when its context ends.
func (h *hub) watch(ctx context.Context, sid string, s *subscriber) {
	select {
	case <-ctx.Done():
		h.mu.Lock()
		h.removeSubLocked(sid, s)
		h.maybeStopLocked()
		h.mu.Unlock()
	case <-s.gone:
	}
}

func (h *hub) removeSubLocked(sid string, s *subscriber) {
	if s.closed {
		return
	}
	s.closed = true
	close(s.ch)
	close(s.gone)
	delete(h.subs[sid], s)
	if len(h.subs[sid]) == 0 {
		delete(h.subs, sid)
	}
}

// closeSubsLocked ends every subscription (the stream ended).
func (h *hub) closeSubsLocked() {
	for sid, set := range h.subs {
		for s := range set {
			h.removeSubLocked(sid, s)
		}
	}
}

// close stops the stream and ends every subscription.
func (h *hub) close() {
	h.mu.Lock()
	h.closing = true
	h.stop()
	if h.att != nil {
		h.att.cancel()
	}
	h.mu.Unlock()
	h.wg.Wait()
	h.mu.Lock()
	h.closeSubsLocked()
	h.mu.Unlock()
}

// ocTurnMessage is one entry of GET /session/:id/message, as reconcile
// reads it.
type ocTurnMessage struct {
	Info struct {
		ID       string          `json:"id"`
		Role     string          `json:"role"`
		ParentID string          `json:"parentID"`
		Finish   string          `json:"finish"`
		Error    json.RawMessage `json:"error"`
		Time     struct {
			Created   int64 `json:"created"`
			Completed int64 `json:"completed"`
		} `json:"time"`
	} `json:"info"`
	Parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"parts"`
}

// followedLocked lists the sessions with unsettled prompts.
func (h *hub) followedLocked() []string {
	var sids []string
	for sid, list := range h.pending {
		for _, ps := range list {
			if !ps.resolved {
				sids = append(sids, sid)
				break
			}
		}
	}
	return sids
}

// unresolvedLocked reports whether a followed prompt of sid has no outcome
// yet.
func (h *hub) unresolvedLocked(sid string) bool {
	for _, ps := range h.pending[sid] {
		if !ps.resolved {
			return true
		}
	}
	return false
}

// reconcileLocked starts catching up the given sessions from their stored
// messages, at most one catch-up per session at a time; a request made
// while one runs makes one more run after it.
func (h *hub) reconcileLocked(sids ...string) {
	for _, sid := range sids {
		if h.closing {
			continue
		}
		if h.catchingUp[sid] {
			h.catchUpAgain[sid] = true
			continue
		}
		h.catchingUp[sid] = true
		h.wg.Add(1)
		go h.reconcile(sid)
	}
}

// reconcile settles the session's followed prompts from its stored
// messages: for outcomes whose events were missed (stream down, or the
// prompt's own events seen before it was attached).
func (h *hub) reconcile(sid string) {
	defer h.wg.Done()
	ctx, cancel := context.WithTimeout(h.base, h.a.cfg.RequestTimeout)
	defer cancel()
	var msgs []ocTurnMessage
	dir, err := h.a.sessionDir(ctx, sid)
	if err == nil {
		_, err = h.a.read(ctx, request{method: http.MethodGet, path: sessionPath(sid, "/message"), query: dirQuery(dir), out: &msgs})
	}
	h.mu.Lock()
	delete(h.catchingUp, sid)
	var reports []report
	if err == nil { // on error the events will tell, or the receipt stays queued
		reports = h.settleFromMessagesLocked(sid, msgs)
	}
	if h.catchUpAgain[sid] {
		delete(h.catchUpAgain, sid)
		if h.unresolvedLocked(sid) {
			h.reconcileLocked(sid)
		}
	}
	h.pollAdoptedLocked(sid)
	h.maybeStopLocked()
	h.mu.Unlock()
	h.deliver(reports)
}

func (h *hub) settleFromMessagesLocked(sid string, msgs []ocTurnMessage) []report {
	var out []report
	attached := map[string]bool{}
	for _, ps := range h.pending[sid] {
		if ps.msgID != "" {
			attached[ps.msgID] = true
		}
	}
	for _, ps := range append([]*pendingSend(nil), h.pending[sid]...) {
		if ps.resolved {
			continue
		}
		if ps.msgID == "" {
			for _, m := range msgs {
				if m.Info.Role != "user" || attached[m.Info.ID] {
					continue
				}
				for _, p := range m.Parts {
					if p.Type == "text" && p.Text == ps.text {
						ps.msgID = m.Info.ID
						attached[m.Info.ID] = true
						break
					}
				}
				if ps.msgID != "" {
					break
				}
			}
			if ps.msgID == "" {
				continue
			}
		}
		var last *ocTurnMessage
		for i := range msgs {
			m := &msgs[i]
			if m.Info.Role != "assistant" || m.Info.ParentID != ps.msgID {
				continue
			}
			if len(m.Info.Error) > 0 && string(m.Info.Error) != "null" {
				out = h.resolveLocked(sid, ps, providers.StatusRejected, errorReason(m.Info.Error), out)
				last = nil
				break
			}
			last = m
		}
		if !ps.resolved && last != nil && last.Info.Time.Completed > 0 && last.Info.Finish != "" && last.Info.Finish != "tool-calls" {
			out = h.resolveLocked(sid, ps, providers.StatusCompleted, "", out)
		}
	}
	return out
}
