package sim

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/ratelim/ratelim/algorithms"
)

// Feed is traffic that comes from outside the simulator instead of from a
// pattern it generates: an access log replayed, say. One feed sends for a
// block of clients at once, each arrival naming its client, because a log
// interleaves its keys' requests and reading it once for each key would
// read it once per key.
//
// A Scenario holds a Feed as a way to read the arrivals (Open), not as
// the arrivals themselves, so that it can be run more than once (compare,
// --vs, a suggested limit tried) and each run reads it from the start;
// memory then grows with what the reader holds, never with the traffic.
type Feed struct {
	// Name says where the arrivals come from, for messages: a file name.
	Name string
	// FirstClient and Clients are the clients it sends for,
	// Scenario.Clients[FirstClient : FirstClient+Clients]; they need no
	// Traffic of their own.
	FirstClient, Clients int
	// Requests is how many arrivals it has, for the request budget and
	// the memory estimate.
	Requests int64
	// Open starts reading the arrivals from the first.
	Open func() (FeedReader, error)
}

// FeedReader reads a Feed's arrivals in time order.
type FeedReader interface {
	// Next returns the next arrival, its Client an index into
	// Scenario.Clients within the feed's block and its At at or after
	// the previous one's; io.EOF at the end.
	Next() (Arrival, error)
	Close() error
}

// feedRun is a feed being read by a run.
type feedRun struct {
	Feed
	r    FeedReader
	last int64 // µs, the previous arrival's time
	done bool
}

// feedArg marks an arrival event as a feed's: its arg is −1 − the feed's
// index (a stream's is its index, from 0).
func feedArg(i int) int32 { return int32(-1 - i) }

// next returns the feed's next arrival before stop, as an event to
// schedule; false at the end or at stop.
func (f *feedRun) next(index int, stop int64) (event, bool, error) {
	if f.done {
		return event{}, false, nil
	}
	a, err := f.r.Next()
	if errors.Is(err, io.EOF) {
		f.done = true
		return event{}, false, nil
	}
	if err != nil {
		f.done = true
		return event{}, false, fmt.Errorf("%s: %w", f.Name, err)
	}
	at := int64(algorithms.At(a.At))
	switch {
	case a.Client < f.FirstClient || a.Client >= f.FirstClient+f.Clients:
		f.done = true
		return event{}, false, fmt.Errorf("%s: an arrival for client %d, not one of the feed's %d from %d", f.Name, a.Client, f.Clients, f.FirstClient)
	case at < f.last:
		f.done = true
		return event{}, false, fmt.Errorf("%s: an arrival at %s, before the one before it at %s (a feed must be in time order)", f.Name, a.At, algorithms.Time(f.last).Duration())
	case at >= stop:
		f.done = true
		return event{}, false, nil
	}
	f.last = at
	return event{at: at, kind: evArrival, client: int32(a.Client), arg: feedArg(index), cost: max(a.Cost, 1)}, true, nil
}

// checkFeeds checks that sc's feeds send for clients that exist, one
// feed each, and returns which clients are fed.
func (sc *Scenario) checkFeeds() (map[int]bool, error) {
	if len(sc.Feeds) > math.MaxInt32 {
		return nil, fmt.Errorf("feeds: %d is too many", len(sc.Feeds))
	}
	fed := map[int]bool{}
	for i, f := range sc.Feeds {
		field := fmt.Sprintf("feeds[%d]", i)
		switch {
		case f.Open == nil:
			return nil, fmt.Errorf("%s: %s has no way to open it", field, f.Name)
		case f.Clients < 1 || f.FirstClient < 0 || f.FirstClient > len(sc.Clients)-f.Clients:
			return nil, fmt.Errorf("%s: %s sends for clients %d to %d, and there are %d", field, f.Name, f.FirstClient, f.FirstClient+f.Clients-1, len(sc.Clients))
		case f.Requests < 0:
			return nil, fmt.Errorf("%s: %s has a negative request count", field, f.Name)
		}
		for c := f.FirstClient; c < f.FirstClient+f.Clients; c++ {
			fed[c] = true
		}
	}
	return fed, nil
}

// openFeeds opens every feed of the run and schedules its first arrival.
func (s *sim) openFeeds() error {
	for i, f := range s.sc.Feeds {
		r, err := f.Open()
		if err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
		s.feeds = append(s.feeds, &feedRun{Feed: f, r: r})
		s.stores.closers = append(s.stores.closers, func() error {
			r.Close() // a reader's close error says nothing about the run
			return nil
		})
		if err := s.scheduleFeed(i); err != nil {
			return err
		}
	}
	return nil
}

// scheduleFeed schedules feed i's next arrival, source i's (sim.arrivals).
func (s *sim) scheduleFeed(i int) error {
	e, ok, err := s.feeds[i].next(i, s.clock.duration)
	if ok {
		s.seq++
		e.seq = s.seq
		s.arrivals.set(i, e)
	}
	return err
}
