package main

import (
	"net"
	"sync"
)

// handoff hands one listener's connections to one server after another:
// firn serve's starting gRPC server, then the service's, on one port
// that answers from the moment it is bound. Each phase is a listener
// whose Close ends that phase only; close ends them all and the port.
type handoff struct {
	ln    net.Listener
	conns chan net.Conn
	quit  chan struct{}
	done  chan struct{} // closed when ln's Accept failed
	err   error         // that failure; read after done
	once  sync.Once
}

func newHandoff(ln net.Listener) *handoff {
	h := &handoff{ln: ln, conns: make(chan net.Conn), quit: make(chan struct{}), done: make(chan struct{})}
	go h.pump()
	return h
}

func (h *handoff) pump() {
	defer close(h.done)
	for {
		c, err := h.ln.Accept()
		if err != nil {
			h.err = err
			return
		}
		select {
		case h.conns <- c:
		case <-h.quit:
			_ = c.Close()
			return
		}
	}
}

// phase returns a listener of the connections accepted from now until
// it is closed.
func (h *handoff) phase() net.Listener { return &phase{h: h, closed: make(chan struct{})} }

// close ends every phase and closes the port.
func (h *handoff) close() error {
	var err error
	h.once.Do(func() {
		close(h.quit)
		err = h.ln.Close()
		<-h.done
	})
	return err
}

type phase struct {
	h      *handoff
	closed chan struct{}
	once   sync.Once
}

func (p *phase) Accept() (net.Conn, error) {
	select {
	case c := <-p.h.conns:
		return c, nil
	case <-p.closed:
		return nil, net.ErrClosed
	case <-p.h.quit:
		return nil, net.ErrClosed
	case <-p.h.done:
		return nil, p.h.err
	}
}

func (p *phase) Close() error {
	p.once.Do(func() { close(p.closed) })
	return nil
}

func (p *phase) Addr() net.Addr { return p.h.ln.Addr() }
