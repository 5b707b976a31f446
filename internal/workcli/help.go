package workcli

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// HelpWidth is the terminal width every line of the command line's help
// fits in (a word longer than a line stands alone on its line).
const HelpWidth = 100

// flagIndent is where a flag's help text starts (flag.PrintDefaults puts
// it after a tab, at column 8).
const flagIndent = "        "

// PrintFlags prints fs's flags as flag.PrintDefaults does, each flag's
// help wrapped to HelpWidth columns. Every command's help uses it.
func PrintFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		head := "  -" + f.Name
		if name != "" {
			head += " " + name
		}
		if def := f.DefValue; def != "" && def != "false" && def != "0" && def != "[]" {
			if fmt.Sprintf("%T", f.Value) == "*flag.stringValue" {
				def = fmt.Sprintf("%q", def)
			}
			usage += " (default " + def + ")"
		}
		fmt.Fprintln(w, head)
		for _, line := range Wrap(usage, HelpWidth-len(flagIndent)) {
			fmt.Fprintln(w, flagIndent+line)
		}
	})
}

// Wrap splits text into lines of at most width characters at spaces.
func Wrap(text string, width int) []string {
	var lines []string
	var line strings.Builder
	for _, word := range strings.Fields(text) {
		if line.Len() > 0 && len([]rune(line.String()))+1+len([]rune(word)) > width {
			lines = append(lines, line.String())
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(word)
	}
	if line.Len() > 0 {
		lines = append(lines, line.String())
	}
	return lines
}

// WrapHanging wraps text to width, the first line after prefix and the
// others indented by as many spaces.
func WrapHanging(prefix, text string, width int) string {
	pad := strings.Repeat(" ", len([]rune(prefix)))
	if strings.TrimSpace(text) == "" {
		return strings.TrimRight(prefix, " ") + "\n"
	}
	var b strings.Builder
	for i, line := range Wrap(text, width-len(pad)) {
		if i == 0 {
			b.WriteString(prefix)
		} else {
			b.WriteString(pad)
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
