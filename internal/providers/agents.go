package providers

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/internal/lazy"
)

// Protocols an agent may speak: ACP through the one ACP client, or one of
// the native adapters.
const (
	ProtocolACP            = "acp"
	ProtocolOpenCodeHTTP   = "opencode-http"
	ProtocolCodexAppServer = "codex-app-server"
	ProtocolFreebuff       = "freebuff"
)

// Protocols lists every protocol an agent entry may name.
func Protocols() []string {
	return []string{ProtocolACP, ProtocolOpenCodeHTTP, ProtocolCodexAppServer, ProtocolFreebuff}
}

// Quirks the runtime implements for an ACP entry.
const (
	// QuirkCursorExtensions answers Cursor's blocking cursor/* requests
	// (ask_question and create_plan held as permission requests,
	// update_todos accepted at once).
	QuirkCursorExtensions = "cursor-extensions"
	// QuirkNoFileReads offers the agent no fs/read_text_file: it reads
	// files itself. Gemini CLI 0.61.0 takes the client's not-found error
	// for a read failure and then writes a new file without asking.
	QuirkNoFileReads = "no-fs-read"
	// QuirkClaudeDefaultMode starts each new session in Claude Code's
	// permission mode "default" (every edit asks) unless a settings file
	// the user controls names a mode: claude-agent-acp 0.101.0 starts a
	// session in "auto" (no approvals) when none is set.
	QuirkClaudeDefaultMode = "claude-default-mode"
)

// KnownQuirks are the quirks an entry may declare.
func KnownQuirks() []string {
	return []string{QuirkClaudeDefaultMode, QuirkCursorExtensions, QuirkNoFileReads}
}

// AgentSpec is one agent entry: a built-in one of spec/agents.yaml (the
// generated [BuiltinAgents]) or a user's, from the agents file.
type AgentSpec struct {
	ID       ID
	Name     string
	Protocol string
	// Command is the argv of the agent program; its first word is searched
	// on PATH, then Programs in order.
	Command  []string
	Programs []string
	// CommandEnv names a variable whose command line replaces Command's
	// first word.
	CommandEnv string
	Env        map[string]string
	// InstallPackage and InstallVersion are the npm package and the
	// release tested; InstallHint the install command.
	InstallPackage string
	InstallVersion string
	InstallHint    string
	// AuthMethod is the ACP authMethod used after initialize when
	// advertised; AuthHow how a user authenticates the agent.
	AuthMethod string
	AuthHow    string
	// VersionArgs print the program's version; TestedMin..TestedMax
	// (inclusive, "" = open) is the range of versions tested.
	VersionArgs []string
	TestedMin   string
	TestedMax   string
	Quirks      []string
	Notes       []string
	// Source is "spec/agents.yaml" for a built-in entry, else the user's
	// file; Line is the entry's line in it.
	Source string
	Line   int
}

// HasQuirk reports whether the entry declares q.
func (s AgentSpec) HasQuirk(q string) bool {
	for _, x := range s.Quirks {
		if x == q {
			return true
		}
	}
	return false
}

// VersionWarning says how version v stands against the tested range: ""
// when it is inside (or nothing is known), else a warning with the range.
func (s AgentSpec) VersionWarning(v string) string {
	if v == "" || (s.TestedMin == "" && s.TestedMax == "") {
		return ""
	}
	got, ok := parseVersion(v)
	if !ok {
		return ""
	}
	rng := "tested " + s.TestedMin + " to " + s.TestedMax
	if s.TestedMin == s.TestedMax {
		rng = "tested " + s.TestedMin
	}
	if lo, ok := parseVersion(s.TestedMin); ok && compareVersion(got, lo) < 0 {
		return fmt.Sprintf("version %s is older than the tested range (%s)", v, rng)
	}
	if hi, ok := parseVersion(s.TestedMax); ok && compareVersion(got, hi) > 0 {
		return fmt.Sprintf("version %s is newer than the tested range (%s)", v, rng)
	}
	return ""
}

var versionRE = lazy.Regexp{Expr: `^v?(\d+)\.(\d+)\.(\d+)`}

func parseVersion(v string) ([3]int, bool) {
	m := versionRE.Get().FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		return [3]int{}, false
	}
	var out [3]int
	for i := range out {
		out[i], _ = strconv.Atoi(m[i+1])
	}
	return out, true
}

func compareVersion(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// IDRule is the rule an agent id follows, as error messages state it.
const IDRule = "lower-case letters, digits and dashes (no leading, trailing or doubled dash), at most 64 characters"

// ValidID reports whether s is a well-formed agent id (IDRule: the
// pattern ^[a-z0-9]+(-[a-z0-9]+)*$, at most 64 characters). It is a loop,
// not a regular expression: the registry checks every adapter's id while
// serve starts, before the client's initialize is answered.
func ValidID(s string) bool {
	if s == "" || len(s) > limits.CreateSessionProviderMaxLen {
		return false
	}
	dash := true // a leading dash is refused as a doubled one is
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			dash = false
		case c == '-' && !dash:
			dash = true
		default:
			return false
		}
	}
	return !dash
}

// AgentProblem is one bad entry of an agents file: where it is, the field,
// the rule it breaks and the fix. A bad entry never stops the runtime; the
// agent is reported unavailable with this.
type AgentProblem struct {
	File  string
	Line  int
	Field string
	Rule  string
	Fix   string
	// ID is the entry's id when it has a usable one (the agent is then
	// listed, unavailable); "" otherwise.
	ID ID
}

func (p AgentProblem) Error() string {
	where := p.File
	if p.Line > 0 {
		where = fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	s := fmt.Sprintf("%s: %s: %s", where, p.Field, p.Rule)
	if p.Fix != "" {
		s += " (fix: " + p.Fix + ")"
	}
	return s
}

// AgentsFileProblemsID is the id under which problems that belong to no
// usable agent id (a malformed file, an entry without a valid or unique
// id) are listed.
const AgentsFileProblemsID ID = "agents-file"

// userAgent is the YAML shape of one user entry.
type userAgent struct {
	ID         string            `yaml:"id"`
	Name       string            `yaml:"name"`
	Protocol   string            `yaml:"protocol"`
	Command    []string          `yaml:"command"`
	CommandEnv string            `yaml:"commandEnv"`
	Env        map[string]string `yaml:"env"`
	Install    struct {
		Package string `yaml:"package"`
		Version string `yaml:"version"`
		Hint    string `yaml:"hint"`
	} `yaml:"install"`
	Auth struct {
		Method string `yaml:"method"`
		How    string `yaml:"how"`
	} `yaml:"auth"`
	Doctor struct {
		VersionArgs []string `yaml:"versionArgs"`
		TestedMin   string   `yaml:"testedMin"`
		TestedMax   string   `yaml:"testedMax"`
	} `yaml:"doctor"`
	Quirks []string `yaml:"quirks"`
	Notes  []string `yaml:"notes"`
}

// userFields are the keys an entry may have.
var userFields = lazy.Value[map[string]bool]{New: func() map[string]bool {
	return map[string]bool{"id": true, "name": true, "protocol": true, "command": true, "commandEnv": true, "env": true,
		"install": true, "auth": true, "doctor": true, "quirks": true, "notes": true}
}}

// LoadAgentsFile reads a user's agents file. A missing file is no agents
// and no problem. Every bad entry is left out and reported; the good
// ones are returned. builtin are the ids a user entry may not reuse.
func LoadAgentsFile(path string, builtin []ID) ([]AgentSpec, []AgentProblem) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []AgentProblem{{File: path, Field: "file", Rule: "cannot be read: " + err.Error(),
			Fix: "make the file readable, or point INTEROP_AGENTS_FILE at another file"}}
	}
	return ParseAgentsFile(path, data, builtin)
}

// ParseAgentsFile is LoadAgentsFile over the file's content.
func ParseAgentsFile(path string, data []byte, builtin []ID) ([]AgentSpec, []AgentProblem) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		line := 0
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			fmt.Sscanf(strings.TrimPrefix(err.Error(), "yaml: "), "line %d:", &line)
		}
		return nil, []AgentProblem{{File: path, Line: line, Field: "file", Rule: "is not valid YAML: " + err.Error(),
			Fix: "correct the YAML syntax (the file is `agents:` followed by a list of entries)"}}
	}
	if len(root.Content) == 0 {
		return nil, nil
	}
	doc := root.Content[0]
	agents := mapValue(doc, "agents")
	if doc.Kind != yaml.MappingNode || agents == nil || agents.Kind != yaml.SequenceNode {
		return nil, []AgentProblem{{File: path, Line: doc.Line, Field: "agents", Rule: "the file must be a mapping with an `agents:` list",
			Fix: "write `agents:` followed by entries `- id: my-agent`, `name:`, `protocol: acp`, `command: [program, args]`"}}
	}
	seen := map[ID]int{}
	for _, id := range builtin {
		seen[id] = -1
	}
	var out []AgentSpec
	var problems []AgentProblem
	for _, n := range agents.Content {
		a, p := parseUserAgent(path, n, seen)
		if p != nil {
			problems = append(problems, *p)
			continue
		}
		seen[a.ID] = a.Line
		out = append(out, a)
	}
	return out, problems
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func lineOf(n *yaml.Node, key string) int {
	if v := mapValue(n, key); v != nil {
		return v.Line
	}
	return n.Line
}

func parseUserAgent(path string, n *yaml.Node, seen map[ID]int) (AgentSpec, *AgentProblem) {
	bad := func(field, rule, fix string) *AgentProblem {
		return &AgentProblem{File: path, Line: lineOf(n, field), Field: field, Rule: rule, Fix: fix}
	}
	if n.Kind != yaml.MappingNode {
		return AgentSpec{}, &AgentProblem{File: path, Line: n.Line, Field: "agents[]", Rule: "an entry must be a mapping",
			Fix: "write the entry as `- id: …` with name, protocol and command"}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i].Value; !userFields.Get()[k] {
			return AgentSpec{}, &AgentProblem{File: path, Line: n.Content[i].Line, Field: k, Rule: "is not a known field",
				Fix: "use only id, name, protocol, command, commandEnv, env, install, auth, doctor, quirks, notes"}
		}
	}
	var u userAgent
	if err := n.Decode(&u); err != nil {
		return AgentSpec{}, &AgentProblem{File: path, Line: n.Line, Field: "agents[]", Rule: "has a value of the wrong type: " + err.Error(),
			Fix: "command is a list of strings, env a mapping of strings"}
	}
	id := ID(u.ID)
	switch {
	case u.ID == "":
		return AgentSpec{}, bad("id", "is required", "add `id: my-agent`")
	case !ValidID(u.ID):
		return AgentSpec{}, bad("id", fmt.Sprintf("%q must be %s", u.ID, IDRule), "rename it, e.g. `id: my-agent`")
	}
	if first, dup := seen[id]; dup {
		p := bad("id", fmt.Sprintf("%q is already used by the built-in agent %s", u.ID, u.ID), "choose another id")
		if first > 0 {
			p.Rule = fmt.Sprintf("%q is already declared at line %d", u.ID, first)
		}
		return AgentSpec{}, p
	}
	withID := func(p *AgentProblem) (AgentSpec, *AgentProblem) { p.ID = id; return AgentSpec{}, p }
	if strings.TrimSpace(u.Name) == "" {
		return withID(bad("name", "is required", "add `name: My Agent`"))
	}
	if u.Protocol != ProtocolACP {
		rule := fmt.Sprintf("%q is not a protocol a user agent may use; the only one is acp", u.Protocol)
		if u.Protocol == "" {
			rule = "is required"
		}
		return withID(bad("protocol", rule, "set `protocol: acp` (the native protocols serve the built-in agents only)"))
	}
	if len(u.Command) == 0 || strings.TrimSpace(u.Command[0]) == "" {
		return withID(bad("command", "is required: the program and its arguments as a list", "add `command: [/path/to/program, --acp]`"))
	}
	for _, q := range u.Quirks {
		if !slices.Contains(KnownQuirks(), q) {
			return withID(bad("quirks", fmt.Sprintf("%q is not a known quirk (known: %s)", q, strings.Join(KnownQuirks(), ", ")), "remove it"))
		}
	}
	for k := range u.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return withID(bad("env", fmt.Sprintf("%q is not a variable name", k), "use NAME: value pairs"))
		}
	}
	hint := u.Install.Hint
	if hint == "" {
		hint = "install " + u.Command[0] + " or correct `command` in " + path
	}
	how := u.Auth.How
	if how == "" {
		how = "see " + u.Name + "'s documentation on how to log in"
	}
	return AgentSpec{
		ID: id, Name: u.Name, Protocol: u.Protocol, Command: u.Command, CommandEnv: u.CommandEnv, Env: u.Env,
		InstallPackage: u.Install.Package, InstallVersion: u.Install.Version, InstallHint: hint,
		AuthMethod: u.Auth.Method, AuthHow: how,
		VersionArgs: u.Doctor.VersionArgs, TestedMin: u.Doctor.TestedMin, TestedMax: u.Doctor.TestedMax,
		Quirks: u.Quirks, Notes: u.Notes, Source: path, Line: n.Line,
	}, nil
}
