package cli

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agent-interop/runtime/internal/lazy"
)

// vtScreen is a minimal terminal emulator: enough of VT100/xterm (cursor
// movement, erase, scrolling, line wrap, alternate screen) to know what a
// full-screen TUI shows. Markers are matched against the visible screen, so
// text a TUI draws in pieces with cursor jumps reads as it appears.
type vtScreen struct {
	rows, cols int
	grid       [][]rune
	r, c       int
	savedR     int
	savedC     int
	state      int
	params     []byte
	pending    []byte // an incomplete UTF-8 sequence
}

const (
	vtGround = iota
	vtEsc
	vtEscInter
	vtCSI
	vtString
	vtStringEsc
)

func newVTScreen(rows, cols int) *vtScreen {
	s := &vtScreen{rows: rows, cols: cols}
	s.clear()
	return s
}

func (s *vtScreen) clear() {
	s.grid = make([][]rune, s.rows)
	for i := range s.grid {
		s.grid[i] = blankRow(s.cols)
	}
}

func blankRow(n int) []rune {
	row := make([]rune, n)
	for i := range row {
		row[i] = ' '
	}
	return row
}

// write feeds terminal output.
func (s *vtScreen) write(p []byte) {
	if len(s.pending) > 0 {
		p = append(s.pending, p...)
		s.pending = nil
	}
	for i := 0; i < len(p); {
		b := p[i]
		if s.state != vtGround || b < 0x80 {
			s.byte(b)
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && size <= 1 {
			if !utf8.FullRune(p[i:]) {
				s.pending = append([]byte(nil), p[i:]...)
				return
			}
			size = 1
		}
		s.put(r)
		i += size
	}
}

func (s *vtScreen) byte(b byte) {
	switch s.state {
	case vtGround:
		switch {
		case b == 0x1b:
			s.state = vtEsc
		case b == '\r':
			s.c = 0
		case b == '\n' || b == 0x0b || b == 0x0c:
			s.lineFeed()
		case b == '\b':
			if s.c > 0 {
				s.c--
			}
		case b == '\t':
			s.c = min((s.c/8+1)*8, s.cols-1)
		case b < 0x20 || b == 0x7f:
		default:
			s.put(rune(b))
		}
	case vtEsc:
		s.state = vtGround
		switch {
		case b == '[':
			s.state, s.params = vtCSI, s.params[:0]
		case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
			s.state = vtString
		case b >= 0x20 && b <= 0x2f:
			s.state = vtEscInter
		case b == '7':
			s.savedR, s.savedC = s.r, s.c
		case b == '8':
			s.r, s.c = s.savedR, s.savedC
		case b == 'D':
			s.lineFeed()
		case b == 'E':
			s.c = 0
			s.lineFeed()
		case b == 'M':
			if s.r == 0 {
				s.scrollDown(1)
			} else {
				s.r--
			}
		case b == 'c':
			s.clear()
			s.r, s.c = 0, 0
		}
	case vtEscInter:
		if b >= 0x30 && b <= 0x7e {
			s.state = vtGround
		}
	case vtCSI:
		if b >= 0x40 && b <= 0x7e {
			s.state = vtGround
			s.csi(b)
			return
		}
		if len(s.params) < 64 {
			s.params = append(s.params, b)
		}
	case vtString:
		switch b {
		case 0x07:
			s.state = vtGround
		case 0x1b:
			s.state = vtStringEsc
		}
	case vtStringEsc:
		if b == '\\' {
			s.state = vtGround
		} else {
			s.state = vtString
		}
	}
}

func (s *vtScreen) put(r rune) {
	if s.c >= s.cols {
		s.c = 0
		s.lineFeed()
	}
	s.grid[s.r][s.c] = r
	s.c++
}

func (s *vtScreen) lineFeed() {
	if s.r == s.rows-1 {
		s.scrollUp(1)
		return
	}
	s.r++
}

func (s *vtScreen) scrollUp(n int) {
	for ; n > 0; n-- {
		copy(s.grid, s.grid[1:])
		s.grid[s.rows-1] = blankRow(s.cols)
	}
}

func (s *vtScreen) scrollDown(n int) {
	for ; n > 0; n-- {
		copy(s.grid[1:], s.grid[:s.rows-1])
		s.grid[0] = blankRow(s.cols)
	}
}

// csi applies one control sequence.
func (s *vtScreen) csi(final byte) {
	raw := string(s.params)
	private := strings.HasPrefix(raw, "?")
	raw = strings.TrimLeft(raw, "?<=>")
	var ps []int
	for _, f := range strings.Split(raw, ";") {
		n, _ := strconv.Atoi(f)
		ps = append(ps, n)
	}
	arg := func(i, def int) int {
		if i < len(ps) && ps[i] > 0 {
			return ps[i]
		}
		return def
	}
	clampR := func(v int) int { return max(0, min(v, s.rows-1)) }
	clampC := func(v int) int { return max(0, min(v, s.cols-1)) }
	switch final {
	case 'A':
		s.r = clampR(s.r - arg(0, 1))
	case 'B', 'e':
		s.r = clampR(s.r + arg(0, 1))
	case 'C', 'a':
		s.c = clampC(s.c + arg(0, 1))
	case 'D':
		s.c = clampC(s.c - arg(0, 1))
	case 'E':
		s.r, s.c = clampR(s.r+arg(0, 1)), 0
	case 'F':
		s.r, s.c = clampR(s.r-arg(0, 1)), 0
	case 'G', '`':
		s.c = clampC(arg(0, 1) - 1)
	case 'd':
		s.r = clampR(arg(0, 1) - 1)
	case 'H', 'f':
		s.r, s.c = clampR(arg(0, 1)-1), clampC(arg(1, 1)-1)
	case 'J':
		switch arg(0, 0) {
		case 0:
			s.eraseLine(s.r, s.c, s.cols)
			for r := s.r + 1; r < s.rows; r++ {
				s.grid[r] = blankRow(s.cols)
			}
		case 1:
			for r := 0; r < s.r; r++ {
				s.grid[r] = blankRow(s.cols)
			}
			s.eraseLine(s.r, 0, s.c+1)
		default:
			s.clear()
		}
	case 'K':
		switch arg(0, 0) {
		case 0:
			s.eraseLine(s.r, s.c, s.cols)
		case 1:
			s.eraseLine(s.r, 0, s.c+1)
		default:
			s.eraseLine(s.r, 0, s.cols)
		}
	case 'S':
		s.scrollUp(arg(0, 1))
	case 'T':
		s.scrollDown(arg(0, 1))
	case 'h', 'l':
		if private && (raw == "1049" || raw == "47" || raw == "1047") {
			s.clear() // switching screens shows a fresh grid
			if final == 'h' {
				s.r, s.c = 0, 0
			}
		}
	}
}

func (s *vtScreen) eraseLine(r, from, to int) {
	for c := max(0, from); c < min(to, s.cols); c++ {
		s.grid[r][c] = ' '
	}
}

// text returns the visible screen, rows trimmed and joined by newlines.
func (s *vtScreen) text() string {
	var b strings.Builder
	for i, row := range s.grid {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strings.TrimRight(string(row), " "))
	}
	return strings.TrimRight(b.String(), "\n")
}

var spaceRun = lazy.Regexp{Expr: `\s+`}

// normalizeScreen collapses whitespace.
func normalizeScreen(s string) string {
	return strings.TrimSpace(spaceRun.Get().ReplaceAllString(s, " "))
}

// CLI screens recognised on the visible screen.
const (
	ScreenConnecting = "connecting"
	ScreenPicker     = "picker"
	ScreenReady      = "ready"
	ScreenWorking    = "working"
	ScreenLogin      = "login"
	ScreenLock       = "lock"
	ScreenExpired    = "expired"
)

// screenMarkers in priority order: the first whose marker is visible wins
// (a running turn outranks the input placeholder drawn beside it).
type screenMarker struct {
	screen string
	re     *regexp.Regexp
}

var screenMarkers = lazy.Value[[]screenMarker]{New: func() []screenMarker {
	return []screenMarker{
		{ScreenLogin, regexp.MustCompile(`(?i)Press ENTER to login|Not authenticated`)},
		{ScreenLock, regexp.MustCompile(`(?i)Freebuff is already running|Only one freebuff instance is allowed at a time`)},
		{ScreenExpired, regexp.MustCompile(`(?i)Session ended|Press Enter to continue in a new session`)},
		{ScreenWorking, regexp.MustCompile(`(?i)\bworking ·`)},
		{ScreenPicker, regexp.MustCompile(`(?i)Start coding for free`)},
		{ScreenReady, regexp.MustCompile(`(?i)Enter a coding task`)},
		{ScreenConnecting, regexp.MustCompile(`(?i)\bConnecting\b`)},
	}
}}

// classifyScreen returns the screen shown by the (normalized) visible text;
// ready, when set, replaces the default ready marker.
func classifyScreen(text string, ready *regexp.Regexp) string {
	for _, m := range screenMarkers.Get() {
		re := m.re
		if m.screen == ScreenReady && ready != nil {
			re = ready
		}
		if re.MatchString(text) {
			return m.screen
		}
	}
	return ""
}
