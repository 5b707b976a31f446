package workflow

import (
	"strings"
)

// VerifyCommand is one verification command: either Text (a command line,
// split quote-aware, never given to a shell) or Executable with Args.
type VerifyCommand struct {
	Text       *string
	Executable string
	Args       []string
	Cwd        *string // relative to the workspace, or absolute inside it
	Label      *string
}

// unsafeChars are refused anywhere in a string command (upstream
// /[;&|<>`$]/): they only mean something to a shell, and there is none.
const unsafeChars = ";&|<>`$"

// parsedCommand is a validated command.
type parsedCommand struct {
	exe   string
	args  []string
	cwd   string // as given; "" = the workspace
	label string
	line  string // for display and the evidence summary
}

func parseCommand(c VerifyCommand) (parsedCommand, error) {
	var p parsedCommand
	if c.Cwd != nil {
		p.cwd = strings.TrimSpace(*c.Cwd)
	}
	if c.Label != nil {
		p.label = strings.TrimSpace(*c.Label)
	}
	if c.Text != nil {
		text := strings.TrimSpace(*c.Text)
		if strings.ContainsAny(text, unsafeChars) {
			return p, invalid("Unsafe verification command: %s", text)
		}
		if strings.ContainsRune(text, 0) {
			return p, invalid("Unsafe verification command: %s", strings.ReplaceAll(text, "\x00", `\0`))
		}
		words, err := splitCommandLine(text)
		if err != nil {
			return p, err
		}
		if len(words) == 0 || words[0] == "" {
			return p, invalid("Verification commands must not be empty")
		}
		p.exe, p.args, p.line = words[0], words[1:], text
		return p, nil
	}
	p.exe = strings.TrimSpace(c.Executable)
	if p.exe == "" {
		return p, invalid("Verification commands must not be empty")
	}
	for _, a := range append([]string{p.exe}, c.Args...) {
		if strings.ContainsRune(a, 0) {
			return p, invalid("Unsafe verification command: argument contains a NUL byte")
		}
	}
	p.args = append([]string(nil), c.Args...)
	p.line = displayLine(p.exe, p.args)
	return p, nil
}

// splitCommandLine splits a command line into words: blanks separate words;
// '…' is literal; inside "…" a backslash escapes '"' and '\'; outside
// quotes a backslash escapes the next character. Nothing is expanded.
func splitCommandLine(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, invalid("Unterminated quote in verification command: %s", s)
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) && (s[j+1] == '"' || s[j+1] == '\\') {
					j++
				}
				cur.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, invalid("Unterminated quote in verification command: %s", s)
			}
			i = j
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// displayLine renders an executable and its arguments as one readable line,
// quoting words that would otherwise split differently.
func displayLine(exe string, args []string) string {
	words := append([]string{exe}, args...)
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\n\"'\\") {
			words[i] = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(w) + `"`
		}
	}
	return strings.Join(words, " ")
}
