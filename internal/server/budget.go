package server

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
	"unsafe"

	"github.com/agent-interop/runtime/internal/paging"
	"github.com/agent-interop/runtime/internal/tokens"
)

// MaxAnswerBytes caps one tools/call answer on the wire: the whole
// JSON-RPC message, text content and structuredContent included. go-sdk
// clients drop the session on a message over 16 MiB; answers stay far
// below that.
const MaxAnswerBytes = 1 << 20

// wireOverhead is what the JSON-RPC envelope adds around an answer's text
// and structuredContent (jsonrpc, id, result, content, type, isError...),
// rounded up generously.
const wireOverhead = 1024

// maxWirePerByte is the most bytes one body byte takes on the wire, both
// copies together (see wireFits).
const maxWirePerByte = 12

// guard keeps answers within their token budget and the wire cap.
//
// Counting o200k tokens costs about 0.02-0.03 ms per KiB, so it is done
// only when the budget is reachable: a token is at least one byte, so an
// answer of at most budget bytes is within budget without counting. Only a
// page larger than that is counted, and only a page over its budget is
// cut. Encoding a shorter page (with redaction) costs about as much as
// counting it, so the cut probes few prefixes: records of one page are
// alike in size, so the prefix that fits a size is found by interpolation
// (two or three encodings; bisection takes over for very uneven records),
// at a size taken from the page's measured bytes per token, and the
// candidate is counted to make the cut exact.
type guard struct {
	counter tokens.Counter
}

// tallier is a counter that counts a text sharing a prefix with one it
// counted before from where the two part (tokens.O200k): a page cut
// shorter shares everything up to its last record with the whole page,
// so the cut is counted at the cost of its tail.
type tallier interface {
	Tally(text string) (*tokens.Tally, error)
	CountFrom(t *tokens.Tally, text string) (int, error)
}

// fitResult is a guarded answer.
type fitResult struct {
	body []byte
	// value is the answer body encodes: out, or the cut page.
	value any
	// cut reports a page cut short by the guard.
	cut bool
	// counted is how many times the guard ran the tokenizer, encoded how
	// many shorter pages it encoded.
	counted, encoded int
	// tally is the first count's, when the counter keeps one: later
	// counts start where their text parts from it.
	tally *tokens.Tally
}

// fit returns the answer body (compact JSON) of out within budget tokens
// and the wire cap; body is encode(out), and shorter pages are encoded the
// same way. A cuttable page over either is cut to a prefix that fits (at
// least one record, which is never cut in part), close to the longest
// one; any other answer is returned as it is.
func (g *guard) fit(out any, body []byte, budget int, encode func(any) ([]byte, error)) (fitResult, error) {
	res := fitResult{body: body, value: out}
	c, ok := out.(paging.Cuttable)
	if !ok || budget <= 0 {
		return res, nil
	}
	n := c.PageLen()
	bodies := map[int][]byte{n: body}
	values := map[int]any{n: out}
	page := func(k int) ([]byte, error) {
		if b, ok := bodies[k]; ok {
			return b, nil
		}
		res.encoded++
		v := c.CutPage(k)
		b, err := encode(v)
		if err != nil {
			return nil, err
		}
		bodies[k], values[k] = b, v
		return b, nil
	}
	take := func(k int) {
		res.body, res.value, res.cut = bodies[k], values[k], true
	}
	if !wireFits(body) && n > 1 {
		// Over the wire cap: nothing longer than the longest prefix under
		// it can fit, so the search below starts from that prefix.
		k, err := longest(n, wireSize(body), MaxAnswerBytes, func(k int) (int, error) {
			b, err := page(k)
			return wireSize(b), err
		})
		if err != nil {
			return res, err
		}
		n = max(k, 1)
		body, _ = page(n)
		take(n)
	}
	within, tok, err := g.within(body, budget, &res)
	if err != nil || within || n <= 1 {
		return res, err
	}
	// Aim at a size a little under the budget from the page's bytes per
	// token; count the candidate and aim lower if it is still over.
	ratio := float64(tok) / float64(len(body))
	for attempt := 0; attempt < 3; attempt++ {
		target := float64(budget) * (0.97 - 0.05*float64(attempt)) / ratio
		k, err := longest(n, len(body), int(target), func(k int) (int, error) {
			b, err := page(k)
			return len(b), err
		})
		if err != nil {
			return res, err
		}
		if k < 1 {
			break
		}
		b, _ := page(k)
		if len(b) <= budget {
			take(k) // within budget by bytes alone
			return res, nil
		}
		t, err := g.count(b, &res)
		if err != nil {
			return res, err
		}
		if t <= budget {
			take(k)
			return res, nil
		}
		ratio = float64(t) / float64(len(b))
	}
	// Text that tokenizes far worse than the page's average: the longest
	// prefix within budget by bytes alone needs no count.
	k, err := longest(n, len(body), budget, func(k int) (int, error) {
		b, err := page(k)
		return len(b), err
	})
	if err != nil {
		return res, err
	}
	if _, err := page(max(k, 1)); err != nil {
		return res, err
	}
	take(max(k, 1))
	return res, nil
}

// within reports whether body fits budget and the wire cap, counting
// tokens only when its size in bytes makes the budget reachable. tok is
// the count when one was made, else 0.
func (g *guard) within(body []byte, budget int, res *fitResult) (ok bool, tok int, err error) {
	if !wireFits(body) {
		return false, 0, nil
	}
	if len(body) <= budget {
		return true, 0, nil
	}
	t, err := g.count(body, res)
	if err != nil {
		return false, 0, err
	}
	return t <= budget, t, nil
}

func (g *guard) count(b []byte, res *fitResult) (int, error) {
	res.counted++
	var n int
	var err error
	// An encoded page is never written to once encoded (the guard only
	// keeps and slices it), so it is counted as a string without a copy.
	text := unsafe.String(unsafe.SliceData(b), len(b))
	switch t, ok := g.counter.(tallier); {
	case ok && res.tally == nil:
		if res.tally, err = t.Tally(text); err == nil {
			n = res.tally.Total()
		}
	case ok:
		n, err = t.CountFrom(res.tally, text)
	default:
		n, err = g.counter.Count(text)
	}
	if err != nil {
		return 0, fmt.Errorf("answer budget: %w", err)
	}
	return n, nil
}

// longest is a k in 1..n-1 whose prefix page has size(k) ≤ limit, 0 when
// none; size(n) is sizeN, over limit, and size grows with k. It probes
// where the size line between the known bounds crosses limit (records of
// one page are alike, so that is the answer or next to it) and bisects
// after three probes, so uneven records cost log2(n) more. A prefix within
// an average record of limit is taken as it is: one more record would
// pass limit or as good as, and proving which costs another encoding.
func longest(n, sizeN, limit int, size func(int) (int, error)) (int, error) {
	lo, hi := 0, n
	sLo, sHi := 0, sizeN
	slack := sizeN / n
	for probes := 0; hi-lo > 1 && (lo == 0 || limit-sLo >= slack); probes++ {
		k := (lo + hi) / 2
		if probes < 3 && sHi > sLo {
			k = lo + int(float64(hi-lo)*float64(limit-sLo)/float64(sHi-sLo))
		}
		k = min(max(k, lo+1), hi-1)
		s, err := size(k)
		if err != nil {
			return 0, err
		}
		if s <= limit {
			lo, sLo = k, s
		} else {
			hi, sHi = k, s
		}
	}
	return lo, nil
}

// wireFits reports whether an answer whose body is b fits the wire cap. A
// body byte takes at most 12 bytes on the wire: 6 in each copy (`<`, `>`
// and `&` are escaped as \u003c in structuredContent as well as in the
// text), so only bodies over a twelfth of the cap need the exact count.
func wireFits(b []byte) bool {
	if maxWirePerByte*len(b)+2+wireOverhead <= MaxAnswerBytes { // 2: the text's quotes
		return true
	}
	return wireSize(b) <= MaxAnswerBytes
}

// wireSize is the size of a tools/call answer whose compact JSON is body
// on the wire: the body as structuredContent plus the body as a JSON
// string in the text content, with the escapes encoding/json applies
// (HTML characters and U+2028/U+2029 included), plus the envelope.
func wireSize(body []byte) int {
	return structuredSize(body) + textSize(body) + wireOverhead
}

func structuredSize(body []byte) int {
	n := len(body)
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '<' || c == '>' || c == '&':
			n += 5
		case c == 0xE2 && i+2 < len(body) && body[i+1] == 0x80 && (body[i+2] == 0xA8 || body[i+2] == 0xA9):
			n += 3
		}
	}
	return n
}

func textSize(body []byte) int {
	n := 2 // quotes
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
			n += 2
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			n += 6
		case c < utf8.RuneSelf:
			n++
		default:
			r, size := utf8.DecodeRune(body[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				n += 6 // \ufffd
			case r == '\u2028' || r == '\u2029':
				n += 6
			default:
				n += size
			}
			i += size
			continue
		}
		i++
	}
	return n
}

// capWire returns the answer parts that fit the wire cap: both when they
// fit, the text alone when only it fits, and an error when even the text
// is over the cap (a single record larger than an answer may be).
func capWire(text, structured []byte) ([]byte, json.RawMessage, error) {
	// A byte takes at most 6 on the wire in either copy (an escape, or a
	// third of an escaped U+2028): parts that fit even so need no exact
	// size (a page cut to its budget is a few tens of KB).
	if 6*(len(text)+len(structured))+2+wireOverhead <= MaxAnswerBytes {
		return text, structured, nil
	}
	if structuredSize(structured)+textSize(text)+wireOverhead <= MaxAnswerBytes {
		return text, structured, nil
	}
	if textSize(text)+wireOverhead <= MaxAnswerBytes {
		return text, nil, nil
	}
	return nil, nil, fmt.Errorf("the answer is %d bytes, over the %d-byte cap of one answer; ask for less (a narrower filter, a smaller limit, or one record)", len(text), MaxAnswerBytes)
}
