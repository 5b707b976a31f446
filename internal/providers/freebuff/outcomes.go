package freebuff

import (
	"strconv"
	"strings"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
	"github.com/agent-interop/runtime/internal/providers/freebuff/desktop"
)

// OutcomeFunc receives the observed outcome of a send whose receipt carried
// ref: completed when the turn it started finished, rejected when that turn
// ended in error.
// turn is what was observed of the turn (nil when nothing was).
type OutcomeFunc func(threadID, ref string, status providers.ReceiptStatus, reason string, turn *providers.TurnResult)

// cliPollInterval is how often a managed CLI's history is checked for the
// end of a turn.
const cliPollInterval = time.Second

// maxOutcomeWait bounds how long a CLI send is tracked.
const maxOutcomeWait = 2 * time.Hour

// OnOutcome registers fn to be told when sends complete. Only sends made
// after the call are tracked.
func (s *Service) OnOutcome(fn OutcomeFunc) {
	s.hookMu.Lock()
	s.outcome = fn
	s.hookMu.Unlock()
}

func (s *Service) hook() OutcomeFunc {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	return s.outcome
}

// expect registers a Desktop send before it is written, so that a turn that
// ends before the HTTP answer arrives is not missed. It returns the ref the
// receipt will carry.
func (s *Service) expect(threadID string, baseline int64) *pendingTurn {
	p := &pendingTurn{ref: "desktop:" + threadID + ":" + strconv.FormatInt(s.refs.Add(1), 10), baseline: baseline}
	if s.hook() == nil {
		return p
	}
	s.hookMu.Lock()
	s.pending[threadID] = append(s.pending[threadID], p)
	s.hookMu.Unlock()
	return p
}

// settle is called when the send returned: a failed send is forgotten; an
// accepted one whose turn already ended is reported now.
func (s *Service) settle(threadID string, p *pendingTurn, accepted bool) {
	s.hookMu.Lock()
	if !accepted {
		s.dropPendingLocked(threadID, p)
		s.hookMu.Unlock()
		return
	}
	p.accepted = true
	resolved, status, reason, turn := p.resolved, p.status, p.reason, p.turn
	if resolved {
		s.dropPendingLocked(threadID, p)
	}
	fn := s.outcome
	s.hookMu.Unlock()
	if resolved && fn != nil {
		// After the receipt is returned to the caller.
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			fn(threadID, p.ref, status, reason, turn)
		}()
	}
}

func (s *Service) dropPendingLocked(threadID string, p *pendingTurn) {
	list := s.pending[threadID]
	out := list[:0]
	for _, q := range list {
		if q != p {
			out = append(out, q)
		}
	}
	if len(out) == 0 {
		delete(s.pending, threadID)
	} else {
		s.pending[threadID] = out
	}
}

// trackCLI watches the CLI history for the end of the turn a send started.
func (s *Service) trackCLI(threadID string, r providers.Receipt) {
	if s.hook() == nil || r.Ref == "" {
		return
	}
	parts := strings.Split(r.Ref, ":")
	if len(parts) != 3 {
		return
	}
	key := parts[1]
	base, _ := strconv.Atoi(parts[2])
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.watchCLI(threadID, r.Ref, key, base)
	}()
}

// turnEnded resolves the Desktop sends a finished turn answers.
func (s *Service) turnEnded(te desktop.TurnEnd) {
	status, reason := providers.StatusCompleted, ""
	if te.Outcome == "error" {
		status, reason = providers.StatusRejected, te.Error
		if reason == "" {
			reason = "The Freebuff turn ended with an error"
		}
	}
	s.hookMu.Lock()
	fn := s.outcome
	var report []*pendingTurn
	for _, p := range append([]*pendingTurn(nil), s.pending[te.ThreadID]...) {
		if p.resolved || te.FinishedAt <= p.baseline {
			continue
		}
		p.resolved, p.status, p.reason, p.turn = true, status, reason, te.Turn
		if p.accepted {
			report = append(report, p)
			s.dropPendingLocked(te.ThreadID, p)
		}
	}
	s.hookMu.Unlock()
	if fn == nil {
		return
	}
	for _, p := range report {
		fn(te.ThreadID, p.ref, status, reason, te.Turn)
	}
}

// watchCLI polls the CLI history until the turn a send started has logged
// "Main prompt finished", the session ends, or the service closes.
func (s *Service) watchCLI(threadID, ref, key string, baseline int) {
	start := s.cfg.Clock.Now()
	for {
		if !core.Sleep(s.cfg.Clock, cliPollInterval, s.closeCh) {
			return
		}
		_, finished, alive := s.cli.FinishedTurns(key)
		if finished > baseline {
			if fn := s.hook(); fn != nil {
				// The CLI's history says only that the turn finished.
				fn(threadID, ref, providers.StatusCompleted, "", nil)
			}
			return
		}
		if !alive || s.cfg.Clock.Now().Sub(start) > maxOutcomeWait {
			return
		}
	}
}
