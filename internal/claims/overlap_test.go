package claims

import "testing"

func TestNormalizeResource(t *testing.T) {
	tests := []struct {
		kind Kind
		in   string
		want string
	}{
		{KindFile, " src/auth/token.ts ", "src/auth/token.ts"},
		{KindDirectory, "src/auth/", "src/auth"},
		{KindDirectory, "./src//auth/.", "src/auth"},
		{KindFile, `src\auth\token.ts`, "src/auth/token.ts"},
		{KindFile, "a/b/c/../d", "a/b/d"},
		{KindDirectory, "/", "/"},
		{KindDirectory, "./", "."},
		{KindInterface, " AuthService.login/v2/ ", "AuthService.login/v2/"},
		{KindWorkspace, " /repo/ ", "/repo/"},
		{KindFile, "   ", ""},
	}
	for _, tt := range tests {
		if got := normalizeResource(tt.kind, tt.in); got != tt.want {
			t.Errorf("normalizeResource(%s, %q) = %q, want %q", tt.kind, tt.in, got, tt.want)
		}
	}
}

func TestOverlaps(t *testing.T) {
	tests := []struct {
		name   string
		aKind  Kind
		a      string
		bKind  Kind
		b      string
		expect bool
	}{
		{"equal files", KindFile, "src/a.go", KindFile, "src/a.go", true},
		{"file below directory", KindFile, "src/auth/token.ts", KindDirectory, "src/auth", true},
		{"directory above file", KindDirectory, "src/auth", KindFile, "src/auth/token.ts", true},
		{"nested directories", KindDirectory, "src", KindDirectory, "src/auth/deep", true},
		{"sibling prefix is not a boundary", KindDirectory, "src/auth", KindDirectory, "src/authz", false},
		{"file with same stem", KindDirectory, "src/auth", KindFile, "src/auth.go", false},
		{"disjoint", KindFile, "a/x.go", KindFile, "b/x.go", false},
		{"root holds absolute paths", KindDirectory, "/", KindFile, "/etc/hosts", true},
		{"root does not hold relative paths", KindDirectory, "/", KindFile, "etc/hosts", false},
		{"dot holds relative paths", KindDirectory, ".", KindFile, "src/a.go", true},
		{"dot does not hold absolute paths", KindDirectory, ".", KindFile, "/src/a.go", false},
		{"dot does not hold parent paths", KindDirectory, ".", KindFile, "../other/a.go", false},
		{"absolute and relative differ", KindFile, "/repo/src/a.go", KindFile, "src/a.go", false},
		{"workspace overlaps a file", KindWorkspace, "/repo", KindFile, "elsewhere/a.go", true},
		{"workspace overlaps an interface", KindInterface, "Auth", KindWorkspace, "/repo", true},
		{"workspace overlaps a workspace", KindWorkspace, "a", KindWorkspace, "b", true},
		{"same interface", KindInterface, "AuthService", KindInterface, "AuthService", true},
		{"different interfaces", KindInterface, "AuthService", KindInterface, "AuthService2", false},
		{"interface names are not paths", KindInterface, "api", KindInterface, "api/v2", false},
		{"interface never overlaps a file", KindInterface, "src/a.go", KindFile, "src/a.go", false},
		{"interface never overlaps a directory", KindDirectory, "src", KindInterface, "src/x", false},
		{"case matters", KindFile, "src/A.go", KindFile, "src/a.go", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := overlaps(tt.aKind, tt.a, tt.bKind, tt.b); got != tt.expect {
				t.Errorf("overlaps(%s %q, %s %q) = %v, want %v", tt.aKind, tt.a, tt.bKind, tt.b, got, tt.expect)
			}
			if got := overlaps(tt.bKind, tt.b, tt.aKind, tt.a); got != tt.expect {
				t.Errorf("overlaps is not symmetric for %s %q / %s %q", tt.aKind, tt.a, tt.bKind, tt.b)
			}
		})
	}
}
