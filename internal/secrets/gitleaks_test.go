package secrets

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"reflect"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

//go:embed data/gitleaks.toml
var gitleaksTOML []byte

// TestGitleaksTableMatchesTheFile checks the generated rule table against
// data/gitleaks.toml: the file is the pinned release, the table was
// generated from it, and the table is exactly what toml.Unmarshal parses
// from it (nil and empty lists apart), so the redactor's rules are those
// it built when it parsed the file at first use.
func TestGitleaksTableMatchesTheFile(t *testing.T) {
	sum := sha256.Sum256(gitleaksTOML)
	if got := hex.EncodeToString(sum[:]); got != gitleaksSHA256 {
		t.Fatalf("data/gitleaks.toml: SHA-256 %s, want %s for %s", got, gitleaksSHA256, GitleaksVersion)
	}
	if gitleaksGeneratedSHA256 != gitleaksSHA256 {
		t.Fatalf("zz_generated.gitleaks.go is from %s, not the pinned file; run go run ./cmd/interopgen generate", gitleaksGeneratedSHA256)
	}
	var want gitleaksFile
	if err := toml.Unmarshal(gitleaksTOML, &want); err != nil {
		t.Fatal(err)
	}
	got := gitleaksParsed()
	if !reflect.DeepEqual(got, want) {
		t.Fatal("gitleaksParsed differs from the parsed data/gitleaks.toml; run go run ./cmd/interopgen generate")
	}
	if len(got.Rules) < 200 {
		t.Fatalf("%d rules, want the whole set", len(got.Rules))
	}
}
