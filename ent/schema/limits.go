package schema

import "github.com/agent-interop/runtime/catalogs/limits"

// Column byte limits. Tool arguments are bounded in characters by the spec
// (catalogs/limits); a character takes at most limits.BytesPerChar bytes in
// UTF-8, so each column below holds every value a tool's schema allows and
// an ent validator never refuses what the generated decoder accepted.
// Writers outside MCP (migrate import-state) check against the same
// constants.
const (
	// MaxIDBytes bounds the runtime's own record IDs (work_<unixms>_…,
	// claim_<uuid>, …) and the IDs 0.3.x state files carry.
	MaxIDBytes = 200
	// MaxSessionBytes bounds every column naming a session: a work's and a
	// handoff's sessions, a review's reviewer, a claim's holder, evidence's
	// session, a participant and a message's sender and recipient.
	MaxSessionBytes = limits.BytesPerChar * max(limits.KindSession,
		limits.CreateWorkItemSourceSessionMaxLen, limits.CreateHandoffSourceSessionMaxLen,
		limits.CreateHandoffDestinationSessionMaxLen, limits.RecordReviewReviewerSessionIDMaxLen,
		limits.AcquireClaimSessionIDMaxLen, limits.SendConversationMessageSenderMaxLen,
		limits.SendConversationMessageRecipientMaxLen)
	// MaxNativeIDBytes bounds a participant's native session ID.
	MaxNativeIDBytes = limits.BytesPerChar * limits.JoinConversationNativeIDMaxLen
	// MaxWorkspaceBytes bounds a participant's workspace.
	MaxWorkspaceBytes = limits.BytesPerChar * limits.JoinConversationWorkspaceIDMaxLen
	// MaxKeyBytes bounds a message's idempotency key.
	MaxKeyBytes = limits.BytesPerChar * limits.SendConversationMessageIdempotencyKeyMaxLen
	// MaxReplyToBytes bounds the message a message replies to.
	MaxReplyToBytes = limits.BytesPerChar * limits.SendConversationMessageReplyToMaxLen
	// MaxRevisionBytes bounds a handoff's repository revision.
	MaxRevisionBytes = limits.BytesPerChar * limits.CreateHandoffRepositoryRevisionMaxLen
	// MaxResourceBytes bounds a claim's resource.
	MaxResourceBytes = limits.BytesPerChar * limits.AcquireClaimResourceMaxLen
	// MaxTitleBytes bounds a conversation's title.
	MaxTitleBytes = limits.BytesPerChar * limits.CreateConversationTitleMaxLen
)
