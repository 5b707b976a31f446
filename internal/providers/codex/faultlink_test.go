package codex_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/agent-interop/runtime/internal/providers/codex"
)

// faultKind is a transport fault applied to one request.
type faultKind int

const (
	faultNone faultKind = iota
	// faultCut cuts the connection right after the request was written.
	faultCut
	// faultDrop drops the answer to the request.
	faultDrop
	// faultDelay delivers the answer only after the caller's timeout.
	faultDelay
	// faultKill kills the app-server process group right after the write.
	faultKill
)

func (k faultKind) String() string {
	return [...]string{"none", "cut", "drop", "delay", "kill"}[k]
}

var errCut = errors.New("fault injection: connection cut")

// faultHub is a fault-injecting transport between the adapter and ONE real
// app-server process. The adapter dials virtual links from it; a cut ends
// the current link (the adapter sees its connection lost and dials again)
// while the process keeps running, so a thousand faults cost no restart.
// Every turn/start written is counted by its text, at the transport.
type faultHub struct {
	plan func(text string) faultKind
	// written is called once a dropped or delayed turn/start was written:
	// the test then stops waiting for its answer (its caller gives up).
	written func(text string, kind faultKind)

	mu      sync.Mutex
	proc    *codex.Link
	cur     *vlink
	answers map[int64]faultKind // request id -> fault for its answer
	texts   map[int64]string    // request id -> text of a faulted turn/start
	held    map[string][]byte   // text -> delayed answer, until released
	starts  map[string]int      // turn/start texts written
	applied map[faultKind]int
	procs   []*codex.Link
	wmu     sync.Mutex // one writer on the process's stdin at a time
	wg      sync.WaitGroup
	closed  bool
}

func newFaultHub(plan func(string) faultKind, written func(string, faultKind)) *faultHub {
	return &faultHub{plan: plan, written: written, answers: map[int64]faultKind{}, texts: map[int64]string{},
		held: map[string][]byte{}, starts: map[string]int{}, applied: map[faultKind]int{}}
}

// release delivers the held answer of a delayed turn/start, after its
// caller stopped waiting: an answer nobody waits for any more.
func (h *faultHub) release(text string) {
	h.mu.Lock()
	line, ok := h.held[text]
	delete(h.held, text)
	cur := h.cur
	h.mu.Unlock()
	if ok && cur != nil {
		cur.deliver(line)
	}
}

// vlink is one virtual connection.
type vlink struct {
	hub    *faultHub
	r      *io.PipeReader
	w      *io.PipeWriter
	wmu    sync.Mutex
	cut    atomic.Bool
	closed chan struct{}
	once   sync.Once
}

// Dial implements codex.Dialer.
func (h *faultHub) Dial(ctx context.Context, spec codex.ProcessSpec) (*codex.Link, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errors.New("fault hub closed")
	}
	if h.proc == nil || exited(h.proc) {
		link, err := codex.StartProcess(ctx, spec)
		if err != nil {
			return nil, err
		}
		h.proc = link
		h.procs = append(h.procs, link)
		h.wg.Add(1)
		go h.pump(link)
	}
	if h.cur != nil {
		h.cur.cutNow()
	}
	pr, pw := io.Pipe()
	v := &vlink{hub: h, r: pr, w: pw, closed: make(chan struct{})}
	h.cur = v
	proc := h.proc
	return &codex.Link{ReadWriteCloser: v, PID: proc.PID, Exited: proc.Exited, ExitReason: proc.ExitReason}, nil
}

func exited(l *codex.Link) bool {
	select {
	case <-l.Exited:
		return true
	default:
		return false
	}
}

// pump forwards the process's output to the current link, applying the
// answer faults.
func (h *faultHub) pump(proc *codex.Link) {
	defer h.wg.Done()
	r := bufio.NewReaderSize(proc, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			h.route(proc, line)
		}
		if err != nil {
			h.mu.Lock()
			if (h.proc == proc || h.proc == nil) && h.cur != nil {
				h.cur.cutWith(io.ErrUnexpectedEOF)
			}
			h.mu.Unlock()
			return
		}
	}
}

func (h *faultHub) route(proc *codex.Link, line []byte) {
	h.mu.Lock()
	stale := h.proc != proc
	h.mu.Unlock()
	if stale {
		return // output of a killed process
	}
	var m struct {
		ID     *int64 `json:"id"`
		Method string `json:"method"`
	}
	_ = json.Unmarshal(line, &m)
	h.mu.Lock()
	cur := h.cur
	if h.proc != proc {
		cur = nil
	}
	kind := faultNone
	if m.ID != nil && m.Method == "" {
		kind = h.answers[*m.ID]
		delete(h.answers, *m.ID)
		if kind == faultDelay {
			h.held[h.texts[*m.ID]] = append([]byte(nil), line...)
		}
		delete(h.texts, *m.ID)
	}
	h.mu.Unlock()
	switch kind {
	case faultDrop, faultDelay: // dropped, or held until release
		return
	}
	if cur != nil {
		cur.deliver(line)
	}
}

func (v *vlink) deliver(line []byte) {
	if v.cut.Load() {
		return
	}
	v.wmu.Lock()
	defer v.wmu.Unlock()
	_, _ = v.w.Write(line)
}

func (v *vlink) cutNow() { v.cutWith(errCut) }

func (v *vlink) cutWith(err error) {
	if v.cut.Swap(true) {
		return
	}
	_ = v.w.CloseWithError(err)
}

func (v *vlink) Read(p []byte) (int, error) { return v.r.Read(p) }

// Write forwards one request line to the process and applies its fault.
func (v *vlink) Write(p []byte) (int, error) {
	if v.cut.Load() {
		return 0, errCut
	}
	h := v.hub
	var m struct {
		ID     *int64 `json:"id"`
		Method string `json:"method"`
		Params struct {
			Input []struct {
				Text string `json:"text"`
			} `json:"input"`
		} `json:"params"`
	}
	_ = json.Unmarshal(p, &m)
	kind := faultNone
	h.mu.Lock()
	proc := h.proc
	if m.Method == "turn/start" && len(m.Params.Input) > 0 {
		text := m.Params.Input[0].Text
		h.starts[text]++
		if h.plan != nil {
			kind = h.plan(text)
		}
		if kind != faultNone {
			h.applied[kind]++
		}
		if m.ID != nil && (kind == faultDrop || kind == faultDelay) {
			h.answers[*m.ID] = kind
			h.texts[*m.ID] = text
		}
	}
	h.mu.Unlock()
	h.wmu.Lock()
	n, err := proc.Write(p)
	h.wmu.Unlock()
	if err != nil {
		return n, err
	}
	switch kind {
	case faultDrop, faultDelay:
		if h.written != nil && len(m.Params.Input) > 0 {
			h.written(m.Params.Input[0].Text, kind)
		}
	case faultCut:
		v.cutNow()
	case faultKill:
		proc.Kill()
		h.mu.Lock()
		if h.proc == proc {
			h.proc = nil // dead: the next Dial starts a new process
		}
		h.mu.Unlock()
	}
	return n, nil
}

// Close detaches the link; the process keeps running.
func (v *vlink) Close() error {
	v.once.Do(func() { close(v.closed) })
	v.cutNow()
	return nil
}

// count returns how many turn/start requests carried text.
func (h *faultHub) count(text string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.starts[text]
}

func (h *faultHub) faults(k faultKind) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.applied[k]
}

func (h *faultHub) processes() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.procs)
}

// alive reports whether pid is the hub's current, not killed, process.
func (h *faultHub) alive(pid int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.proc != nil && h.proc.PID == pid && !exited(h.proc)
}

// Close stops the process.
func (h *faultHub) Close() {
	h.mu.Lock()
	h.closed = true
	procs := h.procs
	if h.cur != nil {
		h.cur.cutNow()
	}
	h.mu.Unlock()
	for _, p := range procs {
		_ = p.Close()
	}
	h.wg.Wait()
}
