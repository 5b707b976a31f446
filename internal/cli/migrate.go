package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/agent-interop/runtime/internal/importstate"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/workcli"
)

// migrateDetail is what migrate's help says beyond its line in the table.
const migrateDetail = `
Bring a 0.3.x runtime's state.json (work items, evidence, handoffs, reviews,
claims) and conversations.json (conversations, participants, messages and
their delivery receipts) into the store, keeping ids, sequences and
receipts, in one transaction. Running it again changes nothing. docs/import.md.
`

// migrate is `interop-runtime migrate <subcommand>`; import-state is the
// only one.
func migrate(ctx context.Context, args []string, env Env, stdio IO) int {
	switch {
	case len(args) > 0 && isHelpFlag(args[0]):
		migrateHelp(stdio.Stdout)
		return 0
	case len(args) == 0:
		migrateHelp(stdio.Stderr)
		return 2
	case args[0] == "import-state":
		return importState(ctx, args[1:], env, stdio)
	}
	fmt.Fprintf(stdio.Stderr, "interop-runtime migrate: unknown subcommand %q\n", args[0])
	migrateHelp(stdio.Stderr)
	return 2
}

// migrateHelp prints migrate's synopsis and line from the command table,
// then what import-state does.
func migrateHelp(w io.Writer) {
	commandHelp(w, "migrate", nil)
	fmt.Fprint(w, migrateDetail)
}

func importState(ctx context.Context, args []string, env Env, stdio IO) int {
	fs := newFlagSet("migrate import-state")
	fs.Usage = func() {
		migrateHelp(fs.Output())
		fmt.Fprintln(fs.Output(), "\nflags:")
		workcli.PrintFlags(fs.Output(), fs)
	}
	state := fs.String("state", "", "the 0.3.x state.json (default: INTEROP_STATE_FILE, else ~/.agent-interop-runtime/state.json; skipped when missing)")
	convs := fs.String("conversations", "", "the 0.3.x conversations.json (default: INTEROP_CONVERSATIONS_FILE, else ~/.agent-interop-runtime/conversations.json; skipped when missing)")
	dryRun := fs.Bool("dry-run", false, "report the counts and conflicts; write nothing")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	db := dbFlag(fs)
	if code, ok := parseFlags(fs, args, stdio); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stdio.Stderr, "interop-runtime migrate import-state: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	env, err := withDB(env, *db)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "interop-runtime migrate import-state: %v\n", err)
		return 2
	}
	location, err := store.ResolvePath(store.LookupEnv(env))
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "interop-runtime migrate import-state: %v\n", err)
		return 1
	}
	rep, err := importstate.Run(ctx, importstate.Config{
		StateFile: *state, ConversationsFile: *convs, Lookup: env, Store: location, DryRun: *dryRun,
	})
	if rep != nil {
		if *asJSON {
			b, _ := json.Marshal(rep)
			fmt.Fprintln(stdio.Stdout, string(b))
		} else {
			rep.Render(stdio.Stdout)
		}
	}
	switch {
	case errors.Is(err, importstate.ErrConflicts):
		return 1 // the report says which
	case err != nil:
		fmt.Fprintf(stdio.Stderr, "interop-runtime migrate import-state: %v\n", err)
		return 1
	case len(rep.Conflicts) > 0:
		return 1 // a dry run that a real run would refuse
	}
	return 0
}
