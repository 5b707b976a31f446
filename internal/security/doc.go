// Package security holds the runtime's file-access and secret-handling rules:
// the approved project roots, identifier validation, contained reads of
// project files (realpath containment, no "..", credential files denied,
// regular text files only, bounded size), shallow directory listings,
// the credential deny-list (the union of shhgit's pinned file signatures,
// data/shhgit-config.yaml, and the project's own families) with content
// detection of key material ([KeyMaterial]),
// redaction of credential-shaped text and JSON, and scrubbing of
// credential-shaped environment variables.
//
// Error texts that 0.3.x clients match on are kept verbatim:
// "Invalid identifier", "Path escapes the Freebuff project",
// "Protected file access denied" and "Only regular files may be read".
//
// The package keeps no global mutable state; [Roots] is built from an
// injected environment lookup.
package security
