// Package workflow is the coordination service layer: work items and their
// dependencies, hashed evidence, token-budgeted handoffs with a lifecycle,
// caller-submitted reviews, the work graph and local verification runs (the
// commands run through internal/verify; they are recorded here as evidence).
//
// Every method that changes state runs in exactly one store transaction, so
// a rejected call leaves the store unchanged. Inputs mirror the MCP tool
// arguments (upstream 0.3.x names) and results are plain structs whose JSON
// tags are the upstream field names, so an MCP handler is a thin mapping:
//
//	svc := workflow.New(st, workflow.Options{LookupEnv: os.LookupEnv})
//	work, err := svc.CreateWork(ctx, workflow.CreateWorkInput{...})
//
// Error texts follow upstream where upstream has one ("Unknown work <id>",
// "Invalid handoff transition ...", the verification and token-budget
// refusals). Nothing reads the wall clock or the process environment
// directly: both come through [Options].
//
// docs/store.md and docs/work-graph.md describe the rules this package
// implements, including the decisions upstream left open.
package workflow
