// Package cursor is the Cursor provider adapter: the Cursor CLI's `agent acp`
// (ACP v1 over stdio, old name cursor-agent) driven through internal/providers/acp,
// with Cursor's flavour: authenticate with cursor_login after initialize,
// hyphenated permission option ids (answered by kind), the agent/plan/ask
// modes, and the blocking cursor/* extension requests, which are held like
// permission requests until answered (cursor/ask_question,
// cursor/create_plan) or answered at once (cursor/update_todos).
package cursor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/acp"
)

// EnvCommand names the Cursor CLI command (a path or a command line whose
// first word is the program); `acp` is appended.
const EnvCommand = "CURSOR_AGENT_COMMAND"

// Programs are searched on PATH in this order.
var Programs = []string{"agent", "cursor-agent"}

// AdapterVersion is this adapter's version.
const AdapterVersion = "0.1.0"

// AuthMethod is Cursor's ACP authentication method.
const AuthMethod = "cursor_login"

// AuthFix is the remedy shown when Cursor is not logged in.
const AuthFix = "run `agent login` once, or set CURSOR_API_KEY in the runtime's environment"

// MissingFix is the remedy shown when the Cursor CLI is not found.
const MissingFix = "install the Cursor CLI (curl https://cursor.com/install -fsS | bash) or set " + EnvCommand + "=/path/to/agent"

// Modes are Cursor's session modes.
var Modes = []string{"agent", "plan", "ask"}

// Config configures the adapter. Zero values use the process environment,
// exec.LookPath and the wall clock.
type Config struct {
	Host       providers.Host
	LookupEnv  func(string) (string, bool) // default os.LookupEnv
	LookPath   func(string) (string, error)
	Env        []string // the agent's environment; nil inherits ours
	Clock      quartz.Clock
	Logger     *slog.Logger
	FileReader acp.FileReader
	Trace      func(acp.Direction, []byte)
	DefaultCWD string
	// ParameterizedModelPicker asks Cursor for its per-model options
	// (clientCapabilities._meta.parameterizedModelPicker).
	ParameterizedModelPicker bool
}

// Adapter is the Cursor provider adapter.
type Adapter struct {
	*acp.Adapter
}

// New builds the adapter; the agent starts on first use.
func New(opts Config) *Adapter {
	lookup, look := opts.LookupEnv, opts.LookPath
	if lookup == nil {
		lookup = os.LookupEnv
	}
	if look == nil {
		look = exec.LookPath
	}
	env := opts.Env
	var meta map[string]any
	if opts.ParameterizedModelPicker {
		meta = map[string]any{"parameterizedModelPicker": true}
	}
	return &Adapter{acp.NewAdapter(acp.AdapterConfig{
		Provider:       providers.Cursor,
		AdapterVersion: AdapterVersion,
		Protocol:       "Cursor Agent Client Protocol (ACP v1 over stdio)",
		Locate: func() (acp.Launch, error) {
			l, err := Locate(lookup, look)
			l.Env = env
			return l, err
		},
		MissingFix: MissingFix,
		AuthMethod: AuthMethod,
		AuthFix:    AuthFix,
		ClientMeta: meta,
		Extension:  Extension,
		Limitations: []string{
			"cursor/* requests carry no sessionId; they are attributed to the session whose prompt is running",
			"no steering over ACP; the diff is built from the diff content of completed tool calls this runtime observed; session/resume is not offered (session/load is)",
		},
		Host: opts.Host, Clock: opts.Clock, Logger: opts.Logger, FileReader: opts.FileReader,
		Trace: opts.Trace, DefaultCWD: opts.DefaultCWD,
	})}
}

// Locate finds the Cursor CLI: CURSOR_AGENT_COMMAND, else agent, else
// cursor-agent on PATH; the arguments are the command's plus "acp".
func Locate(lookupEnv func(string) (string, bool), look func(string) (string, error)) (acp.Launch, error) {
	if cmd, _ := lookupEnv(EnvCommand); strings.TrimSpace(cmd) != "" {
		cmd = strings.TrimSpace(cmd)
		argv := strings.Fields(cmd)
		path, err := look(argv[0])
		if err != nil {
			return acp.Launch{}, fmt.Errorf("%s=%q: %w", EnvCommand, cmd, err)
		}
		argv[0] = path
		return acp.Launch{Argv: append(argv, "acp"), Program: path, Label: filepath.Base(path) + " acp"}, nil
	}
	var errs []error
	for _, name := range Programs {
		path, err := look(name)
		if err == nil {
			return acp.Launch{Argv: []string{path, "acp"}, Program: path, Label: name + " acp"}, nil
		}
		errs = append(errs, err)
	}
	return acp.Launch{}, fmt.Errorf("the Cursor CLI (%s) was not found on PATH: %w", strings.Join(Programs, " or "), errors.Join(errs...))
}

// Extension answers Cursor's cursor/* requests:
//
//   - cursor/ask_question is held as a pending request whose options are the
//     question options (kind "answer"), "skipped" (kind "skip") and
//     "cancelled" (kind "cancel"); the decision becomes the nested outcome.
//   - cursor/create_plan is held with options accepted (kind "accept"),
//     rejected (kind "reject") and cancelled (kind "cancel").
//   - cursor/update_todos sent as a request is accepted at once, echoing the
//     todos.
//
// Any other cursor/* request is left to the -32601 answer.
func Extension(ctx context.Context, in acp.Inbound) (any, *acp.RPCError, bool) {
	switch in.Method {
	case "cursor/ask_question":
		return askQuestion(ctx, in)
	case "cursor/create_plan":
		return createPlan(ctx, in)
	case "cursor/update_todos":
		var p struct {
			Todos json.RawMessage `json:"todos"`
		}
		_ = json.Unmarshal(in.Params, &p)
		if p.Todos == nil {
			p.Todos = json.RawMessage("[]")
		}
		return outcome(map[string]any{"outcome": "accepted", "todos": p.Todos}), nil, true
	}
	return nil, nil, false
}

func outcome(o map[string]any) map[string]any { return map[string]any{"outcome": o} }

type question struct {
	ID      string `json:"id"`
	Prompt  string `json:"prompt"`
	Options []struct {
		ID    string `json:"id"`
		Label string `json:"label"`
	} `json:"options"`
}

func askQuestion(ctx context.Context, in acp.Inbound) (any, *acp.RPCError, bool) {
	var p struct {
		Title     string     `json:"title"`
		Questions []question `json:"questions"`
	}
	if err := json.Unmarshal(in.Params, &p); err != nil || len(p.Questions) == 0 {
		return nil, &acp.RPCError{Code: acp.CodeInvalidParams, Message: "Invalid params: cursor/ask_question needs questions"}, true
	}
	var opts []providers.PermissionOption
	owner := map[string]string{} // option id -> question id
	for _, q := range p.Questions {
		for _, o := range q.Options {
			opts = append(opts, providers.PermissionOption{ID: o.ID, Name: q.Prompt + ": " + o.Label, Kind: "answer"})
			owner[o.ID] = q.ID
		}
	}
	opts = append(opts,
		providers.PermissionOption{ID: "skipped", Name: "Skip the question", Kind: "skip"},
		providers.PermissionOption{ID: "cancelled", Name: "Cancel", Kind: "cancel"})
	title := p.Title
	if title == "" {
		title = p.Questions[0].Prompt
	}
	d, err := in.Client.Hold(ctx, in.Client.ActiveSession(), in.Method, title, opts, json.RawMessage(in.Params), acp.Paths{})
	if err != nil {
		return nil, &acp.RPCError{Code: acp.CodeInternalError, Message: "Internal error: " + err.Error()}, true
	}
	switch {
	case d.Cancelled || d.Option.ID == "cancelled":
		return acked(d, outcome(map[string]any{"outcome": "cancelled"})), nil, true
	case d.Option.ID == "skipped":
		return acked(d, outcome(map[string]any{"outcome": "skipped"})), nil, true
	}
	answers := []map[string]any{{"questionId": owner[d.Option.ID], "selectedOptionIds": []string{d.Option.ID}}}
	return acked(d, outcome(map[string]any{"outcome": "answered", "answers": answers})), nil, true
}

func createPlan(ctx context.Context, in acp.Inbound) (any, *acp.RPCError, bool) {
	var p struct {
		Name     string `json:"name"`
		Overview string `json:"overview"`
	}
	_ = json.Unmarshal(in.Params, &p)
	title := strings.TrimSpace("Plan: " + p.Name)
	opts := []providers.PermissionOption{
		{ID: "accepted", Name: "Accept the plan", Kind: "accept"},
		{ID: "rejected", Name: "Reject the plan", Kind: "reject"},
		{ID: "cancelled", Name: "Cancel", Kind: "cancel"},
	}
	d, err := in.Client.Hold(ctx, in.Client.ActiveSession(), in.Method, title, opts, json.RawMessage(in.Params), acp.Paths{})
	if err != nil {
		return nil, &acp.RPCError{Code: acp.CodeInternalError, Message: "Internal error: " + err.Error()}, true
	}
	if d.Cancelled {
		return acked(d, outcome(map[string]any{"outcome": "cancelled"})), nil, true
	}
	return acked(d, outcome(map[string]any{"outcome": d.Option.ID})), nil, true
}

// acked lets Respond learn when the reply was written.
func acked(d acp.Decision, result any) any { return d.Ack(result) }
