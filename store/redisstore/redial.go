package redisstore

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// redialer dials the Redis servers a FailFast store talks to, so that the
// first request after a server comes back reaches it: recovery within the
// round trip, not within a second.
//
// go-redis v9.23.0's connection pool would otherwise hold a returned
// server off for up to a second. internal/pool/pool.go, ConnPool.dialConn:
// every failed dial adds one to dialErrorsNum, which no successful dial
// resets; once it reaches PoolSize (20 on 2 cores) the pool stops dialing
// and every Get fails at once with the last dial error, and one goroutine
// (ConnPool.tryDial) probes the server, sleeping time.Sleep(time.Second)
// after each failed probe; only a successful probe sets dialErrorsNum back
// to 0. The pool's options cannot turn this off, and a custom Dialer that
// returns its error trips it the same way.
//
// So the redialer never tells the pool a dial failed: it hands back a
// [deadConn] that fails its first read or write with the dial's error.
// The pool then counts a dial that worked; its handshake (baseClient's
// initConn) fails on the dead conn, which it removes, and the caller gets
// the dial's error, with no command sent: the request failed exactly as a
// failed dial fails it, and the pool is never tripped.
//
// What the pool's breaker was for, an outage not costing a dial per
// request (a host that drops SYNs holds each dial for DialTimeout), the
// redialer keeps per address: while the last dial to an address failed,
// one dial at a time is tried and every other request fails at once with
// the last error. The first request after the server returns finds no
// dial in flight (a refused dial takes microseconds), dials, and gets
// through.
type redialer struct {
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// addrs holds one *dialState per address dialed: the server of a
	// single-node store, the nodes of a cluster (a bounded set: the
	// addresses the cluster announces).
	addrs sync.Map
}

// dialState is what the redialer knows of one address.
type dialState struct {
	failing atomic.Bool // the last dial failed
	probing atomic.Bool // a dial is in flight while failing
	lastErr atomic.Pointer[error]
}

func newRedialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) *redialer {
	return &redialer{dial: dial}
}

// DialContext is the dialer go-redis's pools call (Options.Dialer,
// ClusterOptions.Dialer). It returns no error but the caller's own end:
// a failed dial is a [deadConn] (see [redialer]).
func (d *redialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	v, ok := d.addrs.Load(addr)
	if !ok {
		v, _ = d.addrs.LoadOrStore(addr, new(dialState))
	}
	s := v.(*dialState)
	if s.failing.Load() {
		if !s.probing.CompareAndSwap(false, true) {
			// Another request is finding out whether the server is back.
			return &deadConn{err: *s.lastErr.Load(), addr: addr}, nil
		}
		defer s.probing.Store(false)
	}
	c, err := d.dial(ctx, network, addr)
	if err != nil {
		s.lastErr.Store(&err)
		s.failing.Store(true)
		return &deadConn{err: err, addr: addr}, nil
	}
	s.failing.Store(false)
	return c, nil
}

// deadConn stands for a dial that failed: every read and write fails with
// the dial's error (a *net.OpError whose Op is "dial", which go-redis's
// shouldRetry, error.go, knows as one that sent nothing).
type deadConn struct {
	err  error
	addr string
}

func (c *deadConn) Read([]byte) (int, error)         { return 0, c.err }
func (c *deadConn) Write([]byte) (int, error)        { return 0, c.err }
func (c *deadConn) Close() error                     { return nil }
func (c *deadConn) LocalAddr() net.Addr              { return deadAddr(c.addr) }
func (c *deadConn) RemoteAddr() net.Addr             { return deadAddr(c.addr) }
func (c *deadConn) SetDeadline(time.Time) error      { return nil }
func (c *deadConn) SetReadDeadline(time.Time) error  { return nil }
func (c *deadConn) SetWriteDeadline(time.Time) error { return nil }

// deadAddr names the address a deadConn failed to reach, for go-redis's
// logs and metrics.
type deadAddr string

func (a deadAddr) Network() string { return "tcp" }
func (a deadAddr) String() string  { return string(a) }
