package importstate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/providers"
)

// conversationsVersion is the newest conversations.json format 0.3.x wrote.
const conversationsVersion = 2

// retained is how many messages a conversation keeps
// (conversations.MaxMessagesPerConversation).
const retained = 500

var (
	participantRoles = []string{"sender", "reviewer", "editor"}
	deliveries       = []string{"queued", "rejected", "delivery_unknown", "completed", "dispatching"}
)

// ReasonInFlight is the reason an operation imported while its send was in
// flight carries: it may or may not have reached the provider, and it is
// never resent.
const ReasonInFlight = "imported from 0.3.x while in flight"

// parseConversations checks conversations.json and maps its records into
// snap. now stamps what the import itself decides (an in-flight send
// becoming delivery_unknown).
func parseConversations(src *source, snap *Snapshot, now time.Time) error {
	var f conversationsFile
	if err := src.decode(&f); err != nil {
		return err
	}
	var raw rawMessages
	_ = json.Unmarshal(src.data, &raw) // the typed decode succeeded, so this does too
	c := &checker{src: src}
	if f.Version != nil && (*f.Version < 1 || *f.Version > conversationsVersion) {
		c.fail("version", "version %d is not a 0.3.x conversations file (0.3.x wrote 1 or %d)", *f.Version, conversationsVersion)
		return c.err()
	}
	convs := map[string]bool{}
	messages := map[string]string{} // message id -> its path
	keys := map[string]string{}     // idempotency key -> message path
	for i, conv := range f.Conversations {
		p := index("conversations", i)
		c.unique(convs, p, "conversation", conv.ID)
		var rawConv []rawMessage
		if i < len(raw.Conversations) {
			rawConv = raw.Conversations[i].Messages
		}
		c.conversation(snap, p, conv, rawConv, messages, keys, now)
	}
	return c.err()
}

func (c *checker) conversation(snap *Snapshot, p string, conv conversation03, rawMsgs []rawMessage, messages, keys map[string]string, now time.Time) {
	r := conversationRec{origin: origin{c.src, p}}
	r.ID = c.id(p+".id", conv.ID)
	r.Title = c.required(p+".title", strings.TrimSpace(conv.Title), 0)
	if t := cut(r.Title, maxTitleChars); t != r.Title {
		snap.note(c.src, p+".title", "conversation %s: the title is cut to %d characters", conv.ID, maxTitleChars)
		r.Title = strings.TrimSpace(t)
	}
	r.CreatedAt = c.time(p+".createdAt", conv.CreatedAt)
	r.UpdatedAt = c.timeOr(p+".updatedAt", conv.UpdatedAt, r.CreatedAt)

	byID := c.participants(snap, p, conv, r.CreatedAt)
	recs, inConv, maxSeq := c.conversationMessages(snap, p, conv, rawMsgs, byID, messages, keys, now)
	r.LastSequence = maxSeq
	if conv.LastSequence != nil {
		switch {
		case *conv.LastSequence < 0:
			c.fail(p+".lastSequence", "must not be negative; found %d", *conv.LastSequence)
		case *conv.LastSequence < maxSeq:
			snap.note(c.src, p+".lastSequence", "conversation %s: lastSequence %d is below its newest message's %d; %d is kept", conv.ID, *conv.LastSequence, maxSeq, maxSeq)
		default:
			r.LastSequence = *conv.LastSequence
		}
	}
	c.replyLinks(conv.ID, recs, inConv, r.LastSequence)
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].Sequence < recs[j].Sequence })
	snap.Conversations = append(snap.Conversations, r)
	snap.Messages = append(snap.Messages, recs...)
}

// participants checks conv's participants into snap, joined at
// createdAt: IDs unique in the conversation, one per session. It returns
// them by participant ID.
func (c *checker) participants(snap *Snapshot, p string, conv conversation03, createdAt time.Time) map[string]participantRec {
	byID := map[string]participantRec{}
	sessions := map[string]string{}
	for i, pa := range conv.Participants {
		pp := index(p+".participants", i)
		rec := participantRec{origin: origin{c.src, pp}, ConversationID: conv.ID, JoinedAt: createdAt}
		if !slices.Contains(providers.Order(), providers.ID(pa.Provider)) {
			var names []string
			for _, id := range providers.Order() {
				names = append(names, string(id))
			}
			c.fail(pp+".provider", "must be one of %s; found %q", strings.Join(names, ", "), pa.Provider)
		}
		rec.Provider = pa.Provider
		rec.NativeID = c.required(pp+".nativeId", pa.NativeID, maxNativeIDBytes)
		rec.ParticipantID = pa.ID
		if strings.TrimSpace(rec.ParticipantID) == "" {
			rec.ParticipantID = pa.Provider + ":" + pa.NativeID
		} else if len(rec.ParticipantID) > maxParticipantLen {
			c.fail(pp+".id", "must be at most %d bytes; it has %d", maxParticipantLen, len(rec.ParticipantID))
		}
		rec.WorkspaceID = c.optional(pp+".workspaceId", pa.WorkspaceID, maxWorkspaceBytes)
		if pa.Role != nil && *pa.Role != "" {
			v := c.enum(pp+".role", *pa.Role, "", participantRoles...)
			rec.Role = &v
		}
		if _, dup := byID[rec.ParticipantID]; dup {
			c.fail(pp+".id", "participant %q appears twice in conversation %s", rec.ParticipantID, conv.ID)
		}
		session := pa.Provider + ":" + pa.NativeID
		if other, dup := sessions[session]; dup {
			c.fail(pp, "session %s is already participant %q of conversation %s", session, other, conv.ID)
		}
		byID[rec.ParticipantID], sessions[session] = rec, rec.ParticipantID
		snap.Participants = append(snap.Participants, rec)
	}
	return byID
}

// conversationMessages checks conv's messages and their sequences: all
// given, or (a pre-0.3 file) none, numbered 1..n. It returns the message
// records in file order, their sequences by message ID and the highest.
func (c *checker) conversationMessages(snap *Snapshot, p string, conv conversation03, rawMsgs []rawMessage,
	byID map[string]participantRec, messages, keys map[string]string, now time.Time) ([]messageRec, map[string]int64, int64) {
	numbered := 0
	for _, m := range conv.Messages {
		if m.Sequence != nil {
			numbered++
		}
	}
	derive := numbered == 0 && len(conv.Messages) > 0
	if derive {
		snap.note(c.src, p+".messages", "conversation %s: messages have no sequence (a pre-0.3 file); they are numbered 1..%d in file order, as 0.3.x did", conv.ID, len(conv.Messages))
	}
	seqs := map[int64]string{}
	inConv := map[string]int64{}
	var recs []messageRec
	var maxSeq int64
	for i, m := range conv.Messages {
		mp := index(p+".messages", i)
		var seq int64
		switch {
		case derive:
			seq = int64(i + 1)
		case m.Sequence == nil:
			c.fail(mp+".sequence", "required: the other messages of conversation %s have one", conv.ID)
		case *m.Sequence < 1:
			c.fail(mp+".sequence", "must be at least 1; found %d", *m.Sequence)
		default:
			seq = *m.Sequence
		}
		if seq > 0 {
			if other, dup := seqs[seq]; dup {
				c.fail(mp+".sequence", "sequence %d is taken by %s", seq, other)
			}
			seqs[seq] = mp
			maxSeq = max(maxSeq, seq)
		}
		var rm rawMessage
		if i < len(rawMsgs) {
			rm = rawMsgs[i]
		}
		rec := c.message(snap, mp, conv.ID, m, seq, byID, messages, keys, rm.Receipt, rm.DispatchLease, now)
		inConv[rec.ID] = seq
		recs = append(recs, rec)
	}
	return recs, inConv, maxSeq
}

// replyLinks checks that reply links name a message of conversation
// convID, earlier than the reply; one that is not in the file must have
// been trimmed (0.3.x deleted trimmed messages), so it is older than every
// retained one.
func (c *checker) replyLinks(convID string, recs []messageRec, inConv map[string]int64, lastSequence int64) {
	first := lastSequence + 1
	for _, rec := range recs {
		if rec.Sequence > 0 {
			first = min(first, rec.Sequence)
		}
	}
	for _, rec := range recs {
		if rec.ReplyTo == nil {
			continue
		}
		target, ok := inConv[*rec.ReplyTo]
		switch {
		case ok && target >= rec.Sequence && rec.Sequence > 0:
			c.fail(rec.path+".replyTo", "names message %s, which is not earlier in conversation %s", *rec.ReplyTo, convID)
		case !ok && first <= 1:
			c.fail(rec.path+".replyTo", "names message %q, which is not in conversation %s (and none of its messages were trimmed)", *rec.ReplyTo, convID)
		}
	}
}

func (c *checker) message(snap *Snapshot, p, convID string, m message03, seq int64, participants map[string]participantRec,
	messages, keys map[string]string, rawReceipt, rawLease json.RawMessage, now time.Time) messageRec {
	r := messageRec{origin: origin{c.src, p}, ConversationID: convID, Sequence: seq}
	r.ID = c.id(p+".id", m.ID)
	if other, dup := messages[m.ID]; dup && m.ID != "" {
		c.fail(p+".id", "message %q appears twice (also at %s)", m.ID, other)
	}
	messages[m.ID] = p
	if m.ConversationID != "" && m.ConversationID != convID {
		c.fail(p+".conversationId", "names conversation %q, but the message is in %s", m.ConversationID, convID)
	}
	r.Sender = c.required(p+".sender", m.Sender, maxParticipantLen)
	r.Recipient = c.required(p+".recipient", m.Recipient, maxParticipantLen)
	if _, ok := participants[r.Sender]; !ok && r.Sender != "" {
		c.fail(p+".sender", "names %q, which is not a participant of conversation %s", r.Sender, convID)
	}
	to, ok := participants[r.Recipient]
	if !ok && r.Recipient != "" {
		c.fail(p+".recipient", "names %q, which is not a participant of conversation %s", r.Recipient, convID)
	}
	r.Text = m.Text
	c.chars(p+".text", m.Text, "send_conversation_message", "text")
	r.ReplyTo = c.optional(p+".replyTo", m.ReplyTo, maxReplyToBytes)
	r.CreatedAt = c.time(p+".createdAt", m.CreatedAt)
	if m.IdempotencyKey != nil && strings.TrimSpace(*m.IdempotencyKey) != "" {
		r.IdempotencyKey = *m.IdempotencyKey
		if len(r.IdempotencyKey) > maxKeyBytes {
			c.fail(p+".idempotencyKey", "must be at most %d bytes; it has %d", maxKeyBytes, len(r.IdempotencyKey))
		}
	} else {
		r.IdempotencyKey = "import_" + m.ID
	}
	if other, dup := keys[r.IdempotencyKey]; dup {
		c.fail(p+".idempotencyKey", "key %q is also used by %s", r.IdempotencyKey, other)
	}
	keys[r.IdempotencyKey] = p
	r.Op, r.InFlight = c.operation(snap, p, r, m, to, rawReceipt, rawLease, now)
	return r
}

// operation maps a message's 0.3.x delivery state and receipt onto the
// delivery operation that carries it.
func (c *checker) operation(snap *Snapshot, p string, r messageRec, m message03, to participantRec, rawReceipt, rawLease json.RawMessage, now time.Time) (delivery.ImportedOperation, bool) {
	state := m.Delivery
	if state == "" {
		state = "delivery_unknown"
		if m.Receipt != nil {
			state = deliveryOf(m.Receipt)
		}
		snap.note(c.src, p, "message %s has no delivery state; it is imported as %s", m.ID, state)
	} else {
		c.enum(p+".delivery", state, "", deliveries...)
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("[agent-interop message %s from %s]\n%s", r.ID, r.Sender, r.Text)))
	op := delivery.ImportedOperation{
		ID: "op_import_" + r.ID, IdempotencyKey: r.IdempotencyKey, Provider: to.Provider, NativeID: to.NativeID,
		Operation: delivery.OpSend, TextSHA256: hex.EncodeToString(sum[:]),
		Request:   map[string]any{"mode": "send", "conversationId": r.ConversationID, "conversationMessageId": r.ID},
		CreatedAt: r.CreatedAt, UpdatedAt: r.CreatedAt,
	}
	original := map[string]any{"from": "0.3.x", "delivery": m.Delivery}
	if len(rawReceipt) > 0 && string(rawReceipt) != "null" {
		original["receipt"] = rawJSON(compactJSON(rawReceipt))
	}
	if len(rawLease) > 0 && string(rawLease) != "null" {
		original["dispatchLease"] = rawJSON(compactJSON(rawLease))
	}
	if m.DeliveryUnknownAt != nil && *m.DeliveryUnknownAt != "" {
		original["deliveryUnknownAt"] = *m.DeliveryUnknownAt
	}
	op.Original, _ = json.Marshal(original)
	if rc := m.Receipt; rc != nil {
		op.ProviderState = rc.ProviderState
		if rc.Provider != "" && (rc.Provider != to.Provider || rc.NativeID != to.NativeID) && to.Provider != "" {
			snap.note(c.src, p+".receipt", "message %s: the receipt names %s:%s, the recipient is %s:%s; the operation records the recipient's session",
				m.ID, rc.Provider, rc.NativeID, to.Provider, to.NativeID)
		}
	}
	inFlight := state == "dispatching" || (state == "queued" && m.Receipt == nil)
	switch {
	case inFlight:
		op.Status, op.Reason, op.Classification = providers.StatusDeliveryUnknown, ReasonInFlight, "delivery_unknown"
		op.UpdatedAt = now
	case state == "queued":
		op.Status = providers.StatusQueued
		op.Receipt = receiptDetail(m.Receipt)
	case state == "completed":
		op.Status = providers.StatusCompleted
		op.Receipt = receiptDetail(m.Receipt)
	case state == "rejected":
		op.Status, op.Classification = providers.StatusRejected, "rejected"
		op.Reason = receiptReason(m.Receipt, "0.3.x recorded the send as rejected")
	case state == "delivery_unknown":
		op.Status, op.Classification = providers.StatusDeliveryUnknown, "delivery_unknown"
		op.Reason = receiptReason(m.Receipt, "0.3.x recorded the outcome as unknown")
		if m.DeliveryUnknownAt != nil && *m.DeliveryUnknownAt != "" {
			op.UpdatedAt = c.timeValue(p+".deliveryUnknownAt", *m.DeliveryUnknownAt)
		}
	}
	if m.Receipt != nil && !inFlight && m.Delivery != "" {
		if want := deliveryOf(m.Receipt); want != state {
			snap.note(c.src, p+".delivery", "message %s: delivery %s disagrees with its receipt (which says %s); %s is kept", m.ID, state, want, state)
		}
	}
	return op, inFlight
}

// deliveryOf is 0.3.x's rule: accepted ? (status completed ? completed :
// queued) : rejected; a receipt classified delivery_unknown is that.
func deliveryOf(r *receipt03) string {
	var d struct {
		Classification string `json:"classification"`
	}
	_ = json.Unmarshal(r.Detail, &d)
	switch {
	case d.Classification == "delivery_unknown":
		return "delivery_unknown"
	case r.Accepted == nil || !*r.Accepted:
		return "rejected"
	case r.Status == "completed":
		return "completed"
	}
	return "queued"
}

// receiptDetail is what the operation's receipt shows as detail.
func receiptDetail(r *receipt03) any {
	if r == nil || len(r.Detail) == 0 || string(r.Detail) == "null" {
		return nil
	}
	return rawJSON(compactJSON(r.Detail))
}

// receiptReason is the receipt's detail.reason, or def.
func receiptReason(r *receipt03, def string) string {
	if r != nil {
		var d struct {
			Reason any `json:"reason"`
		}
		if json.Unmarshal(r.Detail, &d) == nil {
			if s, ok := d.Reason.(string); ok && strings.TrimSpace(s) != "" {
				return s
			}
		}
	}
	return def
}

func compactJSON(b []byte) []byte {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return b
	}
	return out.Bytes()
}
