package server

import (
	"net"
	"sync"
)

// Handoff hands one listener's connections to one server after another —
// a Starting gRPC server, then a Server's — on one port that answers from
// the moment it is bound. Each phase is a listener whose Close ends that
// phase only; Handoff's Close ends them all and closes the port.
type Handoff struct {
	ln    net.Listener
	conns chan net.Conn
	quit  chan struct{}
	done  chan struct{} // closed when ln's Accept failed
	err   error         // that failure; read after done
	pump  sync.Once
	once  sync.Once
}

// NewHandoff returns a hand-off of ln's connections. It starts nothing:
// the first Phase starts accepting.
func NewHandoff(ln net.Listener) *Handoff {
	return &Handoff{ln: ln, conns: make(chan net.Conn), quit: make(chan struct{}), done: make(chan struct{})}
}

func (h *Handoff) accept() {
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

// Phase returns a listener of the connections accepted from now until
// it is closed; serve one server on it.
func (h *Handoff) Phase() net.Listener {
	h.pump.Do(func() { go h.accept() })
	return &phase{h: h, closed: make(chan struct{})}
}

// Addr returns the port's address.
func (h *Handoff) Addr() net.Addr { return h.ln.Addr() }

// Close ends every phase and closes the port, after the servers on it
// stopped.
func (h *Handoff) Close() error {
	var err error
	h.once.Do(func() {
		h.pump.Do(func() { close(h.done) }) // never accepted: nothing to wait for
		close(h.quit)
		err = h.ln.Close()
		<-h.done
	})
	return err
}

type phase struct {
	h      *Handoff
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
