package handlers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
	"github.com/agent-interop/runtime/internal/workflow"
)

// TestWorkflowTools drives the work, evidence, handoff and review tools from
// raw arguments through the generated decoders.
func TestWorkflowTools(t *testing.T) {
	ctx := context.Background()
	env := map[string]string{}
	tools := WorkflowTools{Svc: workflow.New(teststore.Open(t), workflow.Options{
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	})}
	decode := func(v any, err error) any {
		t.Helper()
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		return v
	}
	wi := decode(catalogs.DecodeCreateWorkItem(json.RawMessage(`{"objective":"Add retries","acceptanceCriteria":["retries"],"sourceSession":"codex:a"}`))).(*catalogs.CreateWorkItemInput)
	out, err := tools.CreateWorkItem(ctx, wi)
	if err != nil {
		t.Fatal(err)
	}
	work := out

	hi := decode(catalogs.DecodeCreateHandoff(json.RawMessage(`{"workId":"` + work.ID + `","sourceSession":"codex:a","destinationSession":"claude-code:b",
		"objective":"finish","acceptanceCriteria":["green"],"evidenceIds":[],"changedFiles":["a.go"],"risks":[],"unresolvedQuestions":[],
		"authorityBoundaries":["no API changes"],"latestValidation":{"outcome":"passed","command":"go test ./..."}}`))).(*catalogs.CreateHandoffInput)
	h, err := tools.CreateHandoff(ctx, hi)
	if err != nil {
		t.Fatal(err)
	}
	if h.LatestValidation == nil || *h.LatestValidation.Command != "go test ./..." || h.Status != "created" {
		t.Fatalf("handoff = %+v", h)
	}
	if _, err := tools.UpdateHandoffStatus(ctx, &catalogs.UpdateHandoffStatusInput{HandoffID: h.ID, Status: "applied"}); err == nil ||
		!strings.Contains(err.Error(), "Invalid handoff transition created -> applied") {
		t.Fatalf("invalid transition: %v", err)
	}
	p, err := tools.GetHandoffPacket(ctx, &catalogs.GetHandoffPacketInput{HandoffID: h.ID})
	if err != nil || !strings.Contains(mustJSON(t, p), `"tokenizer":"tiktoken-go o200k_base (offline estimate, not native provider usage)"`) {
		t.Fatalf("packet = %s, %v", mustJSON(t, p), err)
	}

	ri := decode(catalogs.DecodeRecordReview(json.RawMessage(`{"workId":"` + work.ID + `","subjectEvidenceIds":[],"reviewerSessionId":"cursor:r",
		"independence":{"differentSession":true,"differentProvider":true,"freshContext":false,"writeAccess":false},
		"findings":[{"id":"f1","severity":"minor","title":"naming","detail":"rename x","line":3}],"verdict":"approve"}`))).(*catalogs.RecordReviewInput)
	r, err := tools.RecordReview(ctx, ri)
	if err != nil {
		t.Fatal(err)
	}
	if r.Provenance != "agent_claim" || *r.Findings[0].Line != 3 {
		t.Fatalf("review = %+v", r)
	}
	list, err := tools.ListEvidence(ctx, &catalogs.ListEvidenceInput{WorkID: &work.ID})
	if err != nil || !strings.HasPrefix(mustJSON(t, list), `{"evidence":[{"id":"evidence_`) {
		t.Fatalf("evidence list = %s, %v", mustJSON(t, list), err)
	}
	works, err := tools.ListWorkItems(ctx, &catalogs.ListWorkItemsInput{})
	if err != nil || !strings.Contains(mustJSON(t, works), `"objectivePreview":"Add retries","acceptanceCriteriaCount":1`) {
		t.Fatalf("works = %s, %v", mustJSON(t, works), err)
	}
	g, err := tools.GetWorkGraph(ctx, &catalogs.GetWorkGraphInput{})
	if err != nil || !strings.Contains(mustJSON(t, g), `"stateRecoveryRequired":null`) {
		t.Fatalf("graph = %s, %v", mustJSON(t, g), err)
	}

	vi := decode(catalogs.DecodeVerifyWorkItem(json.RawMessage(`{"workId":"` + work.ID + `","cwd":"/tmp","commands":["true",{"executable":"true"}]}`))).(*catalogs.VerifyWorkItemInput)
	if _, err := tools.VerifyWorkItem(ctx, vi); err == nil || !strings.HasPrefix(err.Error(), "Verification is disabled by default") {
		t.Fatalf("verification without opt-in: %v", err)
	}
	env[workflow.EnvAllowVerification] = "1"
	res, err := tools.VerifyWorkItem(ctx, vi)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Commands) != 2 || *res.Commands[1].ExitCode != 0 {
		t.Fatalf("verification = %+v", res)
	}
	if _, err := tools.RequestReview(ctx, &catalogs.RequestReviewInput{SubjectProvider: "codex"}); err == nil ||
		err.Error() != "request_review needs a provider adapter for codex; none is available" {
		t.Fatalf("request_review: %v", err)
	}
}
