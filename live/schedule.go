// The schedule of a load run: loader.run sends each arrival at its instant
// on the wall clock and plays the scenario's faults at theirs (faultEdges,
// playFaults, applyFault), then hands what it observed to the simulator's
// Replay for the run's Result.

package live

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ratelim/ratelim/sim"
)

// run plays the scenario on the wall clock: the faults due during it on a
// goroutine of their own, every arrival at its instant, then the wait for
// the scenario's end and the faults due at it. It returns the first error
// of the arrivals' feed, then of the faults, then of the run's context
// (other than its cancellation); else the Result the simulator's Replay
// makes of what was observed.
func (l *loader) run(parent context.Context) (*LoadResult, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	l.start = time.Now()
	var wg sync.WaitGroup
	faultErr := make(chan error, 1)
	l.applied = slices.Clone(l.sc.Faults)
	during, atEnd := faultEdges(l.sc)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := l.playFaults(ctx, during); err != nil {
			faultErr <- err
			cancel()
		}
	}()
	feedErr := l.sendArrivals(ctx)
	// Wait out the scenario's end, so faults finish as scheduled.
	if rest := time.Until(l.start.Add(l.sc.Duration)); rest > 0 && ctx.Err() == nil {
		select {
		case <-time.After(rest):
		case <-ctx.Done():
		}
	}
	cancel()
	wg.Wait()
	// The edges due at the end, after the last answer (faultEdges says
	// why), unless the run was interrupted.
	if feedErr == nil && len(faultErr) == 0 && parent.Err() == nil {
		if err := l.applyEndFaults(atEnd); err != nil {
			faultErr <- err
		}
	}
	if feedErr != nil {
		return nil, feedErr
	}
	select {
	case err := <-faultErr:
		return nil, err
	default:
	}
	if err := ctx.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return nil, err
	}
	return l.result()
}

// sendArrivals sends each of the scenario's first tries at its instant,
// each on a goroutine of its own once a slot of sem is free, and waits for
// every answer (retries included). An arrival the feed reaches after the
// scenario's end is not sent (Audit.NotSent); one whose slot came more
// than 10 ms after its instant counts in Audit.Late. It returns the
// error of a feed that could not be read; ctx ending stops the arrivals
// without one.
func (l *loader) sendArrivals(ctx context.Context) error {
	var requests sync.WaitGroup
	lastProgress := time.Now()
	feedErr := sim.Arrivals(l.sc, func(a sim.Arrival) bool {
		if time.Since(l.start) >= l.sc.Duration {
			l.mu.Lock()
			l.audit.NotSent++
			l.mu.Unlock()
			return true
		}
		if wait := time.Until(l.start.Add(a.At)); wait > time.Millisecond {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return false
			}
		}
		if l.opts.Progress != nil && time.Since(lastProgress) > 100*time.Millisecond {
			lastProgress = time.Now()
			l.opts.Progress(a.At, l.sc.Duration)
		}
		select {
		case l.sem <- struct{}{}:
		case <-ctx.Done():
			return false
		}
		if time.Since(l.start.Add(a.At)) > 10*time.Millisecond {
			l.mu.Lock()
			l.audit.Late++
			l.mu.Unlock()
		}
		requests.Add(1)
		go func() {
			defer requests.Done()
			l.send(ctx, a, 0)
		}()
		return true
	})
	requests.Wait()
	return feedErr
}

// applyEndFaults applies the fault edges due at or after the scenario's
// end, in the order of their instants (a start before an end), and
// returns the first error, leaving the rest unapplied.
func (l *loader) applyEndFaults(atEnd []faultEdge) error {
	slices.SortStableFunc(atEnd, func(a, b faultEdge) int { return cmp.Compare(a.at, b.at) })
	for _, e := range atEnd {
		if err := l.applyFault(e); err != nil {
			return err
		}
	}
	return nil
}

// result is the run's Result, the simulator's Replay of the observations
// and the log, stamped live, with the audit's lateness and deciding
// figures.
func (l *loader) result() (*LoadResult, error) {
	r, err := sim.Replay(l.sc, l.obs, l.events)
	if err != nil {
		return nil, err
	}
	r.Live = true
	if r.WallClock != "" { // an algorithm that reads it: say where the run's 0 was
		r.WallClock = l.start.UTC().Format(time.RFC3339Nano)
	}
	l.audit.LateP50Ms, l.audit.LateP99Ms, l.audit.LateMaxMs = quantilesMs(l.lateness)
	l.audit.Stamped = int64(len(l.deciding))
	l.audit.DecideP50Ms, l.audit.DecideP99Ms, l.audit.DecideMaxMs = quantilesMs(l.deciding)
	return &LoadResult{Result: r, Audit: l.audit, Observations: l.obs, Faults: l.applied, Started: l.start}, nil
}

// faultEdge is a fault's start or end, due at an instant of the run.
type faultEdge struct {
	at    time.Duration
	i     int // in sc.Faults
	start bool
}

// faultEdges are sc's faults' starts and ends: those due before the
// scenario's end (in the order given; playFaults takes the earliest
// first), and those due at or after it, which are the run's end and wait
// for its last answer: a request sent before the end and decided after it
// is recorded at the end (seen.decidedAt), inside the fault, and so must
// be decided inside it.
func faultEdges(sc sim.Scenario) (during, atEnd []faultEdge) {
	for i, f := range sc.Faults {
		for _, e := range []faultEdge{{f.Start, i, true}, {f.End, i, false}} {
			if e.at < sc.Duration {
				during = append(during, e)
			} else {
				atEnd = append(atEnd, e)
			}
		}
	}
	return during, atEnd
}

// playFaults calls OnFault at each fault's start and end due before the
// scenario's end, on the wall clock.
func (l *loader) playFaults(ctx context.Context, edges []faultEdge) error {
	for len(edges) > 0 {
		next := 0
		for i, e := range edges {
			if e.at < edges[next].at {
				next = i
			}
		}
		e := edges[next]
		edges = append(edges[:next], edges[next+1:]...)
		select {
		case <-time.After(time.Until(l.start.Add(e.at))):
		case <-ctx.Done():
			return nil
		}
		if err := l.applyFault(e); err != nil {
			return err
		}
	}
	return nil
}

// applyFault calls OnFault for e and records when it took effect.
func (l *loader) applyFault(e faultEdge) error {
	f := l.sc.Faults[e.i]
	verb := "ends"
	if e.start {
		verb = "begins"
	}
	l.mu.Lock()
	l.events = append(l.events, sim.LogEntry{TS: time.Since(l.start).Seconds(), Text: fmt.Sprintf("%s %s", f.Kind, verb)})
	if f.Kind == sim.Crash {
		// Out of rotation from the crash, before the servers are
		// told: nothing new is sent to a server about to go down.
		for _, s := range f.Servers {
			if s >= 0 && s < len(l.down) {
				l.down[s] = e.start
			}
		}
	}
	l.mu.Unlock()
	if l.opts.OnFault != nil {
		if err := l.opts.OnFault(f, e.start); err != nil {
			return fmt.Errorf("live: %s %s: %w", f.Kind, verb, err)
		}
	}
	// In effect from now: the store is down (or back) once OnFault
	// has returned.
	at := time.Since(l.start)
	// An edge due at the scenario's end keeps its instant: the
	// fault lasted until the run's end, as scheduled.
	if e.at >= l.sc.Duration {
		return nil
	}
	// A fault ends after it began, if only by a microsecond.
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.start {
		l.applied[e.i].Start = at
		l.applied[e.i].End = max(l.applied[e.i].End, at+time.Microsecond)
	} else {
		l.applied[e.i].End = max(at, l.applied[e.i].Start+time.Microsecond)
	}
	return nil
}
