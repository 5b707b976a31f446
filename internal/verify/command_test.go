package verify

import (
	"errors"
	"reflect"
	"testing"
)

func TestSplitCommandLine(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"go test ./...", []string{"go", "test", "./..."}},
		{`echo 'a b'  "c \"d\"" e\ f`, []string{"echo", "a b", `c "d"`, "e f"}},
		{`say "it's" ''`, []string{"say", "it's", ""}},
		{"  spaced\targs\n", []string{"spaced", "args"}},
		{`x "a\nb"`, []string{"x", `a\nb`}},
	}
	for _, tt := range tests {
		got, err := splitCommandLine(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("split(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestParseRefusesShellsAndEmptiness(t *testing.T) {
	str := func(s string) *string { return &s }
	tests := []struct {
		name string
		in   Command
		want string
	}{
		{"metacharacter", Command{Text: str("go test ./... && rm -rf /")}, "Unsafe verification command: go test ./... && rm -rf /"},
		{"NUL in text", Command{Text: str("go\x00test")}, `Unsafe verification command: go\0test`},
		{"blank text", Command{Text: str("   ")}, "Verification commands must not be empty"},
		{"blank executable", Command{Executable: " "}, "Verification commands must not be empty"},
		{"NUL in an argument", Command{Executable: "go", Args: []string{"te\x00st"}}, "Unsafe verification command: argument contains a NUL byte"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		var ce *CommandError
		if !errors.As(err, &ce) || ce.Msg != tt.want {
			t.Errorf("%s: Parse = %v, want the CommandError %q", tt.name, err, tt.want)
		}
	}
	p, err := Parse(Command{Executable: "go", Args: []string{"test", "a b"}, Label: str(" unit ")})
	if err != nil || p.Exe != "go" || p.Line != `go test "a b"` || p.Label != "unit" {
		t.Fatalf("Parse = %+v, %v", p, err)
	}
}
