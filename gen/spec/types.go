// Package spec defines the format of the files under spec/ (the single source
// of truth for the MCP surface), loads them with file:line positions, and
// validates them against spec/spec.schema.json, which is generated from the
// Go types in this file.
package spec

// DefsFile is spec/defs.yaml: shared schema fragments referenced as
// {$ref: "#/defs/<name>"}.
type DefsFile struct {
	Defs map[string]*Schema `json:"defs" yaml:"defs" jsonschema:"required"`
	// Bounds are the spec-wide input bounds (see Bounds).
	Bounds *Bounds `json:"bounds" yaml:"bounds" jsonschema:"required"`
}

// Bounds declares, once for the whole spec, the bound of every string and
// array argument that states no maxLength or maxItems of its own: the kind
// the property names with `bound: <kind>`, else the default kind of its
// type. Lengths count characters (Unicode code points), as JSON Schema
// does. The generated decoder, the services (through package
// catalogs/limits) and the ent schemas enforce them; tools/list serves only
// the bounds stated on a property, and docs/tools.md lists every bound.
type Bounds struct {
	// Default names the kind of a string and of an array that names none.
	Default BoundDefaults `json:"default" yaml:"default" jsonschema:"required"`
	// Kinds are the named bounds, each a maxLength (strings) or a maxItems
	// (arrays).
	Kinds map[string]*BoundKind `json:"kinds" yaml:"kinds" jsonschema:"required"`
}

// BoundDefaults names the default kinds.
type BoundDefaults struct {
	String string `json:"string" yaml:"string" jsonschema:"required"`
	Array  string `json:"array" yaml:"array" jsonschema:"required"`
}

// BoundKind is one named bound.
type BoundKind struct {
	MaxLength *int64 `json:"maxLength,omitempty" yaml:"maxLength,omitempty" jsonschema:"minimum=1"`
	MaxItems  *int64 `json:"maxItems,omitempty" yaml:"maxItems,omitempty" jsonschema:"minimum=1"`
	// Use says what the kind is for (docs only).
	Use string `json:"use" yaml:"use" jsonschema:"required,minLength=3,maxLength=200"`
}

// ToolsFile is one spec/tools/<group>.yaml.
type ToolsFile struct {
	Group string  `json:"group" yaml:"group" jsonschema:"required,pattern=^[a-z][a-z-]*$"`
	Tools []*Tool `json:"tools" yaml:"tools" jsonschema:"required,minItems=1"`
}

// Tool is one modern MCP tool.
type Tool struct {
	Name        string      `json:"name" yaml:"name" jsonschema:"required,pattern=^[a-z][a-z0-9_]*$,maxLength=64"`
	Access      string      `json:"access" yaml:"access" jsonschema:"required,enum=read,enum=write"`
	Annotations Annotations `json:"annotations" yaml:"annotations" jsonschema:"required"`
	Description string      `json:"description" yaml:"description" jsonschema:"required,minLength=10,maxLength=400"`
	// Output is the answer's shape (structuredContent, and the text for
	// modern names), in the same schema subset. It is not served in
	// tools/list; it generates the Go answer type the handler returns, the
	// answer's documentation, and the schema tests check answers against.
	Output *Schema `json:"output" yaml:"output" jsonschema:"required"`
	Answer *Answer `json:"answer" yaml:"answer" jsonschema:"required"`
	Input  *Schema `json:"input" yaml:"input" jsonschema:"required"`

	Line int    `json:"-" yaml:"-"`
	File string `json:"-" yaml:"-"`
}

// Answer declares how large a tool's answer may be, and how a collection
// is paged. Every tool states a budget; a read tool either pages (Page) or
// says why its answer stays small without paging (Bounded).
type Answer struct {
	// Budget is the answer's size in o200k tokens of the compact JSON the
	// model reads, with default arguments. The server cuts a page that would
	// pass it (or 1 MiB on the wire) short, with nextCursor.
	Budget int `json:"budget" yaml:"budget" jsonschema:"required,minimum=50,maximum=8000"`
	// Page names the answer fields that hold the page's records. A paged
	// tool takes limit and cursor ({$ref: "#/defs/limit"}, {$ref:
	// "#/defs/cursor"}) and answers nextCursor while more records exist.
	Page []string `json:"page,omitempty" yaml:"page,omitempty" jsonschema:"minItems=1"`
	// Bounded says why an answer without paging stays small, e.g. "one
	// record" or "one entry per provider".
	Bounded string `json:"bounded,omitempty" yaml:"bounded,omitempty" jsonschema:"minLength=3,maxLength=200"`
}

// Annotations are the four MCP tool hints; every one must be stated.
type Annotations struct {
	ReadOnly    *bool `json:"readOnly" yaml:"readOnly" jsonschema:"required"`
	Destructive *bool `json:"destructive" yaml:"destructive" jsonschema:"required"`
	Idempotent  *bool `json:"idempotent" yaml:"idempotent" jsonschema:"required"`
	OpenWorld   *bool `json:"openWorld" yaml:"openWorld" jsonschema:"required"`
}

// Schema is the JSON Schema subset the generator compiles (see
// docs/spec-format.md). Keywords outside this struct are spec errors.
type Schema struct {
	Ref         string             `json:"$ref,omitempty" yaml:"$ref,omitempty" jsonschema:"pattern=^#/(defs|records)/[A-Za-z][A-Za-z0-9]*$"`
	Type        TypeList           `json:"type,omitempty" yaml:"type,omitempty"`
	Description string             `json:"description,omitempty" yaml:"description,omitempty" jsonschema:"maxLength=300"`
	Properties  map[string]*Schema `json:"properties,omitempty" yaml:"properties,omitempty"`
	Required    []string           `json:"required,omitempty" yaml:"required,omitempty"`
	MinLength   *int64             `json:"minLength,omitempty" yaml:"minLength,omitempty" jsonschema:"minimum=0"`
	MaxLength   *int64             `json:"maxLength,omitempty" yaml:"maxLength,omitempty" jsonschema:"minimum=1"`
	Pattern     string             `json:"pattern,omitempty" yaml:"pattern,omitempty"`
	// Format date-time marks an RFC 3339 timestamp (answers only).
	Format   string    `json:"format,omitempty" yaml:"format,omitempty" jsonschema:"enum=date-time"`
	Enum     []string  `json:"enum,omitempty" yaml:"enum,omitempty" jsonschema:"minItems=1"`
	Const    *string   `json:"const,omitempty" yaml:"const,omitempty"`
	Minimum  *float64  `json:"minimum,omitempty" yaml:"minimum,omitempty"`
	Maximum  *float64  `json:"maximum,omitempty" yaml:"maximum,omitempty"`
	MinItems *int64    `json:"minItems,omitempty" yaml:"minItems,omitempty" jsonschema:"minimum=0"`
	MaxItems *int64    `json:"maxItems,omitempty" yaml:"maxItems,omitempty" jsonschema:"minimum=1"`
	Items    *Schema   `json:"items,omitempty" yaml:"items,omitempty"`
	OneOf    []*Schema `json:"oneOf,omitempty" yaml:"oneOf,omitempty" jsonschema:"minItems=2,maxItems=2"`
	Default  any       `json:"default,omitempty" yaml:"default,omitempty"`
	// Bound names the kind (Bounds.Kinds) whose bound a string or array
	// without its own maxLength/maxItems takes. It is never served.
	Bound string `json:"bound,omitempty" yaml:"bound,omitempty" jsonschema:"pattern=^[a-z][A-Za-z0-9]*$"`

	// Implied is set on the decoder's copy of a schema (Tool.Exact) when its
	// maxLength or maxItems came from a kind: the kind's name.
	Implied string `json:"-" yaml:"-"`

	// PropertyOrder is the order properties appear in the YAML file; the
	// served schema keeps it.
	PropertyOrder []string `json:"-" yaml:"-"`
	Line          int      `json:"-" yaml:"-"`
}

// TypeList is a JSON Schema "type": one name, or a name plus "null".
type TypeList []string

// RecordsFile is spec/records.yaml: the records answers are made of,
// referenced as {$ref: "#/records/<name>"}.
type RecordsFile struct {
	Records map[string]*Schema `json:"records" yaml:"records" jsonschema:"required"`
}

// ProfilesFile is spec/profiles.yaml.
type ProfilesFile struct {
	Default  string     `json:"default" yaml:"default" jsonschema:"required"`
	Profiles []*Profile `json:"profiles" yaml:"profiles" jsonschema:"required,minItems=1"`
}

// Profile is a named tool set with its catalog budget.
type Profile struct {
	Name        string   `json:"name" yaml:"name" jsonschema:"required,pattern=^[a-z]+$"`
	Description string   `json:"description" yaml:"description" jsonschema:"required,minLength=10"`
	Groups      []string `json:"groups,omitempty" yaml:"groups,omitempty"`
	Legacy      bool     `json:"legacy,omitempty" yaml:"legacy,omitempty"`
	Tools       int      `json:"tools" yaml:"tools" jsonschema:"required,minimum=1"`
	Budget      Budget   `json:"budget,omitempty" yaml:"budget,omitempty"`

	Line int    `json:"-" yaml:"-"`
	File string `json:"-" yaml:"-"`
}

// Budget limits a profile's tools/list.
type Budget struct {
	MaxTokens     int        `json:"maxTokens,omitempty" yaml:"maxTokens,omitempty" jsonschema:"minimum=1"`
	MaxBytes      int        `json:"maxBytes,omitempty" yaml:"maxBytes,omitempty" jsonschema:"minimum=1"`
	MaxToolTokens int        `json:"maxToolTokens,omitempty" yaml:"maxToolTokens,omitempty" jsonschema:"minimum=1"`
	MaxBytesRatio *RatioRule `json:"maxBytesRatio,omitempty" yaml:"maxBytesRatio,omitempty"`
}

// RatioRule bounds a profile's tools/list bytes relative to another profile's.
type RatioRule struct {
	Of    string  `json:"of" yaml:"of" jsonschema:"required"`
	Ratio float64 `json:"ratio" yaml:"ratio" jsonschema:"required,exclusiveMinimum=0,maximum=1"`
}

// AliasesFile is spec/aliases.yaml: the legacy 0.3.x names.
type AliasesFile struct {
	Notes   []string `json:"notes,omitempty" yaml:"notes,omitempty"`
	Aliases []*Alias `json:"aliases" yaml:"aliases" jsonschema:"required,minItems=1"`
}

// Alias maps a legacy name onto a modern tool.
type Alias struct {
	Name        string            `json:"name" yaml:"name" jsonschema:"required,pattern=^[a-z][a-z0-9_]*$"`
	Tool        string            `json:"tool" yaml:"tool" jsonschema:"required"`
	Description string            `json:"description" yaml:"description" jsonschema:"required,minLength=10,maxLength=400"`
	Drop        []string          `json:"drop,omitempty" yaml:"drop,omitempty"`
	Rename      map[string]string `json:"rename,omitempty" yaml:"rename,omitempty"`
	Defaults    map[string]any    `json:"defaults,omitempty" yaml:"defaults,omitempty"`
	Fixed       map[string]any    `json:"fixed,omitempty" yaml:"fixed,omitempty"`
	Response    *Response         `json:"response,omitempty" yaml:"response,omitempty"`
	Notes       []string          `json:"notes,omitempty" yaml:"notes,omitempty"`

	Line int    `json:"-" yaml:"-"`
	File string `json:"-" yaml:"-"`
}

// Response names how a legacy alias reshapes the modern answer's text content.
type Response struct {
	Unwrap    string `json:"unwrap,omitempty" yaml:"unwrap,omitempty"`
	WrapArray bool   `json:"wrapArray,omitempty" yaml:"wrapArray,omitempty"`
}

// EnvFile is spec/env.yaml: every environment variable the runtime (or its
// test suite) reads, in the order the tables list them.
type EnvFile struct {
	Variables []*EnvVar `json:"variables" yaml:"variables" jsonschema:"required,minItems=1"`
}

// EnvVar is one environment variable.
type EnvVar struct {
	Name string `json:"name" yaml:"name" jsonschema:"required,pattern=^[A-Z][A-Z0-9_]*$"`
	// Aliases are other names read when Name is unset (0.3.x's names).
	Aliases []string `json:"aliases,omitempty" yaml:"aliases,omitempty" jsonschema:"uniqueItems=true"`
	// Default is what applies when the variable is unset, in Markdown
	// (a literal value in backticks); empty when unset means "off" or
	// "none".
	Default     string `json:"default,omitempty" yaml:"default,omitempty"`
	Description string `json:"description" yaml:"description" jsonschema:"required,minLength=10,maxLength=400"`
	// Scope is who reads it: the runtime (README's table) or the test
	// suite (CONTRIBUTING's table).
	Scope string `json:"scope" yaml:"scope" jsonschema:"required,enum=runtime,enum=test"`

	Line int    `json:"-" yaml:"-"`
	File string `json:"-" yaml:"-"`
}

// Files is the root of spec.schema.json: one definition per file kind.
type Files struct {
	Defs     DefsFile     `json:"defs"`
	Records  RecordsFile  `json:"records"`
	Tools    ToolsFile    `json:"tools"`
	Profiles ProfilesFile `json:"profiles"`
	Aliases  AliasesFile  `json:"aliases"`
	Env      EnvFile      `json:"env"`
	Agents   AgentsFile   `json:"agents"`
}

// AgentsFile is spec/agents.yaml: the built-in agent catalog. interopgen
// turns it into the runtime's table (internal/providers) and docs/agents.md.
type AgentsFile struct {
	Agents []*Agent `json:"agents" yaml:"agents" jsonschema:"required,minItems=1"`
}

// Agent is one built-in agent: how the runtime starts it, how it is
// installed and authenticated, what doctor checks and what is particular
// to it. A user's agents file (INTEROP_AGENTS_FILE) has the same shape.
type Agent struct {
	ID   string `json:"id" yaml:"id" jsonschema:"required,pattern=^[a-z0-9]+(-[a-z0-9]+)*$,maxLength=64"`
	Name string `json:"name" yaml:"name" jsonschema:"required,minLength=1,maxLength=80"`
	// Protocol is how the runtime talks to it: acp (the one ACP client),
	// or one of the native adapters.
	Protocol string `json:"protocol" yaml:"protocol" jsonschema:"required,enum=acp,enum=opencode-http,enum=codex-app-server,enum=freebuff"`
	// Command is the argv the runtime starts (an ACP agent speaks on its
	// stdin/stdout); its first word is searched on PATH.
	Command []string `json:"command" yaml:"command" jsonschema:"required,minItems=1"`
	// Programs are other names of the first word, tried in order when it
	// is not on PATH (an older release's name).
	Programs []string `json:"programs,omitempty" yaml:"programs,omitempty"`
	// CommandEnv names an environment variable whose command line replaces
	// the first word of Command (the rest of Command is kept).
	CommandEnv string `json:"commandEnv,omitempty" yaml:"commandEnv,omitempty" jsonschema:"pattern=^[A-Z][A-Z0-9_]*$"`
	// Env is added to the agent's environment.
	Env     map[string]string `json:"env,omitempty" yaml:"env,omitempty"`
	Install AgentInstall      `json:"install" yaml:"install" jsonschema:"required"`
	Auth    AgentAuth         `json:"auth" yaml:"auth" jsonschema:"required"`
	Doctor  AgentDoctor       `json:"doctor,omitempty" yaml:"doctor,omitempty"`
	// Quirks are the runtime behaviours particular to this agent.
	Quirks []string `json:"quirks,omitempty" yaml:"quirks,omitempty" jsonschema:"uniqueItems=true,enum=claude-default-mode,enum=cursor-extensions,enum=no-fs-read"`
	// Notes are what else is particular (documented; listed as the
	// provider's limitations).
	Notes []string `json:"notes,omitempty" yaml:"notes,omitempty"`

	Line int `json:"-" yaml:"-"`
}

// AgentInstall says how to install the agent's program.
type AgentInstall struct {
	// Package is the npm package, when there is one.
	Package string `json:"package,omitempty" yaml:"package,omitempty"`
	// Version is the release the runtime is tested against.
	Version string `json:"version,omitempty" yaml:"version,omitempty"`
	// Hint is the install command (shown as the fix of a missing program).
	Hint string `json:"hint" yaml:"hint" jsonschema:"required,minLength=5"`
}

// AgentAuth says how the agent authenticates.
type AgentAuth struct {
	// Method is the ACP authMethod the runtime authenticates with right
	// after initialize, when the agent advertises it.
	Method string `json:"method,omitempty" yaml:"method,omitempty"`
	// How is how a user authenticates it (shown as the fix when the agent
	// answers that authentication is required).
	How string `json:"how" yaml:"how" jsonschema:"required,minLength=5"`
}

// AgentDoctor is what doctor checks.
type AgentDoctor struct {
	// VersionArgs are the arguments that print the program's version
	// (used when initialize names none).
	VersionArgs []string `json:"versionArgs,omitempty" yaml:"versionArgs,omitempty"`
	// Tested is the range of versions tested (inclusive); doctor warns
	// outside it.
	TestedMin string `json:"testedMin,omitempty" yaml:"testedMin,omitempty" jsonschema:"pattern=^[0-9]+\\.[0-9]+\\.[0-9]+$"`
	TestedMax string `json:"testedMax,omitempty" yaml:"testedMax,omitempty" jsonschema:"pattern=^[0-9]+\\.[0-9]+\\.[0-9]+$"`
}
