package argv

import (
	"encoding/json"
	"testing"
)

func TestIntegerExactness(t *testing.T) {
	rule := IntRule{Min: -5, Max: 1 << 53}
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"-0", 0, true}, {"1.0", 1, true}, {"1e2", 100, true}, {"1E+2", 100, true},
		{"12.50e1", 125, true}, {"100e-2", 1, true}, {"0e999999999999", 0, true}, {"-5", -5, true},
		{"9007199254740992", 1 << 53, true}, {"9007199254740993", 0, false}, {"-6", 0, false},
		{"1.5", 0, false}, {"1e-1", 0, false}, {"1e999999999999999999999", 0, false},
		{"-1e999999999999999999999", 0, false}, {"1e-999999999999999999", 0, false},
		{"123456789012345678901234567890", 0, false}, {"0.0000000000000000000000000001e28", 1, true},
	}
	for _, c := range cases {
		var d Decoder
		got, ok := d.Integer(json.Number(c.in), "n", rule)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("Integer(%s) = %d, %v; want %d, %v (%v)", c.in, got, ok, c.want, c.ok, d.errs)
		}
	}
}

func TestErrorsNameFieldAndRule(t *testing.T) {
	var d Decoder
	d.Object(map[string]any{"x": 1}, "", []string{"a"}, []string{"a"})
	d.String("", "a", StringRule{MinLength: 1, MaxLength: -1})
	d.String("abcdef", "b", StringRule{MaxLength: 3})
	d.String("z", "c", StringRule{MaxLength: -1, Enum: []string{"p", "q"}})
	d.Array([]any{1, 2}, "d", -1, 1)
	err := d.Err("t")
	want := `invalid arguments for t: a is required; x is not a known argument (allowed: a); a must not be empty; b must be at most 3 characters (got 6); c must be one of p, q (got "z"); d must have at most 1 items (got 2)`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

func TestParseRejectsTrailingData(t *testing.T) {
	for _, in := range []string{`{} x`, `{}{}`, ``, `{`} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) accepted", in)
		}
	}
}
