package freebuff

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/internal/paging"
)

// Page sizes of the Freebuff listings (the spec's limit defaults).
const (
	DefaultProjectLimit = limits.ListProjectsLimitDefault
	DefaultListLimit    = limits.ListThreadsLimitDefault
	DefaultFileLimit    = limits.ListProjectFilesLimitDefault
	MaxPageLimit        = limits.ListProjectsLimitMax
	// ThreadMessages is how many of its newest messages get_thread carries;
	// get_thread_messages pages them all.
	ThreadMessages = 10
)

// Page is one page of a Freebuff listing: the records under Field (the
// answer's one key: projects, threads, messages or files) and the cursor
// of the next page while more exist.
type Page[T any] struct {
	Items      []T
	NextCursor string
	field      string
	next       func(kept []T) string
}

// MarshalJSON writes {"<field>": [...], "nextCursor": "..."}.
func (p Page[T]) MarshalJSON() ([]byte, error) {
	items := p.Items
	if items == nil {
		items = []T{}
	}
	m := map[string]any{p.field: items}
	if p.NextCursor != "" {
		m["nextCursor"] = p.NextCursor
	}
	return marshalCompact(m)
}

// PageLen implements paging.Cuttable.
func (p Page[T]) PageLen() int { return len(p.Items) }

// CutPage implements paging.Cuttable.
func (p Page[T]) CutPage(n int) any {
	p.Items = p.Items[:n]
	p.NextCursor = p.next(p.Items)
	return p
}

// keyedPage pages items in their given order by the key of the last one
// delivered.
func keyedPage[T any](tool, field string, f paging.Filter, items []T, key func(T) string, limit int64, def int, cursor string) (Page[T], error) {
	n, err := paging.Limit(tool, limit, def, MaxPageLimit)
	if err != nil {
		return Page[T]{}, err
	}
	keys, err := paging.Decode(tool, f, cursor, 1)
	if err != nil {
		return Page[T]{}, err
	}
	after := ""
	if keys != nil {
		after = keys[0]
	}
	page, more, found := paging.AfterKey(items, key, after, n)
	if !found {
		return Page[T]{}, paging.Stale(tool)
	}
	next := func(kept []T) string { return paging.Encode(tool, f, key(kept[len(kept)-1])) }
	p := Page[T]{Items: page, field: field, next: next}
	if more {
		p.NextCursor = next(page)
	}
	return p, nil
}

// ListProjectsPage answers list_projects: a page of projects in the order
// Freebuff lists them.
func (s *Service) ListProjectsPage(ctx context.Context, limit int64, cursor string) (Page[Project], error) {
	ps, err := s.ListProjects(ctx)
	if err != nil {
		return Page[Project]{}, err
	}
	return keyedPage("list_projects", "projects", nil, ps, func(p Project) string { return p.ID }, limit, DefaultProjectLimit, cursor)
}

// ListThreadsPage answers list_threads: a page of one project's threads
// (every project's when projectID is "").
func (s *Service) ListThreadsPage(ctx context.Context, projectID string, limit int64, cursor string) (Page[ThreadSummary], error) {
	ts, err := s.ListThreads(ctx, projectID)
	if err != nil {
		return Page[ThreadSummary]{}, err
	}
	return keyedPage("list_threads", "threads", paging.F("projectId", projectID), ts, func(t ThreadSummary) string { return t.ID }, limit, DefaultListLimit, cursor)
}

// ListActiveThreadsPage answers list_active_threads.
func (s *Service) ListActiveThreadsPage(ctx context.Context, limit int64, cursor string) (Page[ProgressSnapshot], error) {
	ss, err := s.ListActiveThreads(ctx)
	if err != nil {
		return Page[ProgressSnapshot]{}, err
	}
	return keyedPage("list_active_threads", "threads", nil, ss, func(p ProgressSnapshot) string { return p.ThreadID }, limit, DefaultListLimit, cursor)
}

// ListProjectFilesPage answers list_project_files: a page of the sorted
// file names of one directory.
func (s *Service) ListProjectFilesPage(ctx context.Context, projectID, relative string, limit int64, cursor string) (Page[string], error) {
	const tool = "list_project_files"
	n, err := paging.Limit(tool, limit, DefaultFileLimit, MaxPageLimit)
	if err != nil {
		return Page[string]{}, err
	}
	f := paging.F("projectId", projectID, "relative", relative)
	keys, err := paging.Decode(tool, f, cursor, 1)
	if err != nil {
		return Page[string]{}, err
	}
	files, err := s.ListProjectFiles(ctx, projectID, relative)
	if err != nil {
		return Page[string]{}, err
	}
	after := ""
	if keys != nil {
		after = keys[0]
	}
	id := func(s string) string { return s }
	page, more := paging.AfterSorted(files, id, after, n)
	next := func(kept []string) string { return paging.Encode(tool, f, kept[len(kept)-1]) }
	p := Page[string]{Items: page, field: "files", next: next}
	if more {
		p.NextCursor = next(page)
	}
	return p, nil
}

// ThreadMessagesPage answers get_thread_messages: a page of a thread's
// sanitized messages, oldest first. Messages are only appended, so the
// position of the next message is a stable cursor.
func (s *Service) ThreadMessagesPage(ctx context.Context, threadID string, limit int64, cursor string) (Page[any], error) {
	const tool = "get_thread_messages"
	n, err := paging.Limit(tool, limit, DefaultListLimit, MaxPageLimit)
	if err != nil {
		return Page[any]{}, err
	}
	f := paging.F("threadId", threadID)
	keys, err := paging.Decode(tool, f, cursor, 1)
	if err != nil {
		return Page[any]{}, err
	}
	start := 0
	if keys != nil {
		if start, err = strconv.Atoi(keys[0]); err != nil || start < 0 {
			return Page[any]{}, paging.Invalid(tool, "cursor", "is malformed; pass nextCursor back unchanged or omit cursor")
		}
	}
	msgs, err := s.GetThreadMessages(ctx, threadID)
	if err != nil {
		return Page[any]{}, err
	}
	start = min(start, len(msgs))
	end := min(start+n, len(msgs))
	next := func(kept []any) string { return paging.Encode(tool, f, strconv.Itoa(start+len(kept))) }
	p := Page[any]{Items: msgs[start:end], field: "messages", next: next}
	if end < len(msgs) {
		p.NextCursor = next(p.Items)
	}
	return p, nil
}

// ThreadWithNewestMessages is get_thread: the thread with only its newest
// ThreadMessages messages and how many were left out.
func (s *Service) ThreadWithNewestMessages(ctx context.Context, threadID string) (ThreadDetail, error) {
	t, err := s.GetThread(ctx, threadID)
	if err != nil {
		return ThreadDetail{}, err
	}
	if n := len(t.Messages); n > ThreadMessages {
		t.MessagesOmitted = n - ThreadMessages
		t.Messages = t.Messages[n-ThreadMessages:]
	}
	return t, nil
}

func marshalCompact(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

var _ paging.Cuttable = Page[any]{}
