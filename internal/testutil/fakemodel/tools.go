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
		return writeCall(api, p, tc.Path, tc.Content)
	case ToolRunCommand:
		return shellCall(api, p, tc.Command)
	}
	return resolvedCall{}, fmt.Errorf("unknown tool kind %d", tc.Kind)
}

// writeCall writes content to path with the program's own file-edit tool:
// OpenCode "write", Claude Code "Write", Codex "apply_patch" (offered when
// the model's metadata asks for it: a freeform tool taking the patch as
// raw text, or a function tool taking {"input": patch}). A Codex that
// offers no apply_patch tool gets the same patch through its shell tool
// as `apply_patch <<'EOF'`, which Codex recognizes and applies as a patch
// (a fileChange item and its approval), not as a command. Any other
// program's shell writes it with printf.
func writeCall(api API, p parsed, path, content string) (resolvedCall, error) {
	if name, ok := offered(p.tools, "write_file"); ok { // Qwen Code, Gemini CLI
		return marshalCall(p, name, map[string]any{"file_path": path, "content": content})
	}
	if name, ok := offered(p.tools, "write"); ok {
		if name == "write" { // OpenCode
			return marshalCall(p, name, map[string]any{"filePath": path, "content": content})
		}
		// Claude Code "Write"
		return marshalCall(p, name, map[string]any{"file_path": path, "content": content})
	}
	if name, ok := offered(p.tools, "apply_patch"); ok {
		return marshalCall(p, name, map[string]any{"input": addFilePatch(path, content)})
	}
	for _, codexShell := range []string{"exec_command", "shell_command", "shell"} {
		if _, ok := offered(p.tools, codexShell); ok {
			// Every patch line starts with "*** " or "+": none ends the
			// here-document early.
			return shellCall(api, p, "apply_patch <<'EOF'\n"+addFilePatch(path, content)+"EOF\n")
		}
	}
	return shellCall(api, p, "printf '%s' "+shellQuote(content)+" > "+shellQuote(path))
}

// addFilePatch is a Codex patch that writes content to path ("*** Add
// File" replaces an existing file). Codex ends the file with a newline
// whether or not content does.
func addFilePatch(path, content string) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Add File: " + path + "\n")
	if content != "" {
		for _, line := range strings.Split(strings.TrimSuffix(content, "\n"), "\n") {
			b.WriteString("+" + line + "\n")
		}
	}
	b.WriteString("*** End Patch\n")
	return b.String()
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
	if name, ok := offered(p.tools, "run_shell_command"); ok { // Qwen Code, Gemini CLI
		return marshalCall(p, name, map[string]any{"command": cmd})
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
