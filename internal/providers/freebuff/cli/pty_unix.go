//go:build unix

package cli

// explainPTY returns a PTY failure as it is: Unix has pseudo-terminals.
func explainPTY(err error) error { return err }
