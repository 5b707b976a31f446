// Package acp is the runtime's one Agent Client Protocol (ACP v1) client:
// one adapter per acp entry of the agent catalog (spec/agents.yaml: Claude
// Code, Cursor, Gemini CLI, Qwen Code, ...) and of the user's agents file
// ([NewAgent]); what is particular to an agent is a declared quirk of its
// entry (Cursor's cursor/* requests: [CursorExtension]). Tested against
// real agents (claude-agent-acp, qwen, codex-acp, opencode acp, gemini) and a
// simulated Cursor peer.
//
// The wire layer is the runtime's one newline-delimited JSON-RPC 2.0
// connection (internal/jsonrpc, wrapped in conn.go) rather than
// acp-go-sdk's Connection: the delivery contract of
// providers.Adapter needs to know exactly when a request was written, to
// tell "never written" from "written, then the peer died" from "the agent
// answered with an error", and to answer Cursor's blocking cursor/* requests.
// acp-go-sdk's generated types are used for the outbound request payloads;
// everything the agent sends is decoded leniently and its raw JSON is kept,
// so an unknown session/update kind or content block is passed on as it came,
// never misread.
//
// The pieces:
//
//   - Client owns one agent process (own process group, killed as a group on
//     Close): initialize (bounded; a line that is not JSON-RPC before the
//     agent's first answer fails it at once with [NotACPError]), authenticate, session new/load/resume/list/close,
//     prompts queued one at a time per session, cancel as a notification,
//     session/update mapped to providers.NativeEvent, session/request_permission
//     held until answered by option kind, fs/read_text_file served inside the
//     session's workspace, and -32601 for every other inbound request.
//   - Adapter implements providers.Adapter over a lazily started Client; the
//     claude and cursor packages configure it.
package acp
