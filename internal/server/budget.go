package server

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

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

// guard keeps answers within their token budget and the wire cap.
//
// Counting o200k tokens costs about 0.1-0.2 ms per KiB, so it is done only
// when the budget is reachable: a token is at least one byte, so an answer
// of at most budget bytes is within budget without counting. Only a page
// larger than that is counted, and only a page over its budget is cut: by
// bytes first (free), then from the measured bytes-per-token ratio, with
// the candidate counted once more to make the cut exact.
type guard struct {
	counter tokens.Counter
}

// fitResult is a guarded answer.
type fitResult struct {
	body []byte
	// cut reports a page cut short by the guard.
	cut bool
	// counted is how many times the guard ran the tokenizer.
	counted int
}

// fit returns the answer body (compact JSON) of out within budget tokens
// and the wire cap; body is encode(out), and shorter pages are encoded the
// same way. A cuttable page over either is cut to its longest prefix that
// fits (at least one record, which is never cut in part); any other answer
// is returned as it is.
func (g *guard) fit(out any, body []byte, budget int, encode func(any) ([]byte, error)) (fitResult, error) {
	res := fitResult{body: body}
	c, ok := out.(paging.Cuttable)
	if !ok || budget <= 0 {
		return res, nil
	}
	n := c.PageLen()
	bodies := map[int][]byte{n: body}
	page := func(k int) ([]byte, error) {
		if b, ok := bodies[k]; ok {
			return b, nil
		}
		b, err := encode(c.CutPage(k))
		if err != nil {
			return nil, err
		}
		bodies[k] = b
		return b, nil
	}
	if !wireFits(body) && n > 1 {
		// Over the wire cap: nothing longer than the longest prefix under
		// it can fit, so the search below starts from that prefix.
		k, err := largest(1, n-1, func(k int) (bool, error) {
			b, err := page(k)
			return err == nil && wireFits(b), err
		})
		if err != nil {
			return res, err
		}
		n = max(k, 1)
		body, _ = page(n)
		res.body, res.cut = body, true
	}
	within, tok, err := g.within(body, budget, &res)
	if err != nil || within || n <= 1 {
		return res, err
	}
	// The longest prefix that fits by bytes alone needs no counting.
	best, err := largest(1, n-1, func(k int) (bool, error) {
		b, err := page(k)
		return err == nil && len(b) <= budget && wireFits(b), err
	})
	if err != nil {
		return res, err
	}
	// With the page's measured bytes per token, try a longer prefix and
	// count it; shrink by the ratio until it fits (a few counts at most).
	if tok > 0 {
		ratio := float64(tok) / float64(len(body))
		for attempt := 0; attempt < 3; attempt++ {
			target := float64(budget) * (0.97 - 0.04*float64(attempt))
			k, err := largest(best+1, n-1, func(k int) (bool, error) {
				b, err := page(k)
				return err == nil && float64(len(b))*ratio <= target && wireFits(b), err
			})
			if err != nil {
				return res, err
			}
			if k <= best {
				break
			}
			b, _ := page(k)
			t, err := g.count(b, &res)
			if err != nil {
				return res, err
			}
			if t <= budget {
				best = k
				break
			}
			ratio = float64(t) / float64(len(b))
		}
	}
	best = max(best, 1)
	b, err := page(best)
	if err != nil {
		return res, err
	}
	res.body, res.cut = b, true
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
	n, err := g.counter.Count(string(b))
	if err != nil {
		return 0, fmt.Errorf("answer budget: %w", err)
	}
	return n, nil
}

// largest is the largest k in lo..hi for which ok(k) holds, assuming ok is
// monotone (true up to some k, false after); lo-1 when none.
func largest(lo, hi int, ok func(int) (bool, error)) (int, error) {
	best := lo - 1
	for lo <= hi {
		mid := (lo + hi) / 2
		yes, err := ok(mid)
		if err != nil {
			return 0, err
		}
		if yes {
			best, lo = mid, mid+1
		} else {
			hi = mid - 1
		}
	}
	return best, nil
}

// wireFits reports whether an answer whose body is b fits the wire cap. A
// body byte takes at most 7 bytes on the wire (6 as an escape in the text
// copy, 1 in structuredContent), so only bodies within a seventh of the cap
// of it need the exact count.
func wireFits(b []byte) bool {
	if 7*len(b)+wireOverhead <= MaxAnswerBytes {
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
	if structuredSize(structured)+textSize(text)+wireOverhead <= MaxAnswerBytes {
		return text, structured, nil
	}
	if textSize(text)+wireOverhead <= MaxAnswerBytes {
		return text, nil, nil
	}
	return nil, nil, fmt.Errorf("the answer is %d bytes, over the %d-byte cap of one answer; ask for less (a narrower filter, a smaller limit, or one record)", len(text), MaxAnswerBytes)
}
