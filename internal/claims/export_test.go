package claims

// Conflicts exposes the exact conflict rule to the external tests.
func Conflicts(req, held Claim) bool { return conflicts(req, held) }
