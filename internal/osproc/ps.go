package osproc

import (
	"bufio"
	"bytes"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agent-interop/runtime/internal/lazy"
)

// PSArgs are the arguments of the `ps` run List parses: every process,
// unlimited width, pid, ppid and the command line with the environment
// appended (BSD `e`, which macOS and procps both understand).
var PSArgs = []string{"axeww", "-o", "pid=,ppid=,command="}

var envKey = lazy.Regexp{Expr: `^[A-Za-z_][A-Za-z0-9_]*=`}

// ParsePS parses the output of `ps axeww -o pid=,ppid=,command=`: one
// process a line, "PID PPID program args... KEY=value KEY=value". The
// environment starts at the first word after the program that looks like
// KEY=value; a later word that does not is the rest of a value containing
// a space. Lines that do not start with two numbers are skipped.
func ParsePS(out []byte) []Process {
	var procs []Process
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 {
			continue
		}
		pid, err1 := strconv.Atoi(f[0])
		ppid, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil || pid <= 0 {
			continue
		}
		words := f[2:]
		cmdEnd := len(words)
		for i := 1; i < len(words); i++ {
			if envKey.Get().MatchString(words[i]) {
				cmdEnd = i
				break
			}
		}
		p := Process{PID: pid, PPID: ppid, Name: filepath.Base(words[0]), Command: strings.Join(words[:cmdEnd], " ")}
		var last string
		for _, w := range words[cmdEnd:] {
			if envKey.Get().MatchString(w) {
				k, v, _ := strings.Cut(w, "=")
				if p.Env == nil {
					p.Env = map[string]string{}
				}
				p.Env[k], last = v, k
				continue
			}
			p.Env[last] += " " + w
		}
		procs = append(procs, p)
	}
	return procs
}

// LsofArgs are the arguments of the `lsof` run Listeners parses: numeric
// addresses and ports, TCP sockets in LISTEN, fields p (pid) and n (name).
var LsofArgs = []string{"-nP", "-iTCP", "-sTCP:LISTEN", "-Fpn"}

// ParseLsof parses `lsof -nP -iTCP -sTCP:LISTEN -Fpn`: a "p<pid>" line,
// then one "n<address>:<port>" line per socket ("127.0.0.1:4096",
// "[::1]:4096", "*:4096" for a wildcard bind, reported as 0.0.0.0 or ::).
func ParseLsof(out []byte) []Listener {
	var ls []Listener
	pid := 0
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		switch line[0] {
		case 'p':
			pid, _ = strconv.Atoi(line[1:])
		case 'n':
			if pid <= 0 {
				continue
			}
			name, _, _ := strings.Cut(line[1:], "->") // never for LISTEN, but be safe
			if ap, ok := parseLsofAddr(name); ok {
				ls = append(ls, Listener{PID: pid, Addr: ap})
			}
		}
	}
	return ls
}

func parseLsofAddr(s string) (netip.AddrPort, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return netip.AddrPort{}, false
	}
	host, portText := s[:i], s[i+1:]
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port == 0 {
		return netip.AddrPort{}, false
	}
	var addr netip.Addr
	switch {
	case host == "*":
		addr = netip.IPv4Unspecified()
	case strings.HasPrefix(host, "["):
		a, err := netip.ParseAddr(strings.Trim(host, "[]"))
		if err != nil {
			return netip.AddrPort{}, false
		}
		addr = a
	default:
		a, err := netip.ParseAddr(host)
		if err != nil {
			return netip.AddrPort{}, false
		}
		addr = a
	}
	return netip.AddrPortFrom(addr.WithZone(""), uint16(port)), true
}
