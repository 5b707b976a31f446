// Package stdio is the server's stdio transport: newline-delimited
// JSON-RPC with a guard in front of the MCP SDK, which would end the whole
// session on a message it cannot decode.
//
// Lines are read with internal/jsonrpc's ReadLine, the framing every stdio
// protocol of the runtime shares. Every inbound line is checked first
// (package [frame]) without recursion, so no
// nesting depth or size up to [MaxLineBytes] can hurt the guard itself. A
// line the SDK could not take gets the protocol's answer from the guard and
// the session goes on:
//
//   - not JSON (or not UTF-8): -32700; a non-object, no method,
//     a bad jsonrpc, method or id member, or an id of null: -32600; params
//     that are not an object or array, or nest deeper than the SDK accepts:
//     -32602. Each answer echoes the request's id as it was written.
//   - an id the SDK cannot carry exactly (a fraction, an exponent, an
//     integer beyond 2^53 such as 1e400 or 123456789012345678901234567890)
//     is replaced by a private string id on the way in and restored in the
//     answer, so the request is served and answered under its own id.
//   - a second request with the id of a request still in flight: -32600
//     (the SDK would drop it without an answer).
//   - a malformed response (to a request of ours) is dropped.
//   - a batch: in a session that negotiated a protocol version with
//     batches (2025-03-26, or earlier; the SDK's rule over HTTP too), its
//     messages are checked one by one as above and passed to the SDK one
//     by one, and the answers come back as one array in the batch's order
//     once every call is answered; from 2025-06-18 on, or before
//     initialize was answered, the batch is one -32600.
//
// When stdin ends the transport keeps the SDK's input open until every
// request already read has been answered (bounded by Options.DrainTimeout),
// then ends it, so requests written just before EOF are answered.
package stdio

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"time"

	sdkrpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/internal/jsonrpc"
	"github.com/agent-interop/runtime/internal/stdio/frame"
)

// MaxLineBytes bounds one inbound message.
const MaxLineBytes = 4 << 20

// DefaultDrainTimeout bounds the wait for in-flight answers after stdin
// ends: longer than the longest bounded wait a tool makes (30 s).
const DefaultDrainTimeout = 60 * time.Second

// DefaultInterruptDrain bounds the wait for in-flight answers after
// [Transport.Interrupt] (Ctrl-C): short, the user asked to stop.
const DefaultInterruptDrain = 2 * time.Second

// Options configure a transport.
type Options struct {
	// DrainTimeout bounds how long, after stdin ends, the transport waits
	// for the answers to the requests already read (default 60 s).
	DrainTimeout time.Duration
	// InterruptDrain is the same bound after Interrupt (default 2 s).
	InterruptDrain time.Duration
}

// Transport is the guarded stdio transport. The guard reads stdin, checks
// each line and decodes it (see decode: built from the checked members for
// a plain request, jsonrpc.DecodeMessage otherwise); the SDK's connection
// takes the decoded messages one by one (see conn). The SDK's own stdio transport would read the guard's
// output through a pipe and decode every line again, on a third goroutine.
type Transport struct {
	g         *guard
	in        *inbox
	interrupt sync.Once
}

var _ mcp.Transport = (*Transport)(nil)

// New returns a transport over in and out.
func New(in io.Reader, out io.Writer, opts Options) *Transport {
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = DefaultDrainTimeout
	}
	if opts.InterruptDrain <= 0 {
		opts.InterruptDrain = DefaultInterruptDrain
	}
	g := newGuard(out, opts)
	box := newInbox()
	go g.pump(in, box)
	return &Transport{g: g, in: box}
}

// Connect implements mcp.Transport: the connection over the guard (see
// conn).
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	return &conn{in: t.in, out: t.g}, nil
}

// Interrupt ends the input as if stdin had closed, waiting at most
// Options.InterruptDrain for the answers in flight, so the server stops the
// way it does at EOF (a clean exit instead of a cancelled one).
func (t *Transport) Interrupt() {
	t.interrupt.Do(func() {
		go func() {
			t.g.drained(t.g.opts.InterruptDrain)
			t.in.end(io.EOF)
		}()
	})
}

// guard checks inbound lines, tracks the requests it forwarded until their
// answers are written, and restores substituted ids in those answers.
type guard struct {
	out   io.Writer
	opts  Options
	nonce string // prefix of substitute ids, drawn on first use (idPrefix)

	wmu sync.Mutex // serialises writes to out, so lines never interleave
	buf []byte     // the SDK's partial line

	mu      sync.Mutex
	pending map[string]bool   // id keys of forwarded calls not answered yet
	subst   map[string][]byte // substitute id key -> the id as the client wrote it
	nextSub int64
	idle    chan struct{} // closed while nothing is pending
	// initKey is the id key of the initialize request in flight; its
	// answer sets version, the protocol version the session negotiated.
	initKey string
	version string
	// inBatch holds the calls of batches waiting for their answers.
	inBatch map[string]batchSlot
}

// batch collects the answers to one inbound batch: the guard forwards its
// messages to the SDK one by one and writes the answers back as one array,
// in the batch's order, once every call is answered.
type batch struct {
	answers   [][]byte // per message; nil for one that gets no answer
	remaining int      // calls not answered yet
}

type batchSlot struct {
	b   *batch
	idx int
}

// encode is the batch's answer line; nil when no message gets an answer.
func (b *batch) encode() []byte {
	var out []byte
	for _, a := range b.answers {
		if a == nil {
			continue
		}
		if out == nil {
			out = append(out, '[')
		} else {
			out = append(out, ',')
		}
		out = append(out, a...)
	}
	if out == nil {
		return nil
	}
	return append(out, ']', '\n')
}

// batchesFrom is the first protocol version that has no JSON-RPC batches
// (2025-03-26 is the one version whose servers must accept them; the SDK
// accepts them below 2025-06-18, as its Streamable HTTP handler does).
const batchesFrom = "2025-06-18"

func newGuard(out io.Writer, opts Options) *guard {
	idle := make(chan struct{})
	close(idle)
	return &guard{
		out: out, opts: opts,
		pending: map[string]bool{}, subst: map[string][]byte{}, idle: idle, inBatch: map[string]batchSlot{},
	}
}

// Write implements io.Writer for the SDK: whole lines are passed on, each
// answer retiring its request (and getting its original id back).
func (g *guard) Write(p []byte) (int, error) {
	g.wmu.Lock()
	defer g.wmu.Unlock()
	// The SDK writes each message as one line in one Write: its lines are
	// passed on from p itself (retire copies what it keeps), not copied
	// into buf first; only a partial line waits in buf.
	n := len(p)
	for len(g.buf) == 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			break
		}
		line := g.retire(p[:i+1])
		p = p[i+1:]
		if line == nil { // held for its batch
			continue
		}
		if _, err := g.out.Write(line); err != nil {
			return 0, err
		}
	}
	if len(p) == 0 {
		return n, nil
	}
	g.buf = append(g.buf, p...)
	for {
		i := bytes.IndexByte(g.buf, '\n')
		if i < 0 {
			return n, nil
		}
		line := g.retire(g.buf[:i+1])
		g.buf = g.buf[i+1:]
		if line == nil { // held for its batch
			continue
		}
		if _, err := g.out.Write(line); err != nil {
			return 0, err
		}
	}
}

// Close implements io.Closer (stdout stays open).
func (g *guard) Close() error { return nil }

// answer writes one of the guard's own answers.
func (g *guard) answer(r *frame.Refusal) {
	if r.Silent {
		return
	}
	line := append(frame.ErrorAnswer(r.ID, r.Code, r.Msg), '\n')
	g.wmu.Lock()
	defer g.wmu.Unlock()
	_, _ = g.out.Write(line)
}

// sdkPrefix starts every message the SDK writes that carries an id.
var sdkPrefix = []byte(`{"jsonrpc":"2.0","id":`)

// retire handles one outgoing line: when it answers a forwarded call, the
// call is no longer pending and a substituted id is replaced by the
// original one. The answer to a call of a batch is held (nil) until the
// batch is complete, then the batch's whole answer is returned. The answer
// to initialize records the negotiated protocol version.
func (g *guard) retire(line []byte) []byte {
	start, end, ok := responseID(line)
	if !ok {
		return line
	}
	key, err := frame.IDKey(line[start:end])
	if err != nil {
		return line
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if orig, ok := g.subst[key]; ok {
		delete(g.subst, key)
		line = frame.Splice(line, start, end, orig)
	}
	if g.pending[key] {
		delete(g.pending, key)
		if len(g.pending) == 0 {
			close(g.idle)
		}
	}
	if key == g.initKey {
		g.initKey = ""
		var answer struct {
			Result *struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"result"`
		}
		if json.Unmarshal(line, &answer) == nil && answer.Result != nil {
			g.version = answer.Result.ProtocolVersion
		}
	}
	if slot, ok := g.inBatch[key]; ok {
		delete(g.inBatch, key)
		slot.b.answers[slot.idx] = bytes.Clone(bytes.TrimRight(line, "\r\n"))
		if slot.b.remaining--; slot.b.remaining > 0 {
			return nil
		}
		if out := slot.b.encode(); out != nil {
			return out
		}
		return nil
	}
	return line
}

// responseID finds the id of a response line (a line with an id and no
// method). SDK lines start with sdkPrefix; anything else takes the slow
// path through the scanner.
func responseID(line []byte) (start, end int, ok bool) {
	body := bytes.TrimRight(line, "\r\n")
	if bytes.HasPrefix(body, sdkPrefix) {
		start = len(sdkPrefix)
		var err error
		if start < len(body) && body[start] == '"' {
			end, err = frame.ScanString(body, start)
		} else if start < len(body) {
			end, err = frame.ScanNumber(body, start)
		} else {
			return 0, 0, false
		}
		if err != nil || end >= len(body) || body[end] != ',' {
			return 0, 0, false
		}
		rest := body[end+1:]
		return start, end, bytes.HasPrefix(rest, []byte(`"result"`)) || bytes.HasPrefix(rest, []byte(`"error"`))
	}
	members, isObject, err := frame.ScanObject(body)
	if err != nil || !isObject {
		return 0, 0, false
	}
	var id *frame.Member
	for i := range members {
		switch members[i].Key {
		case "method":
			return 0, 0, false
		case "id":
			id = &members[i]
		}
	}
	if id == nil || (id.Raw[0] != '"' && frame.ClassifyID(id.Raw) != frame.IDInteger) {
		return 0, 0, false
	}
	return id.Start, id.Start + len(id.Raw), true
}

// idPrefix is the random prefix of substitute ids, drawn on the first
// substitution: most sessions never need one, and reading the system's
// random source is not needed to answer initialize. g.mu must be held.
func (g *guard) idPrefix() string {
	if g.nonce == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		g.nonce = "interop-id-" + hex.EncodeToString(b[:]) + "-"
	}
	return g.nonce
}

// admit records a call about to be forwarded. It returns the line to
// forward (with a substitute id when needed), or a refusal when the id is
// already in flight.
func (g *guard) admit(line []byte, msg frame.Message) ([]byte, string, *frame.Refusal) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var key string
	if msg.IDKind == frame.IDOther {
		g.nextSub++
		sub := strconv.AppendQuote(nil, g.idPrefix()+strconv.FormatInt(g.nextSub, 10))
		key, _ = frame.IDKey(sub)
		g.subst[key] = append([]byte(nil), msg.ID...)
		line = frame.Splice(line, msg.IDStart, msg.IDStart+len(msg.ID), sub)
	} else {
		var err error
		if key, err = frame.IDKey(msg.ID); err != nil {
			return nil, "", &frame.Refusal{ID: msg.ID, Code: jsonrpc.CodeInvalidRequest, Msg: "Invalid Request: bad id"}
		}
		if g.pending[key] {
			return nil, "", &frame.Refusal{ID: msg.ID, Code: jsonrpc.CodeInvalidRequest, Msg: "Invalid Request: id " + string(msg.ID) + " is already used by a request in flight"}
		}
	}
	if len(g.pending) == 0 {
		g.idle = make(chan struct{})
	}
	g.pending[key] = true
	return line, key, nil
}

// forget drops a call that could not be forwarded.
func (g *guard) forget(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.subst, key)
	if g.pending[key] {
		delete(g.pending, key)
		if len(g.pending) == 0 {
			close(g.idle)
		}
	}
}

// cancelled handles a notifications/cancelled: the cancelled call may end
// without an answer, so it is no longer waited for, and a substituted id is
// named by its substitute so the SDK finds the call. When the call was the
// last one its batch waited for, the batch's answer is returned to be
// written (flush).
func (g *guard) cancelled(line []byte, msg frame.Message) (out, flush []byte) {
	c := msg.Cancels
	g.mu.Lock()
	defer g.mu.Unlock()
	key, err := frame.IDKey(c.Raw)
	if err != nil {
		return line, nil
	}
	if frame.ClassifyID(c.Raw) == frame.IDOther {
		for sub, orig := range g.subst {
			if bytes.Equal(orig, c.Raw) {
				key = sub
				line = frame.Splice(line, c.Start, c.Start+len(c.Raw), strconv.AppendQuote(nil, sub[1:]))
				break
			}
		}
	}
	if g.pending[key] {
		delete(g.pending, key)
		if len(g.pending) == 0 {
			close(g.idle)
		}
	}
	if slot, ok := g.inBatch[key]; ok {
		delete(g.inBatch, key)
		if slot.b.remaining--; slot.b.remaining == 0 {
			flush = slot.b.encode()
		}
	}
	return line, flush
}

// drained waits until every forwarded call was answered, or within passed.
func (g *guard) drained(within time.Duration) {
	g.mu.Lock()
	idle := g.idle
	g.mu.Unlock()
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
}

// pump passes checked messages from in to box and answers the others.
// When in ends, it waits for the answers of the calls it forwarded before
// ending box's input.
func (g *guard) pump(in io.Reader, box *inbox) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := jsonrpc.ReadLine(r, MaxLineBytes)
		switch {
		case tooLong:
			g.answer(&frame.Refusal{Code: jsonrpc.CodeInvalidRequest, Msg: "Invalid Request: message exceeds 4 MiB"})
		case len(bytes.TrimSpace(line)) > 0:
			if !g.forward(line, box) {
				return
			}
		}
		if err != nil {
			g.drained(g.opts.DrainTimeout)
			box.end(err)
			return
		}
	}
}

// forward checks one line and passes it to the SDK, or answers it. It
// reports false once the SDK takes no more messages.
func (g *guard) forward(line []byte, box *inbox) bool {
	line = frame.Sanitize(line)
	if t := bytes.TrimSpace(line); t[0] == '[' {
		if _, _, err := frame.ScanObject(line); err == nil {
			return g.forwardBatch(line, box)
		}
	}
	msg, ref := frame.Inspect(line)
	if ref != nil {
		g.answer(ref)
		return true
	}
	line, key, ref := g.prepare(line, msg)
	if ref != nil {
		g.answer(ref)
		return true
	}
	m, ref := decode(line, msg)
	if ref != nil {
		g.forget(key)
		g.answer(ref)
		return true
	}
	if !box.put(m) {
		if msg.IsCall {
			g.forget(key)
		}
		return false
	}
	return true
}

// decode is the SDK's message for a line the guard checked (and prepared):
// jsonrpc.DecodeMessage's, built from what Inspect found for a plain
// request (frame.Message.Plain) and decoded by the SDK otherwise. The checks are fuzzed against jsonrpc.DecodeMessage
// (FuzzFrames), so a line it refuses is a gap in them: the call gets an
// Invalid Request of the guard's own, under the id its client wrote, and
// the session goes on.
func decode(line []byte, msg frame.Message) (sdkrpc.Message, *frame.Refusal) {
	if p, ok := msg.Plain(); ok {
		req := &sdkrpc.Request{Method: p.Method, Params: p.Params}
		if id, err := sdkrpc.MakeID(p.ID); err == nil {
			req.ID = id
			return req, nil
		}
	}
	m, err := sdkrpc.DecodeMessage(line)
	if err == nil {
		return m, nil
	}
	return nil, &frame.Refusal{ID: msg.ID, Code: jsonrpc.CodeInvalidRequest, Msg: "Invalid Request: " + err.Error(), Silent: !msg.IsCall}
}

// prepare readies a checked message for the SDK: a cancellation names the
// call as the SDK knows it (a batch it completes is written), a call is
// admitted (and may get a substitute id).
func (g *guard) prepare(line []byte, msg frame.Message) ([]byte, string, *frame.Refusal) {
	if msg.Cancels != nil {
		var flush []byte
		if line, flush = g.cancelled(line, msg); flush != nil {
			g.write(flush)
		}
	}
	if !msg.IsCall {
		return line, "", nil
	}
	line, key, ref := g.admit(line, msg)
	if ref == nil && msg.Initialize {
		g.mu.Lock()
		g.initKey = key
		g.mu.Unlock()
	}
	return line, key, ref
}

// forwardBatch serves a JSON-RPC batch in a session that negotiated a
// protocol version with batches (below 2025-06-18), and refuses it as one
// Invalid Request otherwise, or before initialization. Each message is
// checked as a single line is; the valid ones go to the SDK one by one, and
// their answers and the refusals come back as one array in the batch's
// order, once every call is answered. A batch of notifications and
// responses only gets no answer; initialize is refused inside a batch.
func (g *guard) forwardBatch(line []byte, box *inbox) bool {
	g.mu.Lock()
	version := g.version
	g.mu.Unlock()
	switch {
	case version == "":
		g.answer(&frame.Refusal{Code: jsonrpc.CodeInvalidRequest, Msg: "Invalid Request: batches are not supported before initialization"})
		return true
	case version >= batchesFrom:
		g.answer(&frame.Refusal{Code: jsonrpc.CodeInvalidRequest, Msg: "Invalid Request: batches are not supported in protocol version " + batchesFrom + " and later (this session: " + version + ")"})
		return true
	}
	elems, err := frame.ScanArray(line)
	if err != nil {
		g.answer(&frame.Refusal{Code: jsonrpc.CodeParseError, Msg: "Parse error: " + err.Error()})
		return true
	}
	if len(elems) == 0 {
		g.answer(&frame.Refusal{Code: jsonrpc.CodeInvalidRequest, Msg: "Invalid Request: empty batch"})
		return true
	}
	b := &batch{answers: make([][]byte, len(elems))}
	msgs := make([]sdkrpc.Message, len(elems)) // nil: not forwarded
	keys := make([]string, len(elems))
	for i, e := range elems {
		raw := e.Raw
		msg, ref := frame.Inspect(raw)
		if ref == nil && msg.Initialize {
			ref = &frame.Refusal{ID: msg.ID, Code: jsonrpc.CodeInvalidRequest, Msg: "Invalid Request: initialize must not be part of a batch"}
		}
		if ref == nil {
			raw, keys[i], ref = g.prepare(raw, msg)
		}
		if ref == nil {
			if msgs[i], ref = decode(raw, msg); ref != nil {
				g.forget(keys[i])
				keys[i] = ""
			}
		}
		switch {
		case ref != nil && !ref.Silent:
			b.answers[i] = frame.ErrorAnswer(ref.ID, ref.Code, ref.Msg)
		case ref == nil && msg.IsCall:
			b.remaining++
		}
	}
	g.mu.Lock()
	for i, key := range keys {
		if key != "" && msgs[i] != nil {
			g.inBatch[key] = batchSlot{b: b, idx: i}
		}
	}
	g.mu.Unlock()
	if b.remaining == 0 {
		if out := b.encode(); out != nil {
			g.write(out)
		}
	}
	for i, m := range msgs {
		if m == nil {
			continue
		}
		if !box.put(m) {
			for j := i; j < len(msgs); j++ {
				if keys[j] != "" && msgs[j] != nil {
					g.mu.Lock()
					delete(g.inBatch, keys[j])
					g.mu.Unlock()
					g.forget(keys[j])
				}
			}
			return false
		}
	}
	return true
}

// write writes one whole line of the guard's own.
func (g *guard) write(line []byte) {
	g.wmu.Lock()
	defer g.wmu.Unlock()
	_, _ = g.out.Write(line)
}
