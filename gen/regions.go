package gen

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/agent-interop/runtime/gen/spec"
)

// A region is a generated block inside a hand-written file: the lines
// between "<!-- interopgen:NAME -->" and "<!-- /interopgen:NAME -->". The
// rest of the file stays as written; generate rewrites the block and check
// fails when it differs from what the spec generates.

// regionFiles are the hand-written files with regions, and the regions each
// must hold. A file that does not exist is skipped (a small spec under
// test has no README).
var regionFiles = []struct {
	path    string
	regions []string
}{
	{"README.md", []string{"profiles", "env"}},
	{"CONTRIBUTING.md", []string{"test-env"}},
}

func startMarker(name string) string { return "<!-- interopgen:" + name + " -->" }
func endMarker(name string) string   { return "<!-- /interopgen:" + name + " -->" }

// spliceRegions adds to files every region file of fsys with its regions
// regenerated.
func spliceRegions(fsys fs.FS, c *Catalog, files Files) error {
	var errs spec.ErrorList
	for _, rf := range regionFiles {
		doc, err := fs.ReadFile(fsys, rf.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", rf.path, err)
		}
		for _, name := range rf.regions {
			content, err := regionContent(c, name)
			if err != nil {
				errs.Add(rf.path, 0, "region %s: %v", name, err)
				continue
			}
			spliced, err := Splice(doc, name, content)
			if err != nil {
				errs.Add(rf.path, 0, "%v", err)
				continue
			}
			doc = spliced
		}
		files[rf.path] = doc
	}
	return errs.Err()
}

// Splice replaces the body of region name in doc with content. The markers
// must each stand on a line of their own, once, start before end.
func Splice(doc []byte, name string, content []byte) ([]byte, error) {
	start, end := []byte(startMarker(name)+"\n"), []byte("\n"+endMarker(name))
	i := bytes.Index(doc, start)
	if i < 0 || (i > 0 && doc[i-1] != '\n') {
		return nil, fmt.Errorf("no %s line (region %s: put the start and end markers back)", startMarker(name), name)
	}
	if bytes.Count(doc, start) > 1 {
		return nil, fmt.Errorf("%s appears more than once", startMarker(name))
	}
	body := i + len(start)
	j := bytes.Index(doc[body-1:], end)
	if j < 0 {
		return nil, fmt.Errorf("region %s has no %s line after its start", name, endMarker(name))
	}
	j += body - 1
	var out bytes.Buffer
	out.Write(doc[:body])
	out.Write(content)
	out.Write(doc[j+1:])
	return out.Bytes(), nil
}

// regionContent is the generated body of one region, ending in a newline.
func regionContent(c *Catalog, name string) ([]byte, error) {
	switch name {
	case "profiles":
		return profilesTable(c), nil
	case "env", "test-env":
		if c.Env == nil {
			return nil, fmt.Errorf("the spec has no %s to generate it from", spec.EnvPath)
		}
		scope := "runtime"
		if name == "test-env" {
			scope = "test"
		}
		return envTable(c.Env, scope), nil
	}
	return nil, fmt.Errorf("unknown region %q", name)
}

const regionNote = "<!-- generated from %s by `go run ./cmd/interopgen generate`: edit the spec, not this table -->\n"

func profilesTable(c *Catalog) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, regionNote, "spec/profiles.yaml")
	b.WriteString("| profile | tools | what |\n|---|---|---|\n")
	for _, p := range c.Profiles {
		fmt.Fprintf(&b, "| `%s`%s | %d | %s |\n", p.Name, defaultMark(c, p.Name), len(p.Names), cell(profileSummary(p)))
	}
	return b.Bytes()
}

// profileSummary is a profile's description without its leading
// "<Name>: ", which the table's first column already says.
func profileSummary(p *Profile) string {
	d := p.Description
	if head, rest, ok := strings.Cut(d, ": "); ok && strings.EqualFold(head, p.Name) && rest != "" {
		d = strings.ToUpper(rest[:1]) + rest[1:]
	}
	return d
}

func envTable(vars []*spec.EnvVar, scope string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, regionNote, spec.EnvPath)
	b.WriteString("| variable | default | meaning |\n|---|---|---|\n")
	for _, v := range vars {
		if v.Scope != scope {
			continue
		}
		def := "unset"
		if v.Default != "" {
			def = v.Default
		}
		desc := v.Description
		if len(v.Aliases) > 0 {
			desc += " (also read as `" + strings.Join(v.Aliases, "`, `") + "`)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", v.Name, cell(def), cell(desc))
	}
	return b.Bytes()
}

// cell makes text safe in one Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(oneLine(s), "|", `\|`)
}
