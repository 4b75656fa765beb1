package cluster

import (
	"io"
	"net"
	"sync"
	"testing"
)

// front is a process's one address for the Go client, whose endpoints are
// fixed: it forwards each connection to the process's current life, whose
// own address changes with every start (so the history can tell lives
// apart), and refuses it while no life runs.
type front struct {
	ln net.Listener
	p  *Proc
	wg sync.WaitGroup
}

func newFront(t *testing.T, p *Proc) *front {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &front{ln: ln, p: p}
	f.wg.Add(1)
	go f.accept()
	t.Cleanup(func() {
		ln.Close()
		f.wg.Wait()
	})
	return f
}

// Addr is the front's host:port.
func (f *front) Addr() string { return f.ln.Addr().String() }

func (f *front) accept() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		_, addr := f.p.Life()
		up, err := net.Dial("tcp", addr)
		if addr == "" || err != nil {
			c.Close()
			continue
		}
		go pipe(c, up)
	}
}

// pipe copies both ways until either side closes, then closes both.
func pipe(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	a.Close()
	b.Close()
	<-done
}
