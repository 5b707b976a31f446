package cli

import (
	"regexp"
	"strings"
	"testing"
)

func TestVTScreenRendersCursorDrawnText(t *testing.T) {
	s := newVTScreen(48, 160)
	// The placeholder drawn in two pieces with a cursor jump, colours, an
	// alternate screen switch and a split UTF-8 sequence.
	s.write([]byte("\x1b[?1049h\x1b[2J\x1b[HConnecting…\r\n"))
	s.write([]byte("\x1b[48;3H\x1b[90mEnter a coding tas\x1b[48;21Hk or / for commands\x1b[0m"))
	s.write([]byte("\x1b[47;1Hworking · 3s · \xe2"))
	s.write([]byte("\x96\xa0 Esc"))
	got := normalizeScreen(s.text())
	for _, want := range []string{"Connecting…", "Enter a coding task or / for commands", "working · 3s · ■ Esc"} {
		if !strings.Contains(got, want) {
			t.Errorf("screen %q lacks %q", got, want)
		}
	}
	if classifyScreen(got, nil) != ScreenWorking {
		t.Errorf("classify = %q, want working", classifyScreen(got, nil))
	}
	s.write([]byte("\x1b[47;1H\x1b[2K"))
	if c := classifyScreen(normalizeScreen(s.text()), nil); c != ScreenReady {
		t.Errorf("after the status line is erased: %q, want ready", c)
	}
	s.write([]byte("\x1b[2J\x1b[HSession ended  ·  3 Freebucks left\r\nPress Enter to continue in a new session"))
	if c := classifyScreen(normalizeScreen(s.text()), nil); c != ScreenExpired {
		t.Errorf("expired screen: %q", c)
	}
	custom := regexp.MustCompile(`(?i)READY>`)
	s.write([]byte("\x1b[2J\x1b[HREADY>"))
	if c := classifyScreen(normalizeScreen(s.text()), custom); c != ScreenReady {
		t.Errorf("custom ready pattern: %q", c)
	}
	// Scrolling keeps the newest lines.
	s2 := newVTScreen(3, 20)
	s2.write([]byte("a\r\nb\r\nc\r\nd"))
	if got := s2.text(); got != "b\nc\nd" {
		t.Errorf("scrolled screen = %q", got)
	}
}

func TestClassifyScreens(t *testing.T) {
	for text, want := range map[string]string{
		"Not authenticated Press ENTER to login...":                                    ScreenLogin,
		"Freebuff is already running Only one freebuff instance is allowed at a time.": ScreenLock,
		"Start coding for free 1 Freebucks/hr z-ai/glm":                                ScreenPicker,
		"Enter a coding task": ScreenReady,
		"z-ai/glm-5.3-flash · 1h left Enter a coding task or / for commands": ScreenReady,
		"Connecting…": ScreenConnecting,
		"":            "",
		"Enter a coding task or / for commands working · 1s · ■ Esc":                ScreenWorking,
		"Session ended · 2 Freebucks left Press Enter to continue in a new session": ScreenExpired,
		"Command not found: \"/x\" Enter a coding task or / for commands":           ScreenReady,
	} {
		if got := classifyScreen(text, nil); got != want {
			t.Errorf("classifyScreen(%q) = %q, want %q", text, got, want)
		}
	}
}
