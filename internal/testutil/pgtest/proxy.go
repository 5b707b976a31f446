package pgtest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
)

// Proxy is a TCP relay between clients and a cluster that can break a
// connection at the worst moment: after the server executed a COMMIT but
// before its answer reaches the client, so the client cannot know whether
// the transaction committed. It speaks just enough of the PostgreSQL wire
// protocol (unencrypted: sslmode=disable) to find the COMMIT.
type Proxy struct {
	ln      net.Listener
	target  string
	armed   atomic.Bool  // the next COMMIT's answer is dropped
	dropped atomic.Int32 // connections broken after a COMMIT
	mu      sync.Mutex
	conns   []net.Conn
	wg      sync.WaitGroup
}

// NewProxy starts a proxy on a free 127.0.0.1 port in front of the
// cluster.
func (c *Cluster) NewProxy() (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("pgtest: proxy listen: %w", err)
	}
	p := &Proxy{ln: ln, target: fmt.Sprintf("127.0.0.1:%d", c.Port)}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Rewrite returns dsn (a URL of the proxied cluster) pointed at the proxy.
func (p *Proxy) Rewrite(dsn string) string {
	return strings.Replace(dsn, p.target, p.ln.Addr().String(), 1)
}

// DropNextCommit arms the proxy: the next COMMIT is delivered to the
// server, and once the server answers, the connection is closed instead.
func (p *Proxy) DropNextCommit() { p.armed.Store(true) }

// Dropped reports how many connections were broken after a COMMIT.
func (p *Proxy) Dropped() int { return int(p.dropped.Load()) }

// Close stops the proxy and closes every relayed connection.
func (p *Proxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, client, server)
		p.mu.Unlock()
		p.wg.Add(1)
		go p.relay(client, server)
	}
}

// relay forwards one connection. Client messages are parsed (a length-
// prefixed startup message, then type byte + length + body) so a COMMIT is
// recognised whatever the TCP segmentation.
func (p *Proxy) relay(client, server net.Conn) {
	defer p.wg.Done()
	defer client.Close()
	defer server.Close()
	commitSent := make(chan struct{}, 1)
	go func() { // server → client
		defer client.Close()
		buf := make([]byte, 32<<10)
		for {
			n, err := server.Read(buf)
			if n > 0 {
				select {
				case <-commitSent: // the server answered the armed COMMIT
					p.dropped.Add(1)
					_ = client.Close()
					_ = server.Close()
					return
				default:
				}
				if _, werr := client.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	var head [5]byte
	if _, err := io.ReadFull(client, head[:4]); err != nil { // startup: length only
		return
	}
	n := int(binary.BigEndian.Uint32(head[:4]))
	if n < 4 || n > 1<<20 {
		return
	}
	body := make([]byte, n-4)
	if _, err := io.ReadFull(client, body); err != nil {
		return
	}
	if _, err := server.Write(append(head[:4:4], body...)); err != nil {
		return
	}
	for {
		if _, err := io.ReadFull(client, head[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(head[1:]))
		if n < 4 || n > 1<<30 {
			return
		}
		body := make([]byte, n-4)
		if _, err := io.ReadFull(client, body); err != nil {
			return
		}
		isCommit := head[0] == 'Q' && bytes.HasPrefix(bytes.ToLower(bytes.TrimSpace(body)), []byte("commit"))
		if isCommit && p.armed.CompareAndSwap(true, false) {
			commitSent <- struct{}{}
		}
		if _, err := server.Write(append(head[:], body...)); err != nil {
			return
		}
	}
}
