// Package claims implements cooperative resource claims: leases that a
// session takes on a file, a directory, an interface name or a whole
// workspace for one work item, so that other sessions can see the resource
// is being changed and stay away from it.
//
// Claims are coordination state, not locks on the filesystem: nothing stops
// a process from writing a claimed file. What the package guarantees is that
// two conflicting claims are never both active, even when several runtime
// processes share one store file: the conflict check and the insert run in
// one write transaction (BEGIN IMMEDIATE on SQLite, which serializes writers
// across processes), so exactly one of any number of racing acquisitions of
// the same resource wins and every other one is refused with a message that
// names the winner.
//
// # Rules
//
//   - A claim is active from acquisition until it is released or its lease
//     ends (ttlSeconds, 30..3600, default 900). Expired claims are not
//     rewritten; they simply stop counting (lazy expiry) and are reported
//     with status "expired".
//   - Resources overlap when they are equal or one is a path prefix of the
//     other at a "/" boundary (after cleaning: backslashes become slashes,
//     "." and ".." elements and trailing slashes are removed). A workspace
//     claim overlaps every claim; an interface claim overlaps only an
//     interface claim with the same name (and any workspace claim).
//   - Two overlapping active claims conflict unless both are shared_read or
//     both belong to the same session.
//   - Only the owning session may release a claim; a release without a
//     session releases any claim.
//
// docs/claims.md lists the rules, the inferred decisions and every error text.
package claims
