package verify

import (
	"fmt"
	"strings"
)

// Command is one verification command: either Text (a command line,
// split quote-aware, never given to a shell) or Executable with Args.
type Command struct {
	Text       *string
	Executable string
	Args       []string
	Cwd        *string // relative to the workspace, or absolute inside it
	Label      *string
}

// unsafeChars are refused anywhere in a string command (upstream
// /[;&|<>`$]/): they only mean something to a shell, and there is none.
const unsafeChars = ";&|<>`$"

// Parsed is a validated command.
type Parsed struct {
	Exe   string
	Args  []string
	Cwd   string // as given; "" = the workspace
	Label string
	Line  string // for display and the evidence summary
}

// CommandError is a command refused before anything ran; its message is
// the exact upstream text.
type CommandError struct{ Msg string }

func (e *CommandError) Error() string { return e.Msg }

func invalid(format string, args ...any) error {
	return &CommandError{Msg: fmt.Sprintf(format, args...)}
}

// Parse validates c: no shell metacharacters or NUL bytes, not empty. It
// runs nothing.
func Parse(c Command) (Parsed, error) {
	var p Parsed
	if c.Cwd != nil {
		p.Cwd = strings.TrimSpace(*c.Cwd)
	}
	if c.Label != nil {
		p.Label = strings.TrimSpace(*c.Label)
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
		p.Exe, p.Args, p.Line = words[0], words[1:], text
		return p, nil
	}
	p.Exe = strings.TrimSpace(c.Executable)
	if p.Exe == "" {
		return p, invalid("Verification commands must not be empty")
	}
	for _, a := range append([]string{p.Exe}, c.Args...) {
		if strings.ContainsRune(a, 0) {
			return p, invalid("Unsafe verification command: argument contains a NUL byte")
		}
	}
	p.Args = append([]string(nil), c.Args...)
	p.Line = displayLine(p.Exe, p.Args)
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
