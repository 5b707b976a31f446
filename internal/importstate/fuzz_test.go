package importstate

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: any bytes as either file are imported or refused, never a
// panic, and every refusal has a position inside the file.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*", "*.json"))
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b, filepath.Base(p) == "conversations.json" || filepath.Ext(filepath.Base(p)) == ".json" && len(b)%2 == 0)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, asConversations bool) {
		in := &File{Path: "f.json", Data: data}
		var snap *Snapshot
		var err error
		if asConversations {
			snap, err = Parse(nil, in, importNow)
		} else {
			snap, err = Parse(in, nil, importNow)
		}
		if err == nil {
			if snap == nil {
				t.Fatal("no snapshot and no error")
			}
			return
		}
		var mal *MalformedError
		if !errors.As(err, &mal) {
			t.Fatalf("not a refusal: %v", err)
		}
		lines := 1
		for _, c := range data {
			if c == '\n' {
				lines++
			}
		}
		var each func(error)
		each = func(e error) {
			if j, ok := e.(interface{ Unwrap() []error }); ok {
				for _, x := range j.Unwrap() {
					each(x)
				}
				return
			}
			var ie *InputError
			if !errors.As(e, &ie) || ie.Line < 1 || ie.Line > lines || ie.Column < 1 {
				t.Fatalf("problem without a position in the file: %v", e)
			}
		}
		each(mal.Err)
	})
}
