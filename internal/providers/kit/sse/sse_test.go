package sse

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func collect(t *testing.T, stream string, opts Options) ([]Event, error) {
	t.Helper()
	var got []Event
	err := Read(strings.NewReader(stream), opts, func(e Event) { got = append(got, e) })
	return got, err
}

func TestRead(t *testing.T) {
	const max = 64
	big := strings.Repeat("x", max+10)
	for _, tc := range []struct {
		name   string
		stream string
		drop   bool
		want   []Event
		err    string // "" = io.EOF
	}{
		{name: "one event", stream: "data: {\"a\":1}\n\n", want: []Event{{Data: `{"a":1}`}}},
		{name: "no space after the colon", stream: "data:x\n\n", want: []Event{{Data: "x"}}},
		{name: "data lines joined, CRLF, event name",
			stream: "event: custom\r\ndata: line1\r\ndata: line2\r\n\r\n",
			want:   []Event{{Event: "custom", Data: "line1\nline2"}}},
		{name: "comments, id and retry skipped",
			stream: ": ping\n\nid: 7\nretry: 10\n\ndata: a\n: inside\n\n",
			want:   []Event{{Data: "a"}}},
		{name: "the event name does not outlive its event",
			stream: "event: one\ndata: 1\n\ndata: 2\n\n",
			want:   []Event{{Event: "one", Data: "1"}, {Data: "2"}}},
		{name: "an unterminated event is not dispatched",
			stream: "data: 1\n\ndata: {\"partial\":true}", want: []Event{{Data: "1"}}},
		{name: "an empty data field is an event", stream: "data:\n\n", want: []Event{{Data: ""}}},
		{name: "data exactly at the bound", stream: "data: " + strings.Repeat("y", max) + "\n\n",
			want: []Event{{Data: strings.Repeat("y", max)}}},
		{name: "an oversized line fails", stream: "data: a\n\ndata: " + big + "\n\ndata: b\n\n",
			want: []Event{{Data: "a"}}, err: "line longer than 64 bytes"},
		{name: "oversized joined data fails",
			stream: "data: " + strings.Repeat("y", 40) + "\ndata: " + strings.Repeat("y", 40) + "\n\n",
			err:    "event larger than 64 bytes"},
		{name: "an oversized line is dropped with its event", drop: true,
			stream: "data: a\n\nevent: big\ndata: head\ndata: " + big + "\ndata: tail\n\ndata: b\n\n",
			want:   []Event{{Data: "a"}, {Data: "b"}}},
		{name: "oversized joined data is dropped", drop: true,
			stream: "data: " + strings.Repeat("y", 40) + "\ndata: " + strings.Repeat("y", 40) + "\n\ndata: after\n\n",
			want:   []Event{{Data: "after"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := collect(t, tc.stream, Options{MaxEvent: max, DropOversize: tc.drop})
			if tc.err == "" && !errors.Is(err, io.EOF) || tc.err != "" && (err == nil || err.Error() != tc.err) {
				t.Fatalf("err = %v, want %q (\"\" = io.EOF)", err, tc.err)
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tc.want) {
				t.Fatalf("events = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestEventNameIsBounded(t *testing.T) {
	got, err := collect(t, "event: "+strings.Repeat("e", 300)+"\ndata: d\n\n", Options{MaxEvent: 1000})
	if !errors.Is(err, io.EOF) || len(got) != 1 || got[0].Event != strings.Repeat("e", maxEventName) {
		t.Fatalf("events %q, err %v, want one event named by the first %d bytes", got, err, maxEventName)
	}
}

func TestOversizeErrorIsTyped(t *testing.T) {
	_, err := collect(t, "data: "+strings.Repeat("z", 100)+"\n\n", Options{MaxEvent: 10})
	var oe *OversizeError
	if !errors.As(err, &oe) || oe.Max != 10 || !oe.Line {
		t.Fatalf("err = %#v, want an *OversizeError for a line", err)
	}
}

// TestActivityCountsEveryRead: keep-alive comments count, one call per
// read that returned data.
func TestActivityCountsEveryRead(t *testing.T) {
	stream := ": ping\n: ping\n"
	reads := 0
	err := Read(iotest.OneByteReader(strings.NewReader(stream)), Options{MaxEvent: 8, Activity: func() { reads++ }}, func(Event) {
		t.Fatal("a comment dispatched an event")
	})
	if !errors.Is(err, io.EOF) || reads != len(stream) {
		t.Fatalf("err %v, %d activity calls, want io.EOF and %d", err, reads, len(stream))
	}
}

func TestReadErrorIsReturned(t *testing.T) {
	boom := errors.New("connection reset")
	var got []Event
	err := Read(io.MultiReader(strings.NewReader("data: 1\n\n"), iotest.ErrReader(boom)), Options{MaxEvent: 8}, func(e Event) { got = append(got, e) })
	if !errors.Is(err, boom) || len(got) != 1 {
		t.Fatalf("err %v after %d events, want the read error after 1", err, len(got))
	}
}

func TestMaxEventIsRequired(t *testing.T) {
	if err := Read(strings.NewReader(""), Options{}, func(Event) {}); err == nil || !strings.Contains(err.Error(), "MaxEvent") {
		t.Fatalf("err = %v, want MaxEvent named", err)
	}
}
