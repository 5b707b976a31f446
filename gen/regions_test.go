package gen

import (
	"strings"
	"testing"
)

func TestSplice(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want, err string
	}{
		{name: "empty region", doc: "a\n<!-- interopgen:x -->\n<!-- /interopgen:x -->\nb\n", want: "a\n<!-- interopgen:x -->\nNEW\n<!-- /interopgen:x -->\nb\n"},
		{name: "stale body", doc: "<!-- interopgen:x -->\nold\nolder\n<!-- /interopgen:x -->\n", want: "<!-- interopgen:x -->\nNEW\n<!-- /interopgen:x -->\n"},
		{name: "other regions untouched", doc: "<!-- interopgen:y -->\nkeep\n<!-- /interopgen:y -->\n<!-- interopgen:x -->\n<!-- /interopgen:x -->\n", want: "<!-- interopgen:y -->\nkeep\n<!-- /interopgen:y -->\n<!-- interopgen:x -->\nNEW\n<!-- /interopgen:x -->\n"},
		{name: "no start", doc: "text\n", err: "no <!-- interopgen:x --> line"},
		{name: "start inside a line", doc: "see <!-- interopgen:x -->\n<!-- /interopgen:x -->\n", err: "no <!-- interopgen:x --> line"},
		{name: "no end", doc: "<!-- interopgen:x -->\nbody\n", err: "has no <!-- /interopgen:x --> line"},
		{name: "end before start", doc: "<!-- /interopgen:x -->\n<!-- interopgen:x -->\n", err: "has no <!-- /interopgen:x --> line"},
		{name: "two starts", doc: "<!-- interopgen:x -->\n<!-- /interopgen:x -->\n<!-- interopgen:x -->\n<!-- /interopgen:x -->\n", err: "more than once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Splice([]byte(tc.doc), "x", []byte("NEW\n"))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
