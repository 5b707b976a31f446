// Package sse reads a server-sent events stream (the HTML "text/event-stream"
// format) for the adapters that follow a provider over HTTP: OpenCode's
// /global/event and the Freebuff Desktop orchestrator's stream.
//
// Lines are framed by the runtime's one line reader,
// internal/jsonrpc.ReadLine, which consumes an oversized line whole. Only
// the fields the adapters use are kept: "data" (lines joined with "\n")
// and "event"; comments (": ping"), "id" and "retry" are skipped. Every
// read from the stream counts as activity, so keep-alive comments keep an
// idle timer from firing.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/agent-interop/runtime/internal/jsonrpc"
)

// maxEventName bounds the kept "event" field.
const maxEventName = 200

// Event is one dispatched server-sent event.
type Event struct {
	// Event is the "event" field ("" when the event had none), at most
	// 200 bytes.
	Event string
	// Data is the event's "data" lines joined with "\n".
	Data string
}

// Options bound and observe a stream.
type Options struct {
	// MaxEvent bounds one event's data, in bytes (required, > 0).
	MaxEvent int
	// DropOversize drops an event whose data passes MaxEvent, whole, and
	// goes on with the next one; without it Read fails with an
	// *OversizeError.
	DropOversize bool
	// Activity, when set, is called for every read that returned data.
	Activity func()
}

// OversizeError is a line or an event larger than Options.MaxEvent.
type OversizeError struct {
	Max  int
	Line bool // a single line was too long (else the event's data)
}

func (e *OversizeError) Error() string {
	if e.Line {
		return fmt.Sprintf("line longer than %d bytes", e.Max)
	}
	return fmt.Sprintf("event larger than %d bytes", e.Max)
}

// Read reads events from r and calls onEvent for each, in order, until r
// ends or fails. It returns io.EOF when the stream ended, the read error
// otherwise, or an *OversizeError. An event not yet ended by a blank line
// when the stream ends is not dispatched.
func Read(r io.Reader, opts Options, onEvent func(Event)) error {
	if opts.MaxEvent <= 0 {
		return errors.New("sse: Options.MaxEvent must be positive")
	}
	if opts.Activity != nil {
		r = &activityReader{r: r, fn: opts.Activity}
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		event    string
		data     bytes.Buffer
		hasData  bool
		dropping bool // the rest of an oversized event is skipped
	)
	// A line carries its field name and ": " besides the data.
	lineMax := opts.MaxEvent + 16
	for {
		line, tooLong, err := jsonrpc.ReadLine(br, lineMax)
		if err != nil {
			return err // the last, unterminated line ends no event
		}
		switch {
		case tooLong && !opts.DropOversize:
			return &OversizeError{Max: opts.MaxEvent, Line: true}
		case tooLong:
			dropping = true
			data.Reset()
		case len(line) == 0: // the blank line ends an event
			if hasData && !dropping {
				onEvent(Event{Event: event, Data: data.String()})
			}
			event, hasData, dropping = "", false, false
			data.Reset()
		case dropping, line[0] == ':':
			// the rest of a dropped event; a comment
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "data":
				size := data.Len() + len(value)
				if hasData {
					size++
				}
				if size > opts.MaxEvent {
					if !opts.DropOversize {
						return &OversizeError{Max: opts.MaxEvent}
					}
					dropping = true
					data.Reset()
					continue
				}
				if hasData {
					data.WriteByte('\n')
				}
				data.Write(value)
				hasData = true
			case "event":
				event = string(value[:min(len(value), maxEventName)])
			}
		}
	}
}

// activityReader calls fn after every read that returned data.
type activityReader struct {
	r  io.Reader
	fn func()
}

func (a *activityReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.fn()
	}
	return n, err
}
