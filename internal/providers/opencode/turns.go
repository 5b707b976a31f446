package opencode

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agent-interop/runtime/internal/clockctx"
	"github.com/agent-interop/runtime/internal/providers"
)

// This file is what the adapter knows of turns beyond one prompt: the
// message ids it gives its prompts, whether the server it talked to is
// still there, a session's liveness, and the lookup of a turn another
// runtime process started.

var (
	_ providers.TurnLookup       = (*Adapter)(nil)
	_ providers.LivenessReporter = (*Adapter)(nil)
)

// messageIDs makes OpenCode-shaped ascending message ids: "msg_", 12 hex
// digits of (unix ms × 0x1000 + counter) and 14 random base62 characters,
// as OpenCode's own Identifier.ascending does, so a prompt's user message
// sorts after every message before it. Send passes it as prompt_async's
// messageID: the receipt names the turn before the server answers.
type messageIDs struct {
	mu      sync.Mutex
	lastMS  int64
	counter int64
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func (g *messageIDs) next(now time.Time) string {
	g.mu.Lock()
	ms := now.UnixMilli()
	if ms <= g.lastMS {
		ms = g.lastMS
		g.counter++
	} else {
		g.lastMS, g.counter = ms, 0
	}
	v := uint64(ms)*0x1000 + uint64(g.counter)
	g.mu.Unlock()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	var r [14]byte
	_, _ = rand.Read(r[:])
	tail := make([]byte, len(r))
	for i, c := range r {
		tail[i] = base62[int(c)%len(base62)]
	}
	return "msg_" + hex.EncodeToString(b[2:]) + string(tail)
}

// connectFailure is a stream attempt that did not reach the server.
type connectFailure struct {
	base string
	err  error
}

func (e *connectFailure) Error() string {
	return fmt.Sprintf("event stream: connecting to %s: %v", e.base, e.err)
}

func (e *connectFailure) Unwrap() error { return e.err }

// serverGone says, after the event stream ended on its own, whether the
// server it came from went away (and why), so the turns it ran are known to
// be lost: the server refuses connections now. "" means it is still there,
// or that nothing proves otherwise (a slow answer is not a dead server; if
// the stream cannot be reopened the hub gives up with its own reason).
func (a *Adapter) serverGone(streamErr error, base string) string {
	var cf *connectFailure
	switch {
	case errors.As(streamErr, &cf) && refused(cf.err):
		return fmt.Sprintf("the OpenCode server at %s stopped answering (%v)", cf.base, cf.err)
	case errors.As(streamErr, &cf):
		return ""
	case base == "":
		return ""
	}
	// Only a refused connection is evidence: a slow answer from a busy
	// server is not a dead one.
	ctx, cancel := clockctx.WithTimeout(context.Background(), a.clock, a.cfg.RequestTimeout, "opencode", "server-gone")
	defer cancel()
	if _, err := a.probeWithin(ctx, base, a.cfg.RequestTimeout); err != nil && refused(err) {
		return fmt.Sprintf("the OpenCode server at %s stopped answering (%v)", base, err)
	}
	return ""
}

// refused reports a connection the server's host refused (nothing listens
// on the port any more).
func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}

// managedExited runs when a server this adapter started exits. Unless the
// adapter stopped it, the turns it ran are lost.
func (a *Adapter) managedExited(m *managedServer) {
	if a.closed.Load() || m.stopping.Load() {
		return
	}
	a.hub.lose(fmt.Sprintf("the OpenCode server this runtime started (pid %d, %s) exited (%v)", m.proc.PID(), m.base, m.proc.State()))
}

// Liveness implements providers.LivenessReporter from the event stream:
// waiting_on_approval while a permission request of the session is
// unanswered, working while a turn runs, idle after session.idle, dead when
// the server went away and was not reached since.
func (a *Adapter) Liveness(nativeID string) providers.Liveness {
	return a.hub.liveness(nativeID)
}

// LookupTurn implements providers.TurnLookup with the session's stored
// messages: the prompt is the user message with the recorded id (or, when
// the previous process stopped before it recorded one, the first user
// message after the send whose text has the recorded hash). A finished
// reply is completed, a failed one rejected. A reply still running on a
// server that is up is adopted: this adapter follows it and reports its
// outcome with q.Ref (or a new ref it returns).
func (a *Adapter) LookupTurn(ctx context.Context, q providers.TurnQuery) (providers.TurnRecord, error) {
	rec := providers.TurnRecord{Source: "OpenCode GET /session/" + q.NativeID + "/message"}
	dir, err := a.sessionDir(ctx, q.NativeID)
	if err != nil {
		return rec, err
	}
	var msgs []ocTurnMessage
	if _, err := a.read(ctx, request{method: http.MethodGet, path: sessionPath(q.NativeID, "/message"), query: dirQuery(dir), out: &msgs}); err != nil {
		return rec, err
	}
	user := findPrompt(msgs, q)
	if user == "" {
		return rec, nil
	}
	rec.Found, rec.NativeTurnID = true, user
	status, reason, done := turnResult(msgs, user)
	if done {
		rec.Status, rec.Reason = status, reason
		return rec, nil
	}
	var statuses map[string]struct {
		Type string `json:"type"`
	}
	if _, err := a.read(ctx, request{method: http.MethodGet, path: "/session/status", query: dirQuery(dir), out: &statuses}); err == nil {
		if st, ok := statuses[q.NativeID]; ok && st.Type != "idle" {
			ref := q.Ref
			if ref == "" {
				ref = newRef()
			}
			if a.hub.adopt(q.NativeID, ref, user) {
				rec.Following, rec.Ref = true, ref
				rec.Reason = "the reply is still running; this runtime follows it now"
				return rec, nil
			}
		}
	}
	rec.Reason = "the reply has no result and the session is not running it any more"
	return rec, nil
}

// findPrompt returns the id of the user message the query names.
func findPrompt(msgs []ocTurnMessage, q providers.TurnQuery) string {
	for _, m := range msgs {
		if m.Info.Role == "user" && q.NativeTurnID != "" && m.Info.ID == q.NativeTurnID {
			return m.Info.ID
		}
	}
	if q.TextSHA256 == "" {
		return ""
	}
	after := q.SentAfter.Add(-2 * time.Second).UnixMilli() // clock skew between processes
	for _, m := range msgs {
		if m.Info.Role != "user" || m.Info.Time.Created < after {
			continue
		}
		var text strings.Builder
		for _, p := range m.Parts {
			if p.Type == "text" {
				text.WriteString(p.Text)
			}
		}
		if q.Matches(text.String()) {
			return m.Info.ID
		}
	}
	return ""
}

// turnResult reads the reply to the user message user: rejected when an
// assistant answer failed, completed when the last one finished.
func turnResult(msgs []ocTurnMessage, user string) (providers.ReceiptStatus, string, bool) {
	var last *ocTurnMessage
	for i := range msgs {
		m := &msgs[i]
		if m.Info.Role != "assistant" || m.Info.ParentID != user {
			continue
		}
		if len(m.Info.Error) > 0 && string(m.Info.Error) != "null" {
			return providers.StatusRejected, errorReason(m.Info.Error), true
		}
		last = m
	}
	if last != nil && last.Info.Time.Completed > 0 && last.Info.Finish != "" && last.Info.Finish != "tool-calls" {
		return providers.StatusCompleted, "finish: " + last.Info.Finish, true
	}
	return "", "", false
}
