package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/clockctx"
	"github.com/agent-interop/runtime/internal/store"
)

// CheckStore returns a StoreCheck for the store that lookup locates
// (INTEROP_DB, else ~/.agent-interop-runtime/interop.db). It opens the file
// with the store's integrity check (PRAGMA quick_check; a damaged file is
// moved aside and a recovery record written, exactly as serve would do on
// its slow path), reads the recovery record and closes it. A store that does
// not exist yet is reported as such and not created.
func CheckStore(lookup store.LookupEnv, clock quartz.Clock) StoreCheck {
	if clock == nil {
		clock = quartz.NewReal()
	}
	return func(ctx context.Context) StoreReport {
		t0 := clock.Now()
		rep := checkStore(ctx, lookup, clock)
		rep.ElapsedMS = millis(clock.Now().Sub(t0))
		return rep
	}
}

func checkStore(ctx context.Context, lookup store.LookupEnv, clock quartz.Clock) StoreReport {
	rep := StoreReport{SchemaVersion: store.SchemaVersion()}
	path, err := store.ResolvePath(lookup)
	if err != nil {
		rep.Error = err.Error()
		rep.Fix = "set " + store.EnvDB + "=/path/to/interop.db (or HOME)"
		return rep
	}
	if store.IsPostgres(path) {
		return checkTeamStore(ctx, clock, path, rep)
	}
	rep.Path = path
	switch fi, err := os.Stat(path); {
	case errors.Is(err, os.ErrNotExist):
		rep.Error = "no store file yet; `interop-runtime serve` creates it on first start"
		return rep
	case err != nil:
		rep.Error = fmt.Sprintf("cannot read the store file: %v", err)
		rep.Fix = "check the permissions of " + path + ", or set " + store.EnvDB + " to another file"
		return rep
	case fi.IsDir():
		rep.Exists = true
		rep.Error = path + " is a directory, not a store file"
		rep.Fix = "set " + store.EnvDB + " to a file path, or move " + path + " away"
		return rep
	case fi.Mode().IsRegular() && fi.Size() == 0:
		// What a serve that was never called leaves: opening it here
		// would create the store, and doctor only looks.
		rep.Exists = true
		rep.Error = "the store file is empty: `interop-runtime serve` created it and creates the store in it on its first tool call"
		return rep
	}
	rep.Exists = true
	rep.IntegrityChecked = true
	st, err := store.Open(ctx, path, store.WithIntegrityCheck(), store.WithClock(clock), store.WithoutCreate(), store.WithoutUpgrade())
	if err != nil {
		rep.Error = fmt.Sprintf("the store does not open: %v", err)
		switch {
		case errors.Is(err, store.ErrForeignStore):
			rep.Fix = "the file belongs to another application: set " + store.EnvDB + " to another path (the file is left untouched)"
		case errors.Is(err, store.ErrUpgradeNeeded):
			rep.Fix = "the store was written by an older release: doctor only looks, so it left it as it is; the next `interop-runtime serve` upgrades it (additive, every row kept)"
		case errors.Is(err, store.ErrSchemaMismatch):
			rep.Fix = "the file was written by another runtime version: run that version, or set " + store.EnvDB + " to a new path (the file is left untouched)"
		default:
			rep.Fix = "check the file's permissions and the free disk space, or set " + store.EnvDB + " to another path"
		}
		return rep
	}
	defer st.Close()
	rep.Opens = true
	rec, err := st.Recovery(ctx)
	if err != nil {
		rep.Error = fmt.Sprintf("the store opens but its recovery record cannot be read: %v", err)
		return rep
	}
	rep.Recovery = rec
	if rec != nil {
		rep.Fix = "the old file was kept as " + rec.PreservedFile + "; inspect it (sqlite3) before deleting it. get_runtime_status and get_work_graph report this recovery until it is acknowledged"
	}
	return rep
}

// teamStoreTimeout bounds doctor's connection to a team store.
const teamStoreTimeout = 10 * time.Second

// checkTeamStore connects to a team store (PostgreSQL) and checks its
// schema version, reporting why it does not answer. The URL is reported
// without its password.
func checkTeamStore(ctx context.Context, clock quartz.Clock, dsn string, rep StoreReport) StoreReport {
	rep.Path, rep.Dialect, rep.Exists = store.RedactDSN(dsn), "postgres", true
	cctx, cancel := clockctx.WithTimeout(ctx, clock, teamStoreTimeout, "doctor", "team store")
	defer cancel()
	st, err := store.Open(cctx, dsn, store.WithoutUpgrade(), store.WithClock(clock))
	if err != nil {
		rep.Error = fmt.Sprintf("the team store does not answer: %v", err)
		var lost *store.ConnLostError
		switch {
		case errors.Is(err, store.ErrForeignStore):
			rep.Fix = "the database (or schema) holds another application's tables: point " + store.EnvDB + " at an empty database or schema (it is left untouched)"
		case errors.Is(err, store.ErrUpgradeNeeded):
			rep.Fix = "the database was created by an older release: doctor only looks, so it left it as it is; the next `interop-runtime serve` upgrades it (additive, every row kept; the role must own the tables), after which older builds refuse it"
		case errors.Is(err, store.ErrSchemaMismatch):
			rep.Fix = "the database was created by another runtime version: run that version on every machine, or point " + store.EnvDB + " at another database (it is left untouched)"
		case errors.As(err, &lost):
			rep.Fix = "check that the server runs and this machine reaches it (host, port, TLS, password in PGPASSFILE or PGPASSWORD); docs/team.md"
		default:
			rep.Fix = "check the role's privileges and the URL in " + store.EnvDB + "; docs/team.md"
		}
		return rep
	}
	defer st.Close()
	rep.Opens = true
	rep.SchemaVersion = st.SchemaVersion()
	return rep
}
