package events

import (
	"strconv"

	"github.com/agent-interop/runtime/internal/paging"
	"github.com/agent-interop/runtime/internal/providers"
)

// toolRead is the tool read cursors are issued for.
const toolRead = "read_session_events"

func eventCursor(k key, after int64) string {
	return paging.Encode(toolRead, paging.F("provider", string(k.provider), "nativeId", k.nativeID), strconv.FormatInt(after, 10))
}

// CursorSequence returns the afterSequence a read_session_events cursor of
// the session resumes after; ok is false for an empty cursor.
func CursorSequence(provider providers.ID, nativeID, cursor string) (after int64, ok bool, err error) {
	keys, err := paging.Decode(toolRead, paging.F("provider", string(provider), "nativeId", nativeID), cursor, 1)
	if err != nil || keys == nil {
		return 0, false, err
	}
	after, err = strconv.ParseInt(keys[0], 10, 64)
	if err != nil || after < 0 {
		return 0, false, paging.Invalid(toolRead, "cursor", "is malformed; pass nextCursor back unchanged or omit cursor")
	}
	return after, true, nil
}

// PageLen implements paging.Cuttable.
func (p Page) PageLen() int { return len(p.Events) }

// CutPage implements paging.Cuttable: next and the cursor resume after the
// last event kept.
func (p Page) CutPage(n int) any {
	p.Events = p.Events[:n]
	p.Next = p.Events[n-1].Sequence
	p.NextCursor = eventCursor(p.session, p.Next)
	return p
}

var _ paging.Cuttable = Page{}
