// Command fakedesktop runs the simulated Freebuff Desktop orchestrator as its
// own process, as the real app runs orchestrator.js: it listens on
// 127.0.0.1:$PORT (0 for an ephemeral port), takes its launch id from
// FREEBUFF_LAUNCH_ID or else from a one-line stdin bootstrap
// {"launchId":"…"} (while that line has not arrived, every call is refused),
// and prints "listening on http://127.0.0.1:<port>" to stderr.
//
// Usage: fakedesktop [-project DIR]... [-thread TITLE]...
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/agent-interop/runtime/internal/testutil/freebuffsim"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var projects, threads list
	flag.Var(&projects, "project", "project path (repeatable)")
	flag.Var(&threads, "thread", "thread title in the first project (repeatable)")
	flag.Parse()

	port, _ := strconv.Atoi(os.Getenv("PORT"))
	launch := strings.TrimSpace(os.Getenv("FREEBUFF_LAUNCH_ID"))
	bootstrap := launch == ""
	opts := freebuffsim.Options{Port: port, LaunchID: launch}
	if bootstrap {
		// Unknown until the bootstrap line arrives: nothing can match it.
		opts.LaunchID = "pending-bootstrap-" + strconv.Itoa(os.Getpid())
	}
	d, err := freebuffsim.NewDesktop(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, p := range projects {
		d.AddProject(p)
	}
	for _, t := range threads {
		if len(projects) > 0 {
			d.AddThread(projects[0], t)
		}
	}
	if bootstrap {
		go func() {
			line, err := bufio.NewReader(os.Stdin).ReadString('\n')
			if err != nil {
				return
			}
			var b struct {
				LaunchID string `json:"launchId"`
			}
			if json.Unmarshal([]byte(line), &b) == nil && b.LaunchID != "" {
				d.SetLaunchID(b.LaunchID)
			}
		}()
	}
	fmt.Fprintf(os.Stderr, "listening on %s\n", d.URL())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	d.Close()
}
