package workflow

import (
	"time"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/internal/paging"
)

// Tool names the cursors of this package are issued for.
const (
	toolListWorks    = "list_work_items"
	toolGetWork      = "get_work_item"
	toolListEvidence = "list_evidence"
	toolWorkGraph    = "get_work_graph"
)

// Page sizes (the spec's limit defaults; the maximum is paging's).
const (
	DefaultListLimit  = limits.ListEvidenceLimitDefault
	DefaultWorksLimit = limits.ListWorkItemsLimitDefault
	DefaultWorkLimit  = limits.GetWorkItemLimitDefault
	MaxPageLimit      = limits.ListWorkItemsLimitMax
)

// countCap bounds the counts of omitted records: counting stops there, so
// a count costs at most that many index entries however large the store.
const countCap = 1000

// keyTime is the cursor form of a timestamp: exact to the nanosecond.
func keyTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// parseKeyTime reads a cursor timestamp; a bad one makes the cursor
// malformed.
func parseKeyTime(tool, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, paging.Invalid(tool, "cursor", "is malformed; pass nextCursor back unchanged or omit cursor")
	}
	return t, nil
}

// timeKey is a decoded (time, id) keyset position; zero when the query
// starts at the beginning.
type timeKey struct {
	at time.Time
	id string
}

func (k timeKey) set() bool { return k.id != "" }

// decodeTimeKey decodes a (time, id) cursor of tool under filter.
func decodeTimeKey(tool string, f paging.Filter, cursor string) (timeKey, error) {
	keys, err := paging.Decode(tool, f, cursor, 2)
	if err != nil || keys == nil {
		return timeKey{}, err
	}
	at, err := parseKeyTime(tool, keys[0])
	if err != nil {
		return timeKey{}, err
	}
	if keys[1] == "" {
		return timeKey{}, paging.Invalid(tool, "cursor", "is malformed; pass nextCursor back unchanged or omit cursor")
	}
	return timeKey{at: at, id: keys[1]}, nil
}

func sinceKey(t *time.Time) string {
	if t == nil {
		return ""
	}
	return keyTime(*t)
}

// The paged answers of this package can be cut by the server's guard.
var (
	_ paging.Cuttable = WorkList{}
	_ paging.Cuttable = WorkDetail{}
	_ paging.Cuttable = EvidenceList{}
	_ paging.Cuttable = Graph{}
)
