package claims

// Conflicts exposes the exact conflict rule to the external tests.
func Conflicts(req, held Claim) bool { return conflicts(req, held) }

// Normalize exposes resource normalization to the external tests.
func Normalize(k Kind, resource string) string { return normalizeResource(k, resource) }
