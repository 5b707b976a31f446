package frame

import "strconv"

// Plain is a request whose members need no decoding beyond what Inspect
// did: see [Message.Plain].
type Plain struct {
	Method string
	// ID is the id as the SDK's JSON decoder makes it: nil (a
	// notification), a float64 or a string.
	ID     any
	Params []byte // the params member's value as written; nil without one
}

// Plain returns the request as jsonrpc.DecodeMessage would decode it, when
// that needs nothing Inspect did not already find: members jsonrpc "2.0",
// id, method and params only; the method and a string id printable ASCII
// without escapes; an integer id the SDK keeps exactly; params an object or
// an array, or none. ok is false for anything else, and for a line the
// guard changed after Inspect (a substituted id, a renamed cancellation):
// those go to jsonrpc.DecodeMessage. FuzzFrames holds the two to the same
// request.
//
// jsonrpc.DecodeMessage decodes a line with go-sdk's JSON decoder twice
// (the message, then its method), and each decoding allocates a 32 KiB
// buffer; most of a trivial call's garbage was these buffers.
func (m Message) Plain() (p Plain, ok bool) {
	if !m.plain || m.Cancels != nil || m.IDKind == IDOther {
		return Plain{}, false
	}
	p = Plain{Method: string(m.method[1 : len(m.method)-1]), Params: m.params}
	switch m.IDKind {
	case IDInteger:
		n, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil {
			return Plain{}, false
		}
		p.ID = float64(n)
	case IDString:
		p.ID = string(m.ID[1 : len(m.ID)-1])
	}
	return p, true
}

// plainRequest reports whether a request's members make it Plain: see
// [Message.Plain].
func plainRequest(members []Member, msg Message) bool {
	if msg.Response || (msg.IDKind != IDNone && msg.IDKind != IDInteger && msg.IDKind != IDString) {
		return false
	}
	for _, m := range members {
		switch m.Key {
		case "jsonrpc":
			if string(m.Raw) != `"2.0"` {
				return false
			}
		case "id", "method":
			if m.Raw[0] == '"' && !plainString(m.Raw) {
				return false
			}
		case "params":
			if m.Raw[0] != '{' && m.Raw[0] != '[' {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// plainString reports whether raw, a JSON string, is printable ASCII
// without escapes: its value is the bytes between the quotes.
func plainString(raw []byte) bool {
	for _, c := range raw[1 : len(raw)-1] {
		if c < 0x20 || c > 0x7e || c == '\\' {
			return false
		}
	}
	return true
}
