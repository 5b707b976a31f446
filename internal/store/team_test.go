package store

import (
	"slices"
	"testing"
)

func TestWithoutCredentialsDropsTeamStoreCredentials(t *testing.T) {
	in := []string{"HOME=/home/u", "INTEROP_DB=postgres://app:s3cret@db/interop", "PGPASSWORD=s3cret", "PATH=/bin", "PGPASSFILE=/home/u/.pgpass"}
	want := []string{"HOME=/home/u", "PATH=/bin", "PGPASSFILE=/home/u/.pgpass"}
	if got := WithoutCredentials(in); !slices.Equal(got, want) {
		t.Fatalf("providerEnv = %v, want %v", got, want)
	}
	keep := []string{"INTEROP_DB=postgres://app@db/interop", "INTEROP_HOST=alpha"}
	if got := WithoutCredentials(keep); !slices.Equal(got, keep) {
		t.Fatalf("a URL without a password was dropped: %v", got)
	}
}
