package verify

import (
	"context"
	"sort"
	"strings"
	"time"
)

// GitFacts describes the repository a verification ran in. It is null in
// the result when the workspace is not inside a git work tree (or git is not
// installed).
type GitFacts struct {
	RepoRoot        string   `json:"repoRoot"`
	Commit          *string  `json:"commit"`
	Branch          *string  `json:"branch"`
	Worktree        string   `json:"worktree"`
	ChangedFiles    []string `json:"changedFiles"`
	Staged          []string `json:"staged"`
	Unstaged        []string `json:"unstaged"`
	Untracked       []string `json:"untracked"`
	StatusTruncated bool     `json:"statusTruncated,omitempty"`
}

// GitLimits bound the git queries (they are not the user's commands).
var GitLimits = Limits{Timeout: 20 * time.Second, KillGrace: 250 * time.Millisecond, OutputCap: 1 << 20}

// Git collects repository facts for dir with read-only git commands; nil
// when dir is not inside a git work tree (or git is not installed).
// GIT_OPTIONAL_LOCKS=0 keeps `git status` from writing the index.
func Git(ctx context.Context, dir string, env []string) *GitFacts {
	env = append(append([]string(nil), env...), "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	git := func(args ...string) (string, bool, bool) {
		r := Run(ctx, "git", args, dir, env, GitLimits)
		ok := r.Err == "" && r.ExitCode != nil && *r.ExitCode == 0
		return string(r.Stdout.buf), r.Stdout.truncated, ok
	}
	root, _, ok := git("rev-parse", "--show-toplevel")
	if !ok {
		return nil
	}
	f := &GitFacts{RepoRoot: strings.TrimSpace(root), Worktree: dir,
		Staged: []string{}, Unstaged: []string{}, Untracked: []string{}}
	if out, _, ok := git("rev-parse", "--verify", "-q", "HEAD"); ok {
		c := strings.TrimSpace(out)
		f.Commit = &c
	}
	if out, _, ok := git("symbolic-ref", "--short", "-q", "HEAD"); ok {
		b := strings.TrimSpace(out)
		f.Branch = &b
	}
	if out, truncated, ok := git("status", "--porcelain=v1", "-z", "--untracked-files=all"); ok {
		f.Staged, f.Unstaged, f.Untracked = parseStatus(out, truncated)
		f.StatusTruncated = truncated
	}
	f.ChangedFiles = union(f.Staged, f.Unstaged, f.Untracked)
	return f
}

// parseStatus reads `git status --porcelain=v1 -z`: "XY path\0", with a
// second "\0orig" after renames and copies. A truncated tail is dropped.
func parseStatus(out string, truncated bool) (staged, unstaged, untracked []string) {
	staged, unstaged, untracked = []string{}, []string{}, []string{}
	entries := strings.Split(out, "\x00")
	if truncated && len(entries) > 0 {
		entries = entries[:len(entries)-1]
	}
	for i := 0; i < len(entries); i++ {
		e := entries[i]
		if len(e) < 4 {
			continue
		}
		x, y, path := e[0], e[1], e[3:]
		if x == 'R' || x == 'C' {
			i++ // skip the original path
		}
		switch {
		case x == '?' && y == '?':
			untracked = append(untracked, path)
		case x == '!' && y == '!':
		default:
			if x != ' ' {
				staged = append(staged, path)
			}
			if y != ' ' {
				unstaged = append(unstaged, path)
			}
		}
	}
	return staged, unstaged, untracked
}

func union(lists ...[]string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, l := range lists {
		for _, s := range l {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	sort.Strings(out)
	return out
}
