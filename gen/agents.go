package gen

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/agent-interop/runtime/gen/spec"
)

// AgentsGoPath is the generated table of built-in agents.
const AgentsGoPath = "internal/providers/zz_generated.agents.go"

// AgentsDocPath is the generated agent catalog page.
const AgentsDocPath = "docs/agents.md"

// agentsFiles renders spec/agents.yaml into the runtime's table and the
// docs page.
func agentsFiles(files Files, af *spec.AgentsFile) error {
	if af == nil {
		return nil
	}
	src, err := agentsGo(af)
	if err != nil {
		return err
	}
	files[AgentsGoPath] = src
	files[AgentsDocPath] = agentsDoc(af)
	return nil
}

func quoteList(xs []string) string {
	if len(xs) == 0 {
		return "nil"
	}
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return "[]string{" + strings.Join(q, ", ") + "}"
}

func quoteMap(m map[string]string) string {
	if len(m) == 0 {
		return "nil"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, strconv.Quote(k)+": "+strconv.Quote(m[k]))
	}
	return "map[string]string{" + strings.Join(parts, ", ") + "}"
}

func agentsGo(af *spec.AgentsFile) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(Header + "\n\npackage providers\n\n")
	b.WriteString("// BuiltinAgents returns the built-in agent catalog of spec/agents.yaml, in\n// its order (the registry's reporting order).\nfunc BuiltinAgents() []AgentSpec {\n\treturn []AgentSpec{\n")
	for _, a := range af.Agents {
		fmt.Fprintf(&b, "\t\t{\n\t\t\tID: %q, Name: %q, Protocol: %q,\n", a.ID, a.Name, a.Protocol)
		fmt.Fprintf(&b, "\t\t\tCommand: %s, Programs: %s, CommandEnv: %q, Env: %s,\n", quoteList(a.Command), quoteList(a.Programs), a.CommandEnv, quoteMap(a.Env))
		fmt.Fprintf(&b, "\t\t\tInstallPackage: %q, InstallVersion: %q, InstallHint: %q,\n", a.Install.Package, a.Install.Version, a.Install.Hint)
		fmt.Fprintf(&b, "\t\t\tAuthMethod: %q, AuthHow: %q,\n", a.Auth.Method, a.Auth.How)
		fmt.Fprintf(&b, "\t\t\tVersionArgs: %s, TestedMin: %q, TestedMax: %q,\n", quoteList(a.Doctor.VersionArgs), a.Doctor.TestedMin, a.Doctor.TestedMax)
		fmt.Fprintf(&b, "\t\t\tQuirks: %s, Notes: %s,\n", quoteList(a.Quirks), quoteList(a.Notes))
		fmt.Fprintf(&b, "\t\t\tSource: %q, Line: %d,\n\t\t},\n", spec.AgentsPath, a.Line)
	}
	b.WriteString("\t}\n}\n")
	return formatGo(AgentsGoPath, b.Bytes())
}

func agentsDoc(af *spec.AgentsFile) []byte {
	var b bytes.Buffer
	b.WriteString(mdHeader)
	b.WriteString("# Agents\n\n")
	b.WriteString("The agents the runtime drives. Each is an entry of `spec/agents.yaml`; the `provider` argument of every tool takes its id. ")
	b.WriteString("An `acp` agent runs through the one ACP client (`internal/providers/acp`); the native protocols have adapters of their own. ")
	b.WriteString("You add an ACP agent without code in your agents file (`INTEROP_AGENTS_FILE`, default `~/.agent-interop-runtime/agents.yaml`):\n\n")
	b.WriteString("```yaml\nagents:\n  - id: my-agent            # lower-case letters, digits and dashes; unique\n    name: My Agent\n    protocol: acp\n    command: [/path/to/program, --acp]\n    env: {SOME_KEY: value}  # added to the agent's environment\n```\n\n")
	b.WriteString("A bad entry never stops the runtime: `doctor`, `providers` and `list_providers` report it unavailable with the file, line, field, rule and fix. ")
	b.WriteString("So is a program that exits at once, never answers `initialize` (the handshake allows 2 minutes), or prints a line that is not JSON-RPC " +
		"on its stdout before its first answer (a banner, a usage text: it is not in its ACP mode; that fails at once, quoting the line); " +
		"such a line after the first answer is ignored. ")
	b.WriteString("Versions tested against each release: [compatibility.md](compatibility.md).\n\n")
	b.WriteString("| id | name | protocol | command | package (tested) | doctor |\n|---|---|---|---|---|---|\n")
	for _, a := range af.Agents {
		pkg := "—"
		if a.Install.Package != "" {
			pkg = "`" + a.Install.Package + "`"
			if a.Install.Version != "" {
				pkg += " " + a.Install.Version
			}
		}
		doc := "program on PATH"
		if len(a.Doctor.VersionArgs) > 0 {
			doc += "; `" + strings.Join(a.Doctor.VersionArgs, " ") + "`"
		}
		if a.Doctor.TestedMin != "" || a.Doctor.TestedMax != "" {
			doc += "; tested " + a.Doctor.TestedMin + "–" + a.Doctor.TestedMax
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | `%s` | %s | %s |\n", a.ID, a.Name, a.Protocol, strings.Join(a.Command, " "), pkg, doc)
	}
	for _, a := range af.Agents {
		fmt.Fprintf(&b, "\n## %s (`%s`)\n\n", a.Name, a.ID)
		fmt.Fprintf(&b, "- Protocol: %s; command `%s`", a.Protocol, strings.Join(a.Command, " "))
		if len(a.Programs) > 0 {
			fmt.Fprintf(&b, " (else `%s` on PATH)", strings.Join(a.Programs, "`, `"))
		}
		if a.CommandEnv != "" {
			fmt.Fprintf(&b, "; `%s` replaces the program", a.CommandEnv)
		}
		b.WriteString(".\n")
		fmt.Fprintf(&b, "- Install: %s.\n", a.Install.Hint)
		auth := a.Auth.How
		if a.Auth.Method != "" {
			auth = "ACP method `" + a.Auth.Method + "`; " + auth
		}
		fmt.Fprintf(&b, "- Authentication: %s.\n", auth)
		if len(a.Env) > 0 {
			keys := make([]string, 0, len(a.Env))
			for k := range a.Env {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var kv []string
			for _, k := range keys {
				kv = append(kv, "`"+k+"="+a.Env[k]+"`")
			}
			fmt.Fprintf(&b, "- Environment added: %s.\n", strings.Join(kv, ", "))
		}
		for _, q := range a.Quirks {
			fmt.Fprintf(&b, "- Quirk `%s`.\n", q)
		}
		for _, n := range a.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.Bytes()
}
