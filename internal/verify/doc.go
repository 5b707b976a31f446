// Package verify runs local verification commands the way verify_work_item
// and request_review need them: a command is parsed without a shell (a
// text command line is split quote-aware and refused when it holds shell
// metacharacters), run in a process group of its own with a scrubbed
// environment given by the caller, bounded in time (SIGTERM, then SIGKILL
// to the whole group) and in output, and the repository it ran in is
// described with read-only git queries.
//
// It records nothing: internal/workflow turns the results into evidence.
package verify
