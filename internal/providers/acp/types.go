package acp

import (
	"encoding/json"
	"strings"
)

// Implementation is the agentInfo of an initialize result.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// AuthMethod is one authentication method an agent advertised.
type AuthMethod struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
}

// AgentCapabilities is the part of agentCapabilities the client acts on.
type AgentCapabilities struct {
	LoadSession         bool                       `json:"loadSession"`
	SessionCapabilities map[string]json.RawMessage `json:"sessionCapabilities"`
	PromptCapabilities  json.RawMessage            `json:"promptCapabilities,omitempty"`
}

// Session reports whether a session capability (list, resume, close, fork,
// delete, ...) is advertised: present and not null.
func (a AgentCapabilities) Session(name string) bool {
	v, ok := a.SessionCapabilities[name]
	return ok && len(v) > 0 && string(v) != "null" && string(v) != "false"
}

// InitializeResult is the agent's initialize answer, decoded leniently;
// Raw is the answer as it came.
type InitializeResult struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentInfo         *Implementation   `json:"agentInfo,omitempty"`
	AgentCapabilities AgentCapabilities `json:"agentCapabilities"`
	AuthMethods       []AuthMethod      `json:"authMethods"`
	Raw               json.RawMessage   `json:"-"`
}

// HasAuthMethod reports whether id was advertised.
func (r InitializeResult) HasAuthMethod(id string) bool {
	for _, m := range r.AuthMethods {
		if m.ID == id {
			return true
		}
	}
	return false
}

// Mode is one advertised session mode.
type Mode struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
}

// ModeState is a session's modes.
type ModeState struct {
	CurrentModeID  string `json:"currentModeId"`
	AvailableModes []Mode `json:"availableModes"`
}

// ModelInfo is one advertised model (unstable ACP "models").
type ModelInfo struct {
	ModelID string `json:"modelId"`
	Name    string `json:"name,omitempty"`
}

// ModelState is a session's models.
type ModelState struct {
	CurrentModelID  string      `json:"currentModelId"`
	AvailableModels []ModelInfo `json:"availableModels"`
}

// ConfigValue is one value a select config option offers.
type ConfigValue struct {
	Value string `json:"value"`
	Name  string `json:"name,omitempty"`
}

// ConfigOption is one session configuration option. Options is flattened
// from plain or grouped select options; Raw keeps the option as it came.
type ConfigOption struct {
	ID           string          `json:"id"`
	Name         string          `json:"name,omitempty"`
	Category     string          `json:"category,omitempty"`
	Type         string          `json:"type,omitempty"`
	CurrentValue json.RawMessage `json:"currentValue,omitempty"`
	Options      []ConfigValue   `json:"-"`
	Raw          json.RawMessage `json:"-"`
}

// Current returns the current value as a string (JSON text for non-strings).
func (o ConfigOption) Current() string {
	var s string
	if json.Unmarshal(o.CurrentValue, &s) == nil {
		return s
	}
	return string(o.CurrentValue)
}

// UnmarshalJSON decodes an option leniently, flattening grouped options.
func (o *ConfigOption) UnmarshalJSON(b []byte) error {
	type plain ConfigOption
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	var rest struct {
		Options []json.RawMessage `json:"options"`
	}
	_ = json.Unmarshal(b, &rest)
	for _, raw := range rest.Options {
		var item struct {
			Value   *string       `json:"value"`
			Name    string        `json:"name"`
			Options []ConfigValue `json:"options"`
		}
		if json.Unmarshal(raw, &item) != nil {
			continue
		}
		if item.Value != nil {
			p.Options = append(p.Options, ConfigValue{Value: *item.Value, Name: item.Name})
		}
		p.Options = append(p.Options, item.Options...)
	}
	*o = ConfigOption(p)
	o.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// Offers reports whether v is one of the option's values (always true when
// the option lists none).
func (o ConfigOption) Offers(v string) bool {
	if len(o.Options) == 0 {
		return true
	}
	for _, c := range o.Options {
		if c.Value == v {
			return true
		}
	}
	return false
}

// Values lists the offered values.
func (o ConfigOption) Values() []string {
	out := make([]string, 0, len(o.Options))
	for _, c := range o.Options {
		out = append(out, c.Value)
	}
	return out
}

// SessionSetup is what session/new, load or resume returned.
type SessionSetup struct {
	SessionID     string          `json:"sessionId,omitempty"`
	Modes         *ModeState      `json:"modes,omitempty"`
	Models        *ModelState     `json:"models,omitempty"`
	ConfigOptions []ConfigOption  `json:"configOptions,omitempty"`
	Raw           json.RawMessage `json:"-"`
}

// SessionInfo is one entry of session/list.
type SessionInfo struct {
	SessionID string          `json:"sessionId"`
	CWD       string          `json:"cwd"`
	Title     string          `json:"title,omitempty"`
	UpdatedAt string          `json:"updatedAt,omitempty"`
	Raw       json.RawMessage `json:"-"`
}

// PermissionOption is one option of a session/request_permission.
type permissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

// decodeSetup decodes a session setup answer, keeping configOptions that
// fail to decode out instead of failing the whole answer.
func decodeSetup(raw json.RawMessage) SessionSetup {
	var s SessionSetup
	var shell struct {
		SessionID     string            `json:"sessionId"`
		Modes         *ModeState        `json:"modes"`
		Models        *ModelState       `json:"models"`
		ConfigOptions []json.RawMessage `json:"configOptions"`
	}
	_ = json.Unmarshal(raw, &shell)
	s.SessionID, s.Modes, s.Models = shell.SessionID, shell.Modes, shell.Models
	s.ConfigOptions = decodeConfigOptions(shell.ConfigOptions)
	s.Raw = raw
	return s
}

func decodeConfigOptions(raws []json.RawMessage) []ConfigOption {
	var out []ConfigOption
	for _, r := range raws {
		var o ConfigOption
		if json.Unmarshal(r, &o) == nil && o.ID != "" {
			out = append(out, o)
		}
	}
	return out
}

// optionFor finds the config option of a category (or, failing that, one
// whose id is one of ids).
func optionFor(opts []ConfigOption, category string, ids ...string) (ConfigOption, bool) {
	for _, o := range opts {
		if o.Category == category {
			return o, true
		}
	}
	for _, o := range opts {
		for _, id := range ids {
			if strings.EqualFold(o.ID, id) {
				return o, true
			}
		}
	}
	return ConfigOption{}, false
}
