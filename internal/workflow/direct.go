package workflow

import (
	"context"
	stdsql "database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/evidence"
	"github.com/agent-interop/runtime/ent/predicate"
	"github.com/agent-interop/runtime/ent/workitem"
	"github.com/agent-interop/runtime/internal/store"
)

// This file reads list_work_items' page on SQLite with statements run on
// the transaction directly (Service.directSQL), the same statements ent
// runs, scanned without ent's reflection: a 100-work page costs ent about
// ten allocations a row for its column holders, and modernc's driver
// parses every DATETIME column by trying time layouts in turn (two
// time.Parse calls a value at best). Here the time columns are selected
// as text (a CAST has no declared type, so the driver hands the text
// over) and parsed by parseStoreTime, which reads the one layout the
// store writes and leaves any other to the driver's own sequence of
// layouts. The rows become the same ent.WorkItem and ent.Evidence values
// ent's scan makes (TestDirectReadsAsEnt).

// directQuery runs the statement of s on tx.
func directQuery(ctx context.Context, tx *ent.Tx, s *sql.Selector) (*stdsql.Rows, error) {
	query, args := s.Query()
	return tx.QueryContext(ctx, query, args...)
}

// asText selects a time column as its stored text.
func asText(s *sql.Selector, column string) string {
	return "CAST(" + s.C(column) + " AS TEXT)"
}

// pageWorksDirect is pageWorks' query of the preview columns (one branch
// of it: preds are its conditions), run directly; rows are allocated in
// one slice.
func pageWorksDirect(ctx context.Context, tx *ent.Tx, preds []predicate.WorkItem, limit int) ([]*ent.WorkItem, error) {
	t := sql.Table(workitem.Table)
	s := sql.Dialect(dialect.SQLite).Select().From(t)
	s.Select(s.C(workitem.FieldID), s.C(workitem.FieldObjective), s.C(workitem.FieldAcceptanceCriteria),
		s.C(workitem.FieldSourceSession), s.C(workitem.FieldDestinationSession), s.C(workitem.FieldStatus),
		s.C(workitem.FieldChangedFiles), asText(s, workitem.FieldCreatedAt), asText(s, workitem.FieldUpdatedAt))
	for _, p := range preds {
		p(s)
	}
	for _, o := range workNewestFirst() {
		o(s)
	}
	s.Limit(limit + 1)
	rows, err := directQuery(ctx, tx, s)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	works := make([]ent.WorkItem, 0, limit+1)
	var id, objective, criteria, src, dst, status, files, created, updated stdsql.NullString
	for rows.Next() {
		if err := rows.Scan(&id, &objective, &criteria, &src, &dst, &status, &files, &created, &updated); err != nil {
			return nil, err
		}
		works = append(works, ent.WorkItem{})
		w := &works[len(works)-1]
		w.ID, w.Objective, w.Status = id.String, objective.String, workitem.Status(status.String)
		if src.Valid {
			w.SourceSession = new(string)
			*w.SourceSession = src.String
		}
		if dst.Valid {
			w.DestinationSession = new(string)
			*w.DestinationSession = dst.String
		}
		if err := unmarshalColumn(criteria, &w.AcceptanceCriteria, workitem.FieldAcceptanceCriteria); err != nil {
			return nil, err
		}
		if err := unmarshalColumn(files, &w.ChangedFiles, workitem.FieldChangedFiles); err != nil {
			return nil, err
		}
		if w.CreatedAt, err = timeColumn(created, workitem.FieldCreatedAt); err != nil {
			return nil, err
		}
		if w.UpdatedAt, err = timeColumn(updated, workitem.FieldUpdatedAt); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]*ent.WorkItem, len(works))
	for i := range works {
		out[i] = &works[i]
	}
	return out, nil
}

// evidenceIDsDirect is embedEvidenceIDs' query of the page's evidence
// (id, work and capture time, at most bound+1 rows), run directly.
func evidenceIDsDirect(ctx context.Context, tx *ent.Tx, ids []string, bound int) ([]*ent.Evidence, error) {
	t := sql.Table(evidence.Table)
	s := sql.Dialect(dialect.SQLite).Select().From(t)
	s.Select(s.C(evidence.FieldID), s.C(evidence.FieldWorkID), asText(s, evidence.FieldCapturedAt))
	evidence.WorkIDIn(ids...)(s)
	s.Limit(bound + 1)
	rows, err := directQuery(ctx, tx, s)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	recs := make([]ent.Evidence, 0, len(ids)) // a work or so has one; more grow the slice
	var id, work, captured stdsql.NullString
	for rows.Next() {
		if err := rows.Scan(&id, &work, &captured); err != nil {
			return nil, err
		}
		recs = append(recs, ent.Evidence{ID: id.String})
		e := &recs[len(recs)-1]
		if work.Valid {
			e.WorkID = new(string)
			*e.WorkID = work.String
		}
		if e.CapturedAt, err = timeColumn(captured, evidence.FieldCapturedAt); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]*ent.Evidence, len(recs))
	for i := range recs {
		out[i] = &recs[i]
	}
	return out, nil
}

// unmarshalColumn decodes a JSON column of strings as ent does
// (json.Unmarshal into v): NULL or empty leaves v as it is. The form the
// store writes for a list of plain strings is read by plainStrings.
func unmarshalColumn(c stdsql.NullString, v *[]string, name string) error {
	if !c.Valid || c.String == "" {
		return nil
	}
	if list, ok := plainStrings(c.String); ok {
		*v = list
		return nil
	}
	// json.Unmarshal only reads its input: the column's text is passed
	// without a copy.
	if err := json.Unmarshal(unsafe.Slice(unsafe.StringData(c.String), len(c.String)), v); err != nil {
		return fmt.Errorf("unmarshal field %s: %w", name, err)
	}
	return nil
}

// plainStrings reads a compact JSON array of strings without escapes,
// control characters or invalid UTF-8 (["a","b"], or [] as an empty
// list), which json.Unmarshal decodes to the bytes between the quotes;
// ok is false for any other text, left to json.Unmarshal. The strings
// share s.
func plainStrings(s string) ([]string, bool) {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, false
	}
	body := s[1 : len(s)-1]
	if body == "" {
		return []string{}, true
	}
	n := strings.Count(body, `","`) + 1
	list := make([]string, 0, n)
	for i := 0; ; {
		if i >= len(body) || body[i] != '"' {
			return nil, false
		}
		j := i + 1
		for j < len(body) && body[j] != '"' {
			if c := body[j]; c < 0x20 || c == '\\' {
				return nil, false
			}
			j++
		}
		if j == len(body) || !utf8.ValidString(body[i+1:j]) {
			return nil, false
		}
		list = append(list, body[i+1:j])
		if j+1 == len(body) {
			return list, true
		}
		if body[j+1] != ',' {
			return nil, false
		}
		i = j + 2
	}
}

// timeColumn is a time column selected as text; NULL is the zero time,
// as ent leaves it.
func timeColumn(c stdsql.NullString, name string) (time.Time, error) {
	if !c.Valid {
		return time.Time{}, nil
	}
	t, err := store.ParseTime(c.String)
	if err != nil {
		return time.Time{}, fmt.Errorf("field %s: %w", name, err)
	}
	return t, nil
}
