package archtest

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// A layer is a set of package directories and the layers they may import.
// ARCHITECTURE.md ("What may import what") states the same table in prose;
// change both together.
type layer struct {
	name string
	// dirs are module-relative directories; "x/..." is x and everything
	// below it. The most specific match wins.
	dirs []string
	// mayImport are the layers this one may import, besides itself.
	mayImport []string
}

var layers = []layer{
	// The byte-pair encoder and its rank table format: internal/tokens
	// reads the o200k table with it, the generator writes the table with
	// it (one format, one hash).
	{name: "rank table", dirs: []string{"internal/tokens/bpe"}},
	{name: "foundation", dirs: []string{
		"catalogs/limits", "internal/argv", "internal/callinfo", "internal/clientsetup", "internal/clockctx", "internal/desk/markup", "internal/growstack", "internal/growstack/atinit", "internal/httpguard", "internal/interrupt",
		"internal/jsonrpc", "internal/lazy", "internal/osproc", "internal/paging", "internal/procgroup", "internal/progress",
		"internal/secrets", "internal/security", "internal/tokens", "internal/verify", "internal/version",
	}, mayImport: []string{"rank table"}},
	{name: "entities", dirs: []string{"ent/..."}, mayImport: []string{"foundation"}},
	{name: "store", dirs: []string{"internal/store/..."}, mayImport: []string{"foundation", "entities"}},
	{name: "catalogs", dirs: []string{"catalogs"}, mayImport: []string{"foundation"}},
	{name: "provider contract", dirs: []string{"internal/providers"}, mayImport: []string{"foundation"}},
	// The adapter kit: what every adapter needs (process supervisor,
	// pending operations, SSE reader); it knows no adapter.
	{name: "provider kit", dirs: []string{"internal/providers/kit/..."}, mayImport: []string{"foundation", "provider contract"}},
	// The adapters share the ACP client and nothing else of each other.
	{name: "acp", dirs: []string{"internal/providers/acp/..."}, mayImport: []string{"foundation", "provider contract", "provider kit"}},
	// One layer per adapter, so that no adapter imports another.
	adapter("codex"), adapter("opencode"),
	// Freebuff is an adapter that also owns the Freebuff tools' service, so
	// handlers and app may name it (see the handlers and app layers).
	{name: "freebuff", dirs: []string{"internal/providers/freebuff/..."}, mayImport: []string{"foundation", "provider contract", "provider kit"}},
	{name: "adapter set", dirs: []string{"internal/providers/adapters"}, mayImport: []string{
		"foundation", "provider contract", "provider kit", "acp", "adapter codex", "adapter opencode", "freebuff",
	}},
	{name: "registry", dirs: []string{"internal/providers/registry"}, mayImport: []string{"foundation", "provider contract", "store", "entities"}},
	{name: "services", dirs: []string{
		"internal/claims", "internal/conversations", "internal/delivery", "internal/events", "internal/workflow",
	}, mayImport: []string{"foundation", "provider contract", "registry", "store", "entities"}},
	{name: "handlers", dirs: []string{"handlers"}, mayImport: []string{
		"foundation", "catalogs", "provider contract", "freebuff", "registry", "services", "store", "entities",
	}},
	{name: "mcp server", dirs: []string{"internal/server"}, mayImport: []string{"foundation", "catalogs"}},
	{name: "transports", dirs: []string{"internal/stdio", "internal/stdio/frame", "internal/httpserve"}, mayImport: []string{"foundation"}},
	{name: "app", dirs: []string{"internal/app"}, mayImport: []string{
		"foundation", "catalogs", "provider contract", "freebuff", "adapter set", "registry", "services", "store", "entities", "handlers",
	}},
	{name: "commands", dirs: []string{
		"internal/cli", "internal/desk", "internal/doctor", "internal/importstate", "internal/workcli",
	}, mayImport: []string{
		"foundation", "catalogs", "provider contract", "adapter set", "registry", "services", "store", "entities",
		"handlers", "mcp server", "transports", "app",
	}},
	{name: "binary", dirs: []string{"cmd/interop-runtime"}, mayImport: []string{"commands"}},
	{name: "generator", dirs: []string{"gen/...", "cmd/interopgen"}, mayImport: []string{"rank table"}},
	// Test support and benchmarks may use anything; nothing above may use them.
	{name: "test support", dirs: []string{
		"internal/testutil/...", "internal/providers/registry/registrytest", "internal/bench/...", "cmd/interop-bench", "internal/catalogtest/...", "internal/e2e", "internal/archtest",
	}, mayImport: []string{"*"}},
}

// adapter is the layer of one provider adapter under internal/providers.
func adapter(name string) layer {
	return layer{name: "adapter " + name, dirs: []string{"internal/providers/" + name + "/..."},
		mayImport: []string{"foundation", "provider contract", "provider kit", "acp"}}
}

// sdkImporters are the only packages (besides test support) that may import
// the MCP SDK: everything else is independent of the protocol library.
var sdkImporters = map[string]bool{"internal/server": true, "internal/stdio": true, "internal/cli": true}

const sdkPrefix = "github.com/modelcontextprotocol/go-sdk"

// layerOf returns the layer of a package directory, by the most specific
// matching entry.
func layerOf(dir string) (*layer, bool) {
	best, bestLen := -1, -1
	for i, l := range layers {
		for _, d := range l.dirs {
			base, tree := strings.CutSuffix(d, "/...")
			if dir == base || (tree && strings.HasPrefix(dir, base+"/")) {
				if len(base) > bestLen {
					best, bestLen = i, len(base)
				}
			}
		}
	}
	if best < 0 {
		return nil, false
	}
	return &layers[best], true
}

func (l *layer) allows(other *layer) bool {
	if l.name == other.name {
		return true
	}
	for _, m := range l.mayImport {
		if m == "*" || m == other.name {
			return true
		}
	}
	return false
}

// TestEveryPackageHasALayer fails when a package directory belongs to no
// layer: a new package must be placed (here and in ARCHITECTURE.md).
func TestEveryPackageHasALayer(t *testing.T) {
	tr := loadTree(t)
	for _, dir := range tr.dirs() {
		if _, ok := layerOf(dir); !ok {
			t.Errorf("package %s belongs to no layer: add it to layers in internal/archtest/layers_test.go and to ARCHITECTURE.md", dir)
		}
	}
}

// TestImportsFollowTheLayers fails on every forbidden import arrow.
func TestImportsFollowTheLayers(t *testing.T) {
	for _, b := range forbiddenImports(loadTree(t)) {
		t.Error(b)
	}
}

// TestForbiddenArrowsAreCaught runs the checker on small made-up trees, so
// the layering test is known to fail when an arrow it forbids appears.
func TestForbiddenArrowsAreCaught(t *testing.T) {
	const m = "example.com/m"
	for _, tc := range []struct {
		name    string
		imports map[string][]string
		want    int
	}{
		{"server to handlers", map[string][]string{"internal/server": {m + "/handlers"}, "handlers": nil}, 1},
		{"service to handlers", map[string][]string{"internal/workflow": {m + "/handlers"}, "handlers": nil}, 1},
		{"adapter to registry", map[string][]string{"internal/providers/codex": {m + "/internal/providers/registry"}, "internal/providers/registry": nil}, 1},
		{"adapter to another adapter", map[string][]string{"internal/providers/codex": {m + "/internal/providers/opencode"}, "internal/providers/opencode": nil}, 1},
		{"handlers to a concrete adapter", map[string][]string{"handlers": {m + "/internal/providers/codex"}, "internal/providers/codex": nil}, 1},
		{"product code to test support", map[string][]string{"internal/app": {m + "/internal/testutil/fakemodel"}, "internal/testutil/fakemodel": nil}, 1},
		{"MCP SDK outside the server", map[string][]string{"handlers": {sdkPrefix + "/mcp"}}, 1},
		{"unplaced package", map[string][]string{"internal/app": {m + "/internal/newthing"}, "internal/newthing": nil}, 1},
		{"allowed arrows", map[string][]string{
			"handlers":                    {m + "/catalogs", m + "/internal/workflow", m + "/internal/providers/freebuff"},
			"internal/workflow":           {m + "/internal/store", m + "/ent"},
			"internal/server":             {m + "/catalogs", sdkPrefix + "/mcp"},
			"internal/providers/adapters": {m + "/internal/providers/acp", m + "/internal/providers"},
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := forbiddenImports(&tree{module: m, imports: tc.imports})
			if len(got) != tc.want {
				t.Errorf("got %d findings, want %d: %q", len(got), tc.want, got)
			}
		})
	}
}

// forbiddenImports lists every import arrow the layers forbid, sorted.
func forbiddenImports(tr *tree) []string {
	var bad []string
	for _, dir := range tr.dirs() {
		from, ok := layerOf(dir)
		if !ok {
			continue // TestEveryPackageHasALayer reports it
		}
		for _, ip := range tr.imports[dir] {
			if strings.HasPrefix(ip, sdkPrefix) && !sdkImporters[dir] && from.name != "test support" {
				bad = append(bad, fmt.Sprintf("%s (%s) imports %s: only internal/server, internal/stdio and internal/cli speak the MCP SDK", dir, from.name, ip))
			}
			target, ok := tr.local(ip)
			if !ok {
				continue
			}
			to, ok := layerOf(target)
			if !ok {
				bad = append(bad, fmt.Sprintf("%s imports %s, which belongs to no layer", dir, target))
				continue
			}
			if !from.allows(to) {
				bad = append(bad, fmt.Sprintf("%s (%s) imports %s (%s): %s may import only %s", dir, from.name, target, to.name, from.name, allowedText(from)))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

func allowedText(l *layer) string {
	if len(l.mayImport) == 0 {
		return "itself"
	}
	return strings.Join(l.mayImport, ", ")
}

// TestProductBinaryHasNoTestCode: the interop-runtime binary depends on no
// test support, benchmark or generator package, transitively.
func TestProductBinaryHasNoTestCode(t *testing.T) {
	tr := loadTree(t)
	deps := tr.deps("cmd/interop-runtime")
	if len(deps) == 0 {
		t.Fatal("cmd/interop-runtime depends on no package of the module; the tree was not read")
	}
	for d := range deps {
		l, ok := layerOf(d)
		if ok && (l.name == "test support" || l.name == "generator") {
			t.Errorf("cmd/interop-runtime depends on %s (%s)", d, l.name)
		}
	}
}

// TestLayerTableIsConsistent: every layer named in a mayImport exists, and
// every directory entry names a package that exists.
func TestLayerTableIsConsistent(t *testing.T) {
	tr := loadTree(t)
	names := map[string]bool{"*": true}
	for _, l := range layers {
		names[l.name] = true
	}
	for _, l := range layers {
		for _, m := range l.mayImport {
			if !names[m] {
				t.Errorf("layer %q may import %q, which is no layer", l.name, m)
			}
		}
		for _, d := range l.dirs {
			base, below := strings.CutSuffix(d, "/...")
			if !tr.has(base, below) {
				t.Errorf("layer %q names %s, which is no package", l.name, d)
			}
		}
	}
}

// has reports whether dir is a package or, with below, has one under it.
func (tr *tree) has(dir string, below bool) bool {
	if _, ok := tr.imports[dir]; ok {
		return true
	}
	for d := range tr.imports {
		if below && strings.HasPrefix(d, dir+"/") {
			return true
		}
	}
	return false
}
