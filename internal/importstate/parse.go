package importstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// File is one input file: its path (for messages) and its bytes.
type File struct {
	Path string
	Data []byte
}

// Parse checks the 0.3.x files (either may be nil) and maps their records
// onto the store's, without touching any store. Malformed input is refused
// with every problem found (up to 50 per file), each naming the file, the
// line and column, and the path of the value. now is the import time.
func Parse(state, conversations *File, now time.Time) (*Snapshot, error) {
	snap := &Snapshot{}
	var errs []error
	// state.json first: a conversations.json problem is reported too.
	if state != nil {
		src := newSource(state.Path, state.Data)
		sum := FileSummary{Role: "state", Path: state.Path, Found: true}
		if err := src.strict(); err != nil {
			errs = append(errs, err)
		} else if err := parseState(src, snap, now); err != nil {
			errs = append(errs, err)
		} else {
			sum.Ignored = ignored(src, stateKeys)
		}
		snap.Files = append(snap.Files, sum)
	}
	if conversations != nil {
		src := newSource(conversations.Path, conversations.Data)
		sum := FileSummary{Role: "conversations", Path: conversations.Path, Found: true}
		if err := src.strict(); err != nil {
			errs = append(errs, err)
		} else if err := parseConversations(src, snap, now); err != nil {
			errs = append(errs, err)
		} else {
			sum.Ignored = ignored(src, conversationsKeys)
		}
		snap.Files = append(snap.Files, sum)
	}
	if len(errs) > 0 {
		return nil, &MalformedError{Err: errors.Join(errs...)}
	}
	return snap, nil
}

// MalformedError refuses input files; Err joins one *InputError per
// problem.
type MalformedError struct{ Err error }

func (e *MalformedError) Error() string {
	return "the 0.3.x files are not imported, the store is unchanged:\n" + e.Err.Error()
}

func (e *MalformedError) Unwrap() error { return e.Err }

// ignored lists the top-level members of a file that are not imported.
func ignored(src *source, known []string) []string {
	var top map[string]json.RawMessage
	if json.Unmarshal(src.data, &top) != nil {
		return nil
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if slices.Contains(known, k) {
			continue
		}
		var list []json.RawMessage
		if json.Unmarshal(top[k], &list) == nil {
			out = append(out, fmt.Sprintf("%s (%d entries)", k, len(list)))
		} else {
			out = append(out, k)
		}
	}
	return out
}
