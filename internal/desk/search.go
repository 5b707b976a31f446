package desk

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/claim"
	"github.com/agent-interop/runtime/ent/conversation"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/ent/providersession"
	"github.com/agent-interop/runtime/ent/workitem"
)

// Search across the desk's views, from the box every page carries. An id
// (a work item's, a receipt's, a conversation's, a claim's) or a session
// reference ("<provider>:<nativeId>") jumps straight to its page; other
// text lists the work items, conversations and sessions it appears in,
// each a bounded read (searchRows per view, newest first; a look-up by
// primary key or an indexed column for an id).

// searchRows bounds the hits shown per view.
const searchRows = 20

// maxSearchText bounds the text searched for.
const maxSearchText = 200

// SearchHit is one session found by text.
type SearchHit struct {
	Provider, NativeID, Title string
}

// searchView is the data of the search page.
type searchView struct {
	Query         string
	Work          []WorkRow
	Conversations []ConversationRow
	Sessions      []SearchHit
}

// jump returns the page of an id or session reference the store holds,
// or "".
func (r *reader) jump(ctx context.Context, q string) (string, error) {
	if n, err := r.client.WorkItem.Query().Where(workitem.ID(q)).Count(ctx); err != nil || n > 0 {
		return joinPath("work", q), err
	}
	if n, err := r.client.Operation.Query().Where(operation.ID(q)).Count(ctx); err != nil || n > 0 {
		return joinPath("receipts", q), err
	}
	if n, err := r.client.Conversation.Query().Where(conversation.ID(q)).Count(ctx); err != nil || n > 0 {
		return joinPath("conversations", q), err
	}
	if c, err := r.client.Claim.Query().Where(claim.ID(q)).Select(claim.FieldResource).Only(ctx); err == nil {
		return Base + "/claims" + queryString("resource", c.Resource), nil
	} else if !ent.IsNotFound(err) {
		return "", err
	}
	if p := splitSessionRef(q); p != "" {
		return p, nil
	}
	return "", nil
}

func (r *reader) search(ctx context.Context, q string) (searchView, error) {
	v := searchView{Query: q}
	page, err := r.work(ctx, WorkFilter{Query: q, Limit: searchRows})
	if err != nil {
		return v, err
	}
	v.Work = page.Rows
	convs, err := r.client.Conversation.Query().Where(conversation.TitleContains(q)).
		Order(ent.Desc(conversation.FieldUpdatedAt), ent.Desc(conversation.FieldID)).Limit(searchRows).All(ctx)
	if err != nil {
		return v, fmt.Errorf("search conversations: %w", err)
	}
	for _, c := range convs {
		v.Conversations = append(v.Conversations, ConversationRow{ID: c.ID, Title: c.Title, Updated: c.UpdatedAt, LastSequence: c.LastSequence})
	}
	ss, err := r.client.ProviderSession.Query().
		Where(providersession.Or(providersession.NativeIDContains(q), providersession.TitleContains(q), providersession.CwdContains(q))).
		Order(ent.Desc(providersession.FieldLastSeenAt)).Limit(searchRows).
		Select(providersession.FieldProvider, providersession.FieldNativeID, providersession.FieldTitle).All(ctx)
	if err != nil {
		return v, fmt.Errorf("search sessions: %w", err)
	}
	for _, s := range ss {
		v.Sessions = append(v.Sessions, SearchHit{Provider: s.Provider, NativeID: s.NativeID, Title: s.Title})
	}
	return v, nil
}

func (h *Handler) searchPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.withCtx(r)
	defer cancel()
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if len(q) > maxSearchText {
		h.render(w, http.StatusBadRequest, "notfound", pageData{Title: "Bad request", Data: fmt.Sprintf("q: at most %d characters", maxSearchText)})
		return
	}
	if q != "" {
		to, err := h.read.jump(ctx, q)
		if err != nil {
			h.fail(w, err)
			return
		}
		if to != "" {
			http.Redirect(w, r, to, http.StatusSeeOther)
			return
		}
	}
	v := searchView{Query: q}
	if q != "" {
		var err error
		if v, err = h.read.search(ctx, q); err != nil {
			h.fail(w, err)
			return
		}
	}
	pd := h.page("Search", "", "", v)
	pd.Query = q
	h.render(w, http.StatusOK, "search", pd)
}
