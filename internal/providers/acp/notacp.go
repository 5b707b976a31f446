package acp

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/agent-interop/runtime/internal/lazy"
	"github.com/agent-interop/runtime/internal/security"
)

// maxQuote bounds what an error quotes of the agent's output or command.
const maxQuote = 200

// NotACPError says the agent program printed a line that is not a JSON-RPC
// message on its stdout before it answered initialize: it is not running
// in its ACP mode (a banner, a usage text, an HTML page, a JSON log
// record). The handshake fails at once instead of waiting for its bound.
type NotACPError struct {
	// Output is the first such line, without terminal escapes and control
	// characters, with credential-shaped text redacted, at most 200
	// characters.
	Output string
	// Command is the program's base name and arguments, redacted and
	// bounded like Output.
	Command string
}

func newNotACPError(line []byte, argv []string) *NotACPError {
	cmd := ""
	if len(argv) > 0 {
		cmd = strings.Join(append([]string{filepath.Base(argv[0])}, argv[1:]...), " ")
	}
	return &NotACPError{Output: sanitize(string(line)), Command: sanitize(cmd)}
}

func (e *NotACPError) Error() string {
	return fmt.Sprintf("the program printed %s on its stdout before answering initialize, which is not an ACP (JSON-RPC) message; fix: %s",
		strconv.Quote(e.Output), e.Fix())
}

// Fix is what to do about it.
func (e *NotACPError) Fix() string {
	return fmt.Sprintf("is `%s` the agent's ACP mode? Point the entry's command at the program's ACP mode "+
		"(e.g. `gemini --acp`, `qwen --acp`, `opencode acp`) and run it by hand to see what it prints", e.Command)
}

// escapes are terminal control sequences: CSI (colours, cursor moves) and
// OSC (titles, links).
var escapes = lazy.Regexp{Expr: `\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])`}

// sanitize makes program output fit to quote in an error: valid UTF-8,
// no terminal escapes or control characters, credentials redacted, at most
// maxQuote characters.
func sanitize(s string) string {
	if len(s) > 16*maxQuote { // a huge line: only its start is quoted
		s = s[:16*maxQuote]
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = escapes.Get().ReplaceAllString(s, "")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, s)
	s = security.RedactString(strings.TrimSpace(s))
	if r := []rune(s); len(r) > maxQuote {
		s = string(r[:maxQuote]) + "…"
	}
	return s
}
