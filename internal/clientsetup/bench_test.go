package clientsetup

import (
	"bytes"
	"fmt"
	"testing"
)

// bigCodexConfig is a config.toml of at least size bytes shaped like a
// long-used one: many [projects."..."] tables with comments, other MCP
// servers, and our entry with the user's own settings in the middle.
func bigCodexConfig(size int) []byte {
	var b bytes.Buffer
	b.WriteString("model = \"gpt-5\"\n# a long-used config\n\n")
	for i := 0; b.Len() < size/2; i++ {
		fmt.Fprintf(&b, "# project %d\n[projects.\"/home/ann/src/project-%06d\"]\ntrust_level = \"trusted\"\n\n", i, i)
	}
	b.WriteString("[mcp_servers.agent_interop]\ncommand = \"/old/interop-runtime\"\nargs = [\"serve\"]\ntool_timeout_sec = 120\n\n[mcp_servers.agent_interop.env]\nINTEROP_DB = \"postgres://team@db.internal/interop\"\n\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "[mcp_servers.other_%06d]\ncommand = \"/usr/bin/other\"\nargs = [\"--n\", \"%d\"]\n\n", i, i)
	}
	return b.Bytes()
}

// bigJSONConfig is a client JSON file of at least size bytes: many other
// servers and a large unrelated history, our entry among them.
func bigJSONConfig(size int, container string) []byte {
	var b bytes.Buffer
	b.WriteString("{\n  \"history\": [\n")
	for i := 0; b.Len() < size/2; i++ {
		fmt.Fprintf(&b, "    {\"display\": \"prompt number %d with some text\", \"pastedContents\": {}},\n", i)
	}
	b.WriteString("    {}\n  ],\n  \"" + container + "\": {\n")
	b.WriteString("    \"agent-interop\": {\"type\": \"stdio\", \"command\": \"/old\", \"args\": [\"serve\"], \"env\": {\"INTEROP_DB\": \"/srv/team.db\"}, \"timeout\": 60000},\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "    \"other-%06d\": {\"type\": \"stdio\", \"command\": \"/usr/bin/other\", \"args\": [\"%d\"]},\n", i, i)
	}
	b.WriteString("    \"last\": {\"command\": \"x\"}\n  }\n}\n")
	return b.Bytes()
}

var benchSizes = []int{1 << 20, 4 << 20, 20 << 20}

// BenchmarkMergeCodex measures Merge on 1, 4 and 20 MB config.toml files:
// the time per byte must stay flat (linear), and 20 MB under 2 s.
func BenchmarkMergeCodex(b *testing.B) {
	for _, size := range benchSizes {
		doc := bigCodexConfig(size)
		t := Target{Client: Codex, File: "config.toml", Name: "agent_interop"}
		b.Run(fmt.Sprintf("%dMB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			start := cpuTime()
			for range b.N {
				if _, err := Merge(t, stdioEntry, doc); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuTime()-start).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// BenchmarkMergeJSON measures Merge on 1, 4 and 20 MB JSON files for each
// JSON client.
func BenchmarkMergeJSON(b *testing.B) {
	for _, c := range []Client{Claude, OpenCode, Cursor} {
		for _, size := range benchSizes {
			t, err := TargetFor(c, Paths{Home: "/home/ann"}, false)
			if err != nil {
				b.Fatal(err)
			}
			doc := bigJSONConfig(size, jsonContainer(c))
			b.Run(fmt.Sprintf("%s/%dMB", c, size>>20), func(b *testing.B) {
				b.SetBytes(int64(len(doc)))
				start := cpuTime()
				for range b.N {
					if _, err := Merge(t, stdioEntry, doc); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric((cpuTime()-start).Seconds()/float64(b.N), "cpu-s/op")
			})
		}
	}
	// OpenCode's JSONC with comments and trailing commas: validated by a
	// JSONC parse before and after the edit.
	t, err := TargetFor(OpenCode, Paths{Home: "/home/ann"}, false)
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range benchSizes {
		doc := bytes.Replace(bigJSONConfig(size, jsonContainer(OpenCode)), []byte("{\n"), []byte("{\n  // a long-used config\n"), 1)
		doc = bytes.Replace(doc, []byte("\"x\"}\n"), []byte("\"x\"},\n"), 1)
		b.Run(fmt.Sprintf("opencode-jsonc/%dMB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			start := cpuTime()
			for range b.N {
				if _, err := Merge(t, stdioEntry, doc); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuTime()-start).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}
