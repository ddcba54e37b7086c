package live

// Requests in flight on the demo servers: held for their service time,
// their leases given back when they are done, and abandoned, leases and
// all, when a crash fault kills their server.

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/route"
	"github.com/ratelim/ratelim/store"
	"github.com/ratelim/ratelim/topology"
)

// DecidedAtHeader carries the instant a demo server's limiter decided the
// request, in Unix microseconds (the instant the store was asked, the fail
// policy's decisions included): what a load run records as the request's
// instant. On a loaded machine a request can wait a second or more between
// leaving the client and reaching the limiter (a connection to dial, a
// goroutine to schedule), and a request sent before an outage began but
// decided after it is the fail policy's, not the limiter's: a simulator fed
// the send instants would decide it otherwise.
const DecidedAtHeader = "X-Ratelim-Decided-At"

// ReleasedAtHeader is a trailer of a demo server's answer: the instant, in
// Unix microseconds, its request's lease was given back (a concurrency
// limit's). A lease is held for the request's service time and then for
// whatever the server takes to return from it, longer on a loaded machine
// than asked; a simulator fed the asked times gives leases back sooner
// than the fleet did, and admits more. A load run reads the trailer and
// feeds the simulator the hold the fleet really had (Observation.Service).
// A trailer, since the lease is given back after the answer's head, flushed
// before its body, has gone.
const ReleasedAtHeader = "X-Ratelim-Released-At"

// headerKey is the context key of the answer's header, where stamped
// writes DecidedAtHeader and a lease's Release ReleasedAtHeader.
type headerKey struct{}

// stamped is lim writing, on each request's answer, the instant it was
// decided (DecidedAtHeader). Take runs on the request's goroutine before
// anything is written, so the header map is still the handler's to set.
type stamped struct{ store.Limiter }

func (s stamped) Take(ctx context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error) {
	if h, ok := ctx.Value(headerKey{}).(http.Header); ok {
		h.Set(DecidedAtHeader, strconv.FormatInt(int64(now), 10))
	}
	return s.Limiter.Take(ctx, key, now, cost)
}

// lifeKey is the context key of the life (a channel, closed when the
// server crashes) a request began in.
type lifeKey struct{}

// alive serves r on server i if it is up, recording in r's context the
// life it began in, for the demo API to abandon it and leasesOf not to
// give its lease back if the server crashes meanwhile. A dead server
// answers nothing: the connection is cut, as a killed process's is.
func (f *Fleet) alive(i int, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.lifeMu.Lock()
		life, down := f.lives[i], f.down[i]
		f.lifeMu.Unlock()
		if down {
			panic(http.ErrAbortHandler)
		}
		ctx := context.WithValue(r.Context(), lifeKey{}, life)
		ctx = context.WithValue(ctx, headerKey{}, w.Header())
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// crash kills servers (start) or brings them back: a killed server's
// requests in flight are abandoned, their leases never given back, and it
// serves nothing until it is back.
func (f *Fleet) crash(servers []int, start bool) error {
	f.lifeMu.Lock()
	defer f.lifeMu.Unlock()
	for _, s := range servers {
		if s < 0 || s >= len(f.lives) {
			return fmt.Errorf("crash: server %d is not one of the fleet's %d", s, len(f.lives))
		}
	}
	for _, s := range servers {
		switch {
		case start && !f.down[s]:
			close(f.lives[s])
			f.down[s] = true
		case !start && f.down[s]:
			f.lives[s] = make(chan struct{})
			f.down[s] = false
		}
	}
	return nil
}

// dead reports whether life has ended: its server crashed.
func dead(life chan struct{}) bool {
	select {
	case <-life:
		return true
	default:
		return false
	}
}

// leasesOf is lim with a Release that gives a lease back to the copy
// server i's request reached, unless the server crashed during the
// request; lim itself, with no Release, when a copy the server may reach
// cannot give leases back (the middleware then says so once).
func (f *Fleet) leasesOf(i int, lim store.Limiter) store.Limiter {
	for _, c := range f.copies {
		if _, ok := c.(store.Releaser); !ok {
			return lim
		}
	}
	return &leaseLimiter{Limiter: lim, f: f, server: i}
}

type leaseLimiter struct {
	store.Limiter
	f      *Fleet
	server int
}

// Release gives back a lease taken through this server. The context is the
// middleware's, with the request's values: a request whose server crashed
// meanwhile holds its lease until the TTL.
func (l *leaseLimiter) Release(ctx context.Context, key string, now, lease algorithms.Time, cost int64) error {
	if life, ok := ctx.Value(lifeKey{}).(chan struct{}); ok && dead(life) {
		l.f.abandoned.Add(cost)
		return nil
	}
	f := l.f
	target := l.server // a local topology: the server's own jar
	var at algorithms.Time
	if f.topo.Remote() {
		at = f.clock()
		target = f.route.Route(l.server, at)
		if target == topology.Unreachable {
			return route.ErrUnreachable
		}
	}
	if err := f.copies[target].(store.Releaser).Release(ctx, key, now, lease, cost); err != nil {
		return err
	}
	if h, ok := ctx.Value(headerKey{}).(http.Header); ok {
		// Set on the request's goroutine (the middleware gives leases
		// back before it returns), sent by net/http after the body.
		h.Set(http.TrailerPrefix+ReleasedAtHeader, strconv.FormatInt(int64(now), 10))
	}
	if f.topo.Remote() {
		return f.route.Wrote(ctx, target, key, at)
	}
	return nil
}

// demoAPI is the API the limiter protects: it holds each request for its
// ServiceHeader's time (none without one; at most MaxService) and says
// which server answered. A request held for a time is answered at once, its
// status and headers flushed, and its body written when the time is up: a
// client knows it was admitted however the request ends, as the simulator
// counts it admitted. A client that leaves ends the wait; a crash of the
// server abandons it (the connection is cut before the body ends).
func (f *Fleet) demoAPI(server int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.inFlight[server].Add(1)
		defer f.inFlight[server].Add(-1)
		now := f.running.Add(1)
		defer f.running.Add(-1)
		for p := f.peak.Load(); now > p && !f.peak.CompareAndSwap(p, now); p = f.peak.Load() {
		}
		if d := serviceOf(r); d > 0 {
			// The answer is written after the wait: the write deadline
			// the server set at the request's start must allow for it.
			rc := http.NewResponseController(w)
			rc.SetWriteDeadline(time.Now().Add(d + writeTimeout))
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusOK)
			rc.Flush()
			life, _ := r.Context().Value(lifeKey{}).(chan struct{})
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
			case <-r.Context().Done():
				return
			case <-life: // nil, and never ready, outside a fleet's server
				panic(http.ErrAbortHandler)
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "ok from server %d\n", server)
	})
}

// serviceOf is how long the demo API holds r: its ServiceHeader, a Go
// duration, at most MaxService; 0 without one, or with one that does not
// parse or is not positive.
func serviceOf(r *http.Request) time.Duration {
	v := r.Header.Get(ServiceHeader)
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0
	}
	return min(d, MaxService)
}

// PeakInFlight is the most requests the fleet's demo API served at once
// since it started, all servers and keys together: what a limit on
// requests in flight bounds, measured where the requests are held.
func (f *Fleet) PeakInFlight() int64 { return f.peak.Load() }

// Abandoned is how many lease units the fleet's servers never gave back
// because a crash fault killed them mid-request: held in the store until
// their TTL.
func (f *Fleet) Abandoned() int64 { return f.abandoned.Load() }
