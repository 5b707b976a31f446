package fakemodel

import (
	"encoding/json"
	"fmt"
	"strings"
)

// resolvedCall is a scripted tool call in the calling program's own format.
type resolvedCall struct {
	name string
	args string // JSON object, or the raw input of a Responses "custom" tool
	// custom is true for a Responses API freeform ("custom") tool.
	custom bool
}

// resolveTool turns a scripted call into a call of a tool the request offers.
func resolveTool(api API, p parsed, tc ToolCall) (resolvedCall, error) {
	switch tc.Kind {
	case ToolRaw:
		if tc.Name == "" {
			return resolvedCall{}, fmt.Errorf("raw tool call without a name")
		}
		return marshalCall(p, tc.Name, tc.Arguments)
	case ToolWriteFile:
		if name, ok := offered(p.tools, "write"); ok {
			if name == "write" { // OpenCode
				return marshalCall(p, name, map[string]any{"filePath": tc.Path, "content": tc.Content})
			}
			// Claude Code "Write"
			return marshalCall(p, name, map[string]any{"file_path": tc.Path, "content": tc.Content})
		}
		return shellCall(api, p, "printf '%s' "+shellQuote(tc.Content)+" > "+shellQuote(tc.Path))
	case ToolRunCommand:
		return shellCall(api, p, tc.Command)
	}
	return resolvedCall{}, fmt.Errorf("unknown tool kind %d", tc.Kind)
}

// shellCall calls the program's shell tool with cmd.
func shellCall(api API, p parsed, cmd string) (resolvedCall, error) {
	if name, ok := offered(p.tools, "exec_command"); ok { // Codex unified exec
		return marshalCall(p, name, map[string]any{"cmd": cmd})
	}
	if name, ok := offered(p.tools, "shell_command"); ok { // Codex
		return marshalCall(p, name, map[string]any{"command": cmd})
	}
	if name, ok := offered(p.tools, "bash"); ok { // OpenCode, Claude Code "Bash"
		return marshalCall(p, name, map[string]any{"command": cmd, "description": "Run a command"})
	}
	if name, ok := offered(p.tools, "shell"); ok { // older Codex
		return marshalCall(p, name, map[string]any{"command": []string{"bash", "-lc", cmd}})
	}
	return resolvedCall{}, fmt.Errorf("%s request offers no shell tool (tools: %s)", api, strings.Join(p.tools, ", "))
}

// offered finds want among the offered tool names, exactly or ignoring case.
func offered(tools []string, want string) (string, bool) {
	for _, t := range tools {
		if t == want {
			return t, true
		}
	}
	for _, t := range tools {
		if strings.EqualFold(t, want) {
			return t, true
		}
	}
	return "", false
}

func marshalCall(p parsed, name string, args map[string]any) (resolvedCall, error) {
	if args == nil {
		args = map[string]any{}
	}
	if p.toolTypes[name] == "custom" {
		// A freeform tool takes raw text: pass "input" when given, else JSON.
		if in, ok := args["input"].(string); ok {
			return resolvedCall{name: name, args: in, custom: true}, nil
		}
	}
	b, err := json.Marshal(args)
	if err != nil {
		return resolvedCall{}, fmt.Errorf("encoding arguments of %s: %w", name, err)
	}
	return resolvedCall{name: name, args: string(b), custom: p.toolTypes[name] == "custom"}, nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
