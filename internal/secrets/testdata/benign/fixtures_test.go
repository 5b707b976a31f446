package codec

import "testing"

// Base64 fixtures from RFC 4648 and a PNG header.
var fixtures = map[string]string{
	"":       "",
	"f":      "Zg==",
	"foobar": "Zm9vYmFy",
	"png":    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
}

func TestDecode(t *testing.T) {
	for want, in := range fixtures {
		if got := decode(in); got != want {
			t.Errorf("decode(%q) = %q", in, got)
		}
	}
}
