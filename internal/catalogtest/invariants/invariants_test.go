package invariants

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/gen/spec"
)

func TestProfileCounts(t *testing.T) {
	want := map[string]int{"minimal": 9, "core": 30, "freebuff": 16, "legacy": 52, "full": 49}
	got := map[string]int{}
	for _, p := range catalogs.Profiles() {
		got[p.Name] = len(p.Entries(false))
	}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("profile %s serves %d tools, want %d", name, got[name], n)
		}
	}
	if len(got) != len(want) {
		t.Errorf("profiles %v, want exactly %v", got, want)
	}
	if catalogs.DefaultProfile != "full" {
		t.Errorf("default profile %q, want full", catalogs.DefaultProfile)
	}
}

func TestEveryModernToolIsServed(t *testing.T) {
	served := map[string]bool{}
	for _, p := range catalogs.Profiles() {
		for _, e := range p.Entries(false) {
			if !e.Legacy {
				served[e.Name] = true
			}
		}
	}
	n := 0
	for _, e := range catalogs.All() {
		if e.Legacy {
			continue
		}
		n++
		if !served[e.Name] {
			t.Errorf("%s is in no profile", e.Name)
		}
	}
	if n != 49 {
		t.Errorf("%d modern tools, want 49", n)
	}
}

func TestNamesUniqueWithinProfiles(t *testing.T) {
	for _, p := range catalogs.Profiles() {
		seen := map[string]bool{}
		for _, e := range p.Entries(false) {
			if seen[e.Name] {
				t.Errorf("profile %s serves %s twice", p.Name, e.Name)
			}
			seen[e.Name] = true
		}
	}
}

func TestAliasesResolveToModernTools(t *testing.T) {
	modern := map[string]*catalogs.Entry{}
	for _, e := range catalogs.All() {
		if !e.Legacy {
			modern[e.Name] = e
		}
	}
	n := 0
	for _, e := range catalogs.All() {
		if !e.Legacy {
			continue
		}
		n++
		m := modern[e.Target]
		if m == nil {
			t.Errorf("alias %s targets unknown tool %s", e.Name, e.Target)
			continue
		}
		if m.Write != e.Write || m.Annotations != e.Annotations {
			t.Errorf("alias %s does not share access and annotations with %s", e.Name, e.Target)
		}
	}
	if n != 52 {
		t.Errorf("%d aliases, want 52", n)
	}
}

func TestSchemasAreClosedObjectsWithoutTopLevelCombinators(t *testing.T) {
	for _, e := range catalogs.All() {
		var s map[string]any
		if err := json.Unmarshal([]byte(e.InputSchema), &s); err != nil {
			t.Errorf("%s: schema is not JSON: %v", e.Name, err)
			continue
		}
		if s["type"] != "object" || s["additionalProperties"] != false {
			t.Errorf("%s: schema must be a closed object: %s", e.Name, e.InputSchema)
		}
		for _, k := range []string{"anyOf", "oneOf", "allOf", "$schema", "$ref", "$defs"} {
			if _, ok := s[k]; ok {
				t.Errorf("%s: top-level %s", e.Name, k)
			}
		}
		var listing map[string]any
		if err := json.Unmarshal([]byte(e.Listing), &listing); err != nil || listing["name"] != e.Name {
			t.Errorf("%s: listing is not this tool's JSON: %v", e.Name, err)
		}
	}
}

var toolWord = regexp.MustCompile(`[a-z][a-z0-9]*(?:_[a-z0-9]+)+`)

func TestDescriptionsNameOnlyToolsOfTheSameProfile(t *testing.T) {
	all := map[string]bool{}
	for _, e := range catalogs.All() {
		all[e.Name] = true
	}
	for _, p := range catalogs.Profiles() {
		served := map[string]bool{}
		for _, e := range p.Entries(false) {
			served[e.Name] = true
		}
		for _, e := range p.Entries(false) {
			for _, w := range toolWord.FindAllString(e.Description, -1) {
				if all[w] && !served[w] {
					t.Errorf("profile %s: %s's description names %s, which the profile does not serve", p.Name, e.Name, w)
				}
			}
		}
	}
}

func TestReadOnlyRemovesEveryWriteTool(t *testing.T) {
	for _, p := range catalogs.Profiles() {
		var reads, writes int
		for _, e := range p.Entries(false) {
			if e.Write {
				writes++
				if e.Annotations.ReadOnly {
					t.Errorf("%s: write tool marked readOnly", e.Name)
				}
			} else {
				reads++
				if !e.Annotations.ReadOnly || e.Annotations.Destructive {
					t.Errorf("%s: read tool must be readOnly and not destructive", e.Name)
				}
			}
		}
		ro := p.Entries(true)
		if len(ro) != reads {
			t.Errorf("profile %s read-only serves %d tools, want its %d reads", p.Name, len(ro), reads)
		}
		for _, e := range ro {
			if e.Write {
				t.Errorf("profile %s read-only still serves %s", p.Name, e.Name)
			}
		}
		if writes == 0 && p.Name != "legacy" && p.Name != "minimal" && p.Name != "freebuff" {
			t.Errorf("profile %s has no write tools", p.Name)
		}
	}
}

// TestSpecAnnotationsAreExplicit reads the spec itself: the generated
// table cannot show whether a hint was stated or defaulted.
func TestSpecAnnotationsAreExplicit(t *testing.T) {
	s, err := spec.Load(os.DirFS("../../.."))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range s.Groups {
		for _, tool := range g.Tools {
			n++
			a := tool.Annotations
			if a.ReadOnly == nil || a.Destructive == nil || a.Idempotent == nil || a.OpenWorld == nil {
				t.Errorf("%s: every annotation must be stated in the spec", tool.Name)
			}
		}
	}
	if n != 49 {
		t.Errorf("spec has %d tools, want 49", n)
	}
}

func TestGroupsMatchDesign(t *testing.T) {
	want := map[string][]string{
		"runtime":         {"get_runtime_status"},
		"sessions":        {"list_providers", "list_agent_sessions", "get_session_diff", "read_session_events", "send_session_message", "cancel_session", "create_session", "resume_session"},
		"session-control": {"list_permission_requests", "respond_to_permission", "set_session_model", "set_session_reasoning"},
		"work":            {"get_work_graph", "list_work_items", "get_work_item", "create_work_item", "verify_work_item"},
		"evidence":        {"list_evidence", "get_evidence"},
		"handoffs":        {"get_handoff_packet", "create_handoff", "update_handoff_status"},
		"reviews":         {"record_review", "request_review"},
		"claims":          {"list_claims", "acquire_claim", "release_claim"},
		"conversations":   {"list_conversations", "read_conversation", "create_conversation", "join_conversation", "send_conversation_message", "reconcile_conversation"},
		"freebuff":        {"list_projects", "list_threads", "get_thread", "get_thread_messages", "get_active_work", "get_thread_progress", "list_active_threads", "list_project_files", "read_project_file", "list_models", "send_thread_message", "stop_thread", "resume_thread", "set_thread_model", "set_thread_reasoning"},
	}
	got := map[string][]string{}
	for _, e := range catalogs.All() {
		if !e.Legacy {
			got[e.Group] = append(got[e.Group], e.Name)
		}
	}
	for g, names := range want {
		if !slices.Equal(got[g], names) {
			t.Errorf("group %s = %v, want %v", g, got[g], names)
		}
	}
}
