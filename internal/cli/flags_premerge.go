package cli

// This file gives the truth branch the flag helpers that main's cli.go
// defines (same names, signatures and behaviour), so migrate.go is written
// once against them. Delete this file when this branch meets main; main's
// command table then registers migrate in one line.

import (
	"bytes"
	"errors"
	"flag"

	"github.com/agent-interop/runtime/internal/store"
)

// newFlagSet is a command's flag set; parse it with parseFlags.
func newFlagSet(name string) *flag.FlagSet {
	return flag.NewFlagSet(name, flag.ContinueOnError)
}

// parseFlags parses args; when ok is false the command returns code:
// 0 after --help (printed on stdout), 2 after a bad flag (on stderr).
func parseFlags(fs *flag.FlagSet, args []string, stdio IO) (code int, ok bool) {
	var out bytes.Buffer
	fs.SetOutput(&out)
	err := fs.Parse(args)
	fs.SetOutput(stdio.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		stdio.Stdout.Write(out.Bytes())
		return 0, false
	case err != nil:
		stdio.Stderr.Write(out.Bytes())
		return 2, false
	}
	return 0, true
}

func isHelpFlag(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

// dbFlag adds --db, which overrides INTEROP_DB.
func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", "", "the store file (overrides "+store.EnvDB+")")
}

// withDB returns env with INTEROP_DB set to db (when given).
func withDB(env Env, db string) (Env, error) {
	if db == "" {
		return env, nil
	}
	return func(key string) (string, bool) {
		if key == store.EnvDB {
			return db, true
		}
		return env(key)
	}, nil
}
