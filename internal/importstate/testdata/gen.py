#!/usr/bin/env python3
"""Writes the 0.3.x fixture files (pretty-printed as 0.3.x's JSON.stringify(v, null, 2) did).

The shapes follow ../../../../shared/reference/upstream-0.3.md section 4. Run it from this
directory after changing it; the files it writes are committed.
"""
import hashlib, json, os

def dump(path, value):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")

def stringify_hash(data):
    """0.3.x's contentHash: SHA-256 of JSON.stringify(data)."""
    return hashlib.sha256(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()

def evidence(id, work, kind, trust, data, summary, captured, session=None, adapter="agent-interop-runtime", protocol="local process", hash=None):
    e = {"id": id}
    if work is not None:
        e["workId"] = work
    if session is not None:
        e["sessionId"] = session
    e.update({"kind": kind, "trust": trust, "source": {"adapter": adapter, "protocol": protocol},
              "capturedAt": captured, "summary": summary, "data": data,
              "contentHash": hash or stringify_hash(data)})
    return e

# ---------------------------------------------------------------- normal
W1 = "work_1767225600000_a1b2c3"
W2 = "work_1767225660000_d4e5f6"
test_data = {"id": "verification_6f1c", "name": "test", "command": "go test ./...", "exitCode": 0, "stdout": "ok\n"}
review_id = "review_0f9e3c2a-1b4d-4e5f-8a9b-0c1d2e3f4a5b"
review = {"id": review_id, "workId": W1, "subjectEvidenceIds": ["evidence_1767225700000_000001"],
          "reviewerSessionId": "claude-code:sess-r", "independence": {"differentSession": True, "differentProvider": True,
          "freshContext": True, "writeAccess": False}, "findings": [{"id": "f1", "severity": "minor", "title": "Name",
          "detail": "Rename the helper.", "file": "auth.go", "line": 12}], "verdict": "approve",
          "provenance": "agent_claim", "createdAt": "2026-01-01T00:10:00.000Z"}
normal_state = {
    "works": [
        {"id": W1, "objective": "Add token refresh to the auth client", "acceptanceCriteria": ["refresh before expiry", "tests pass"],
         "sourceSession": "codex:thread-a", "destinationSession": "claude-code:sess-b", "status": "in_progress",
         "changedFiles": ["auth/client.go"], "risks": ["clock skew"], "unresolvedQuestions": [],
         "evidenceIds": ["evidence_1767225700000_000001", "evidence_1767226200000_000002"],
         "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:10:00.000Z"},
        {"id": W2, "objective": "Document the refresh flow", "acceptanceCriteria": ["docs/auth.md explains refresh"],
         "status": "open", "changedFiles": [], "risks": [], "unresolvedQuestions": [], "evidenceIds": [],
         "dependsOn": [W1], "createdAt": "2026-01-01T00:01:00.000Z", "updatedAt": "2026-01-01T00:01:00.000Z"},
    ],
    "evidence": [
        evidence("evidence_1767225700000_000001", W1, "test", "runtime_observed", test_data, "go test ./... exited 0",
                 "2026-01-01T00:01:40.000Z", session="codex:thread-a"),
        evidence("evidence_1767226200000_000002", W1, "review", "agent_claim", review,
                 "Caller-submitted review verdict approve (unverified provenance)", "2026-01-01T00:10:00.000Z",
                 session="claude-code:sess-r", adapter="claude-code", protocol="caller submission"),
    ],
    "handoffs": [
        {"id": "handoff_5d2c1b0a-9e8f-4a7b-8c6d-5e4f3a2b1c0d", "workId": W1, "sourceSession": "codex:thread-a",
         "destinationSession": "claude-code:sess-b", "objective": "Add token refresh to the auth client",
         "acceptanceCriteria": ["refresh before expiry", "tests pass"], "evidenceIds": ["evidence_1767225700000_000001"],
         "changedFiles": ["auth/client.go"], "risks": ["clock skew"], "unresolvedQuestions": [],
         "authorityBoundaries": ["Do not change the public API"], "status": "accepted", "contextTokens": 187,
         "tokenBudget": 2000, "omittedFields": [], "createdAt": "2026-01-01T00:05:00.000Z", "updatedAt": "2026-01-01T00:06:00.000Z"},
    ],
    "reviews": [review],
    "claims": [
        {"id": "claim_3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f", "workId": W1, "sessionId": "claude-code:sess-b",
         "resource": "auth", "kind": "directory", "mode": "exclusive", "status": "active",
         "acquiredAt": "2026-01-09T23:50:00.000Z", "expiresAt": "2026-01-10T00:05:00.000Z"},
    ],
}
C1 = "conversation_8a7b6c5d-4e3f-4a1b-9c8d-7e6f5a4b3c2d"
def receipt(provider, native, accepted, status=None, state=None, detail=None):
    r = {"provider": provider, "nativeId": native, "operation": "send", "accepted": accepted}
    if status: r["status"] = status
    if state: r["providerState"] = state
    if detail is not None: r["detail"] = detail
    return r
normal_convs = {"version": 2, "conversations": [{
    "id": C1, "title": "Auth refresh", "participants": [
        {"id": "codex:thread-a", "provider": "codex", "nativeId": "thread-a"},
        {"id": "reviewer", "provider": "opencode", "nativeId": "ses_01", "workspaceId": "/home/u/src/app", "role": "reviewer"}],
    "messages": [
        {"id": "message_11111111-1111-4111-8111-111111111111", "conversationId": C1, "sender": "codex:thread-a",
         "recipient": "reviewer", "text": "Please review the refresh change.", "createdAt": "2026-01-01T00:07:00.000Z",
         "sequence": 1, "delivery": "queued", "idempotencyKey": "outbound_aaaa",
         "receipt": receipt("opencode", "ses_01", True, "queued", "transport_accepted",
                            {"delivery": "transport_accepted", "completion": "not_observed"})},
        {"id": "message_22222222-2222-4222-8222-222222222222", "conversationId": C1, "sender": "reviewer",
         "recipient": "codex:thread-a", "text": "Looks good; one rename.", "replyTo": "message_11111111-1111-4111-8111-111111111111",
         "createdAt": "2026-01-01T00:09:00.000Z", "sequence": 2, "delivery": "completed", "idempotencyKey": "review-reply-1",
         "receipt": receipt("codex", "thread-a", True, "completed", "turn_completed")},
        {"id": "message_33333333-3333-4333-8333-333333333333", "conversationId": C1, "sender": "codex:thread-a",
         "recipient": "reviewer", "text": "Renamed.", "createdAt": "2026-01-01T00:11:00.000Z", "sequence": 3,
         "delivery": "rejected", "idempotencyKey": "outbound_cccc",
         "receipt": receipt("opencode", "ses_01", False, detail={"reason": "opencode serve is not running"})},
    ],
    "createdAt": "2026-01-01T00:06:30.000Z", "updatedAt": "2026-01-01T00:11:00.000Z", "lastSequence": 3}]}
dump("normal/state.json", normal_state)
dump("normal/conversations.json", normal_convs)

# ---------------------------------------------------------------- full
# Every record kind and the edge cases of the documented shapes.
F1, F2, F3 = "work_1767312000000_aaaaaa", "work_1767312060000_bbbbbb", "work_1767312120000_cccccc"
cmd = {"id": "verification_9", "command": "go vet ./...", "exitCode": 1, "note": "<b> & \u2028 é"}
file_change = {"files": ["a.go", "b.go"], "z": 1, "a": {"nested": [1, 2.50, True, None]}}
full_review = {"id": "review_full_1", "workId": F1, "subjectEvidenceIds": ["evidence_full_1"], "reviewerSessionId": "cursor:chat-9",
               "independence": {"differentSession": True, "differentProvider": False, "freshContext": False, "writeAccess": True},
               "findings": [], "verdict": "changes_requested", "provenance": "agent_claim", "createdAt": "2026-01-02T01:00:00.000Z"}
full_state = {
    "version": 3,
    "sessions": [{"provider": "codex", "nativeId": "thread-x"}, {"provider": "cursor", "nativeId": "chat-9"}],
    "works": [
        {"id": F1, "objective": "Every field", "acceptanceCriteria": ["a", "b"], "sourceSession": "codex:thread-x",
         "destinationSession": None, "status": "blocked", "changedFiles": ["x/y.go"], "risks": ["r1"],
         "unresolvedQuestions": ["q1"], "evidenceIds": ["evidence_full_1", "evidence_full_2"],
         "createdAt": "2026-01-02T00:00:00.000Z", "updatedAt": "2026-01-02T02:00:00.000Z", "priority": "high"},
        # Depends on a work later in the file; no updatedAt (takes createdAt); lists missing.
        {"id": F2, "objective": "Depends on a later work", "status": "accepted", "dependsOn": [F3, F3],
         "createdAt": "2026-01-02T00:01:00.000Z"},
        {"id": F3, "objective": "Rejected one", "acceptanceCriteria": [], "status": "rejected", "changedFiles": [],
         "risks": [], "unresolvedQuestions": [], "evidenceIds": ["evidence_full_3"], "dependsOn": [],
         "createdAt": "2026-01-02T00:02:00.000Z", "updatedAt": "2026-01-02T00:03:00.000Z"},
    ],
    "evidence": [
        evidence("evidence_full_1", F1, "command", "runtime_observed", cmd, "go vet ./... exited 1", "2026-01-02T00:10:00.000Z"),
        # Recorded with a hash of other data: edited after it was recorded.
        evidence("evidence_full_2", F1, "file_change", "provider_observed", file_change, "two files", "2026-01-02T00:11:00.000Z",
                 session="codex:thread-x", adapter="codex", protocol="app-server", hash="0" * 64),
        # No workId, listed by one work: takes it.
        evidence("evidence_full_3", None, "artifact", "human_accepted", "a plain string", "a string payload", "2026-01-02T00:12:00.000Z"),
        # No work at all, null data.
        evidence("evidence_full_4", None, "session", "agent_claim", None, "", "2026-01-02T00:13:00.000Z", session="cursor:chat-9", adapter="cursor", protocol="acp"),
        # The review record's evidence (found by data.id).
        evidence("evidence_full_5", F1, "review", "agent_claim", full_review, "Caller-submitted review verdict changes_requested (unverified provenance)",
                 "2026-01-02T01:00:00.000Z", session="cursor:chat-9", adapter="cursor", protocol="caller submission"),
    ],
    "handoffs": [
        {"id": "handoff_full_1", "workId": F1, "sourceSession": "codex:thread-x", "objective": "Every handoff field",
         "acceptanceCriteria": ["a"], "evidenceIds": ["evidence_full_1", "evidence_full_1"], "changedFiles": [], "risks": [],
         "unresolvedQuestions": [], "authorityBoundaries": [], "continuationState": "needs_completion",
         "latestValidation": {"label": "unit", "command": "go test ./...", "outcome": "failed", "observedAt": "2026-01-02T00:20:00.000Z"},
         "assumptions": ["go 1.26"], "rollbackNotes": ["git revert"], "nextAction": "fix vet", "repositoryRevision": "abc123",
         "status": "blocked", "contextTokens": 321, "tokenBudget": 4000, "omittedFields": ["risks"],
         "createdAt": "2026-01-02T00:30:00.000Z"},
        # Older record: no contextTokens or tokenBudget.
        {"id": "handoff_full_2", "workId": F3, "sourceSession": "cursor:chat-9", "destinationSession": "codex:thread-x",
         "objective": "An older handoff", "acceptanceCriteria": [], "evidenceIds": [], "changedFiles": [], "risks": [],
         "unresolvedQuestions": [], "authorityBoundaries": [], "status": "superseded", "omittedFields": [],
         "createdAt": "2026-01-02T00:31:00.000Z", "updatedAt": "2026-01-02T00:32:00.000Z"},
    ],
    "reviews": [
        full_review,  # no evidenceId: linked by its review evidence
        {"id": "review_full_2", "workId": F3, "subjectEvidenceIds": [], "reviewerSessionId": "codex:thread-x",
         "independence": {"differentSession": False, "differentProvider": False, "freshContext": False, "writeAccess": False},
         "findings": [{"id": "b1", "severity": "blocking", "title": "Broken", "detail": "It does not build."}],
         "verdict": "blocked", "evidenceId": "evidence_full_4", "createdAt": "2026-01-02T01:10:00.000Z"},
    ],
    "claims": [
        {"id": "claim_full_active", "workId": F1, "sessionId": "codex:thread-x", "resource": "src/auth/", "kind": "directory",
         "mode": "exclusive", "status": "active", "acquiredAt": "2026-01-09T23:55:00.000Z", "expiresAt": "2026-01-10T00:10:00.000Z"},
        {"id": "claim_full_shared", "workId": F1, "sessionId": "cursor:chat-9", "resource": "README.md",
         "mode": "shared_read", "acquiredAt": "2026-01-09T23:56:00.000Z", "expiresAt": "2026-01-10T00:20:00.000Z"},
        {"id": "claim_full_released", "workId": F3, "sessionId": "cursor:chat-9", "resource": "src/auth/token.go", "kind": "file",
         "mode": "exclusive", "status": "released", "acquiredAt": "2026-01-02T00:00:00.000Z", "expiresAt": "2026-01-02T00:15:00.000Z",
         "releasedAt": "2026-01-02T00:05:00.000Z"},
        {"id": "claim_full_expired", "workId": F3, "sessionId": "cursor:chat-9", "resource": "api", "kind": "interface",
         "mode": "exclusive", "status": "expired", "acquiredAt": "2026-01-02T00:00:00.000Z", "expiresAt": "2026-01-02T00:15:00.000Z"},
        {"id": "claim_full_early", "workId": F3, "sessionId": "cursor:chat-9", "resource": ".", "kind": "workspace",
         "mode": "shared_read", "status": "expired", "acquiredAt": "2026-01-09T23:00:00.000Z", "expiresAt": "2026-01-10T00:59:00.000Z"},
    ],
}
FC1, FC2 = "conversation_full_trimmed", "conversation_full_old"
def msg(id, conv, seq, sender, recipient, text, created, delivery, **kw):
    m = {"id": id, "conversationId": conv, "sender": sender, "recipient": recipient, "text": text, "createdAt": created}
    if seq is not None: m["sequence"] = seq
    if delivery is not None: m["delivery"] = delivery
    m.update(kw)
    return m
full_convs = {"version": 2, "conversations": [
    {"id": FC1, "title": "  " + "T" * 310 + "  ", "participants": [
        {"provider": "codex", "nativeId": "thread-x"},
        {"id": "cl", "provider": "claude-code", "nativeId": "sess-c", "role": "editor", "extra": True},
        {"id": "fb", "provider": "freebuff", "nativeId": "thread-fb", "role": "sender"}],
     # Messages 1..2 were trimmed by 0.3.x; the file keeps 3..9 (not in order).
     "messages": [
        msg("message_f3", FC1, 3, "codex:thread-x", "cl", "completed one", "2026-01-03T00:03:00.000Z", "completed",
            idempotencyKey="k3", receipt=receipt("claude-code", "sess-c", True, "completed", "end_turn")),
        msg("message_f5", FC1, 5, "cl", "codex:thread-x", "queued, transport accepted", "2026-01-03T00:05:00.000Z", "queued",
            idempotencyKey="k5", replyTo="message_f1", receipt=receipt("codex", "thread-x", True)),
        msg("message_f4", FC1, 4, "codex:thread-x", "fb", "rejected one", "2026-01-03T00:04:00.000Z", "rejected",
            idempotencyKey="k4", replyTo="message_f3", receipt=receipt("freebuff", "thread-fb", False, "rejected",
            detail={"reason": "Freebuff Desktop writes are unavailable: no verified launch authorization contract"})),
        msg("message_f6", FC1, 6, "codex:thread-x", "cl", "unknown after a throw", "2026-01-03T00:06:00.000Z", "delivery_unknown",
            idempotencyKey="k6", deliveryUnknownAt="2026-01-03T00:06:30.000Z",
            receipt=receipt("claude-code", "sess-c", False, "rejected", detail={"reason": "socket hang up", "classification": "delivery_unknown"})),
        msg("message_f7", FC1, 7, "codex:thread-x", "cl", "in flight with a lease", "2026-01-03T00:07:00.000Z", "queued",
            idempotencyKey="k7", dispatchLease={"id": "dispatch_7", "startedAt": "2026-01-03T00:07:00.000Z", "expiresAt": "2026-01-03T00:09:00.000Z"}),
        msg("message_f8", FC1, 8, "cl", "cl", "to oneself, queued without a receipt", "2026-01-03T00:08:00.000Z", "queued", idempotencyKey="k8"),
        msg("message_f9", FC1, 9, "fb", "codex:thread-x", "dispatching", "2026-01-03T00:09:00.000Z", "dispatching", idempotencyKey="k9",
            unknownField={"kept": "ignored"}),
     ],
     "createdAt": "2026-01-03T00:00:00.000Z", "updatedAt": "2026-01-03T00:09:00.000Z", "lastSequence": 9},
    # A pre-0.3 conversation: no sequences, no keys, no lastSequence, no updatedAt.
    {"id": FC2, "title": "Old one", "participants": [
        {"id": "a", "provider": "cursor", "nativeId": "chat-1"}, {"id": "b", "provider": "opencode", "nativeId": "ses_9"}],
     "messages": [
        msg("message_old_1", FC2, None, "a", "b", "first", "2025-12-01T00:00:00.000Z", "completed",
            receipt=receipt("opencode", "ses_9", True, "completed")),
        msg("message_old_2", FC2, None, "b", "a", "second", "2025-12-01T00:01:00.000Z", None, replyTo="message_old_1"),
     ],
     "createdAt": "2025-12-01T00:00:00.000Z"},
    # An empty conversation.
    {"id": "conversation_full_empty", "title": "Nobody here", "participants": [], "messages": [],
     "createdAt": "2026-01-04T00:00:00.000Z", "updatedAt": "2026-01-04T00:00:00.000Z", "lastSequence": 0},
]}
dump("full/state.json", full_state)
dump("full/conversations.json", full_convs)

# ---------------------------------------------------------------- conflicting (against normal)
conflict_state = json.loads(json.dumps(normal_state))
conflict_state["works"][0]["objective"] = "Something else entirely"
conflict_state["works"][1]["status"] = "blocked"  # a mutable field: not a conflict
conflict_state["claims"] = [
    {"id": "claim_other_session", "workId": W2, "sessionId": "cursor:chat-1", "resource": "auth/token.go", "kind": "file",
     "mode": "exclusive", "status": "active", "acquiredAt": "2026-01-09T23:59:00.000Z", "expiresAt": "2026-01-10T00:30:00.000Z"}]
conflict_state["claims"].insert(0, normal_state["claims"][0])
conflict_convs = json.loads(json.dumps(normal_convs))
conflict_convs["conversations"][0]["messages"][1]["text"] = "A different reply."
msgs = conflict_convs["conversations"][0]["messages"]
# Sequence 3 taken by another message id; a new message reusing a stored key.
msgs[2] = {"id": "message_55555555-5555-4555-8555-555555555555", "conversationId": C1, "sender": "codex:thread-a",
           "recipient": "reviewer", "text": "Another third message.", "createdAt": "2026-01-01T00:11:30.000Z", "sequence": 3,
           "delivery": "queued", "idempotencyKey": "outbound_eeee", "receipt": receipt("opencode", "ses_01", True)}
msgs.append({"id": "message_44444444-4444-4444-8444-444444444444", "conversationId": C1, "sender": "reviewer", "recipient": "codex:thread-a",
     "text": "Reuses a key.", "createdAt": "2026-01-01T00:12:00.000Z", "sequence": 4, "delivery": "completed",
     "idempotencyKey": "outbound_cccc", "receipt": receipt("codex", "thread-a", True, "completed")})
conflict_convs["conversations"][0]["lastSequence"] = 4
dump("conflicting/state.json", conflict_state)
dump("conflicting/conversations.json", conflict_convs)
