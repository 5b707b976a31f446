// Command stdiogate passes stdio through to a program, holding the first
// line that contains $STDIOGATE_HOLD (see package stdiogate).
package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: stdiogate PROGRAM [ARGS...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	dieWithParent(cmd) // stay in the caller's process group: its group kill reaches the program
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "stdiogate:", err)
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "stdiogate:", err)
		os.Exit(2)
	}
	hold, held := os.Getenv("STDIOGATE_HOLD"), os.Getenv("STDIOGATE_HELD")
	go func() {
		r := bufio.NewReaderSize(os.Stdin, 1<<20)
		holding := false
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 && !holding {
				if hold != "" && strings.Contains(string(line), hold) {
					holding = true // this line and everything after it stay here
					if held != "" {
						_ = os.WriteFile(held, line, 0o600)
					}
				} else if _, werr := in.Write(line); werr != nil {
					return
				}
			}
			if err != nil {
				// The runtime is gone (or closed its end): so is the
				// program's input, held line or not.
				in.Close()
				return
			}
		}
	}()
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		os.Exit(ee.ExitCode())
	}
	if err != nil {
		os.Exit(1)
	}
}
