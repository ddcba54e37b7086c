// Package sim is ratelim's discrete-event simulator: clients send requests
// through a balancer to API servers, each server asks its view of the store
// for a decision, faults happen on a schedule, and a recorder writes down
// what every client experienced.
//
// Time is virtual, in microseconds from 0, and advances from one event to
// the next: nothing sleeps, and thirty simulated seconds take milliseconds.
// Events are ordered by (time, sequence number), and every random draw comes
// from one math/rand/v2 source seeded from the scenario, so the same
// scenario and seed give the same Result, byte for byte.
package sim

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

// Options tune a run without changing its scenario.
type Options struct {
	// MaxRequests refuses, before it starts, a run estimated to send more
	// requests, and stops one that sends more, retries counted; 0 means
	// DefaultMaxRequests.
	MaxRequests int64
	// MaxMemory refuses, before it starts, a run estimated to need more
	// bytes (MemoryEstimate); 0 means DefaultMaxMemory.
	MaxMemory int64
	// FitStep, when a run's memory estimate is over MaxMemory, lengthens
	// its step to the finest usual one that fits instead of refusing it
	// (the run's log says so): the timeline is coarser, every total the
	// same. A run whose step was asked for leaves it false and is refused.
	FitStep bool
	// StateOf, if set, chooses the keys whose state the Result's state
	// series keep, a sample per step and store copy; nil keeps every
	// key's, what the JSON and CSV show. A table shows none
	// (func(string) bool { return false }): a run on one copy of the
	// state then reads no state at its step ends. Findings are the same
	// whatever it chooses.
	StateOf func(key string) bool
	// Progress, if set, is called at the end of every step with the
	// virtual time reached and the scenario's duration; steps in which
	// nothing happens are closed together (quiet.go), and it is called
	// once at the end of them.
	Progress func(done, total time.Duration)
	// Observe, if set, is called with every request the run decides, in
	// time order: what a live run records, so the two can be compared.
	Observe func(Observation)
	// KeyPrefix is the prefix of every key this run writes to a Redis
	// store; empty means a random one. Each copy of the state (a server's
	// jar, a replica) gets its own prefix under it.
	KeyPrefix string
	// ClusterJitter, if set, replaces the run's random draws for a
	// cluster's failure detection and election (each draw from [0, n)
	// µs, in the order topology.Partition's plan asks: per cut-off shard,
	// the gossip's delay past node_timeout, then its replica's election
	// jitter): a comparison with a live cluster feeds it the instants it
	// observed. The run's random source is then not drawn from for them.
	ClusterJitter func(n int64) int64
}

// SetupError is a run refused before it started: a scenario the simulator
// cannot run, a request budget exceeded, a store that does not answer. The
// user can act on it; a command exits with its bad-input code.
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }

func (e *SetupError) Unwrap() error { return e.Err }

// Run simulates sc from 0 to its duration and returns the Result. A run
// whose store would not delete its keys afterwards still returns its
// Result, with a *CleanupError.
func Run(ctx context.Context, sc Scenario, opts Options) (r *Result, err error) {
	defer recoverInto(sc.Name, &err)
	p, err := NewPlayer(ctx, sc, opts)
	if err != nil {
		return nil, err
	}
	if err := p.Advance(ctx, sc.Duration); err != nil {
		p.Close()
		return nil, err
	}
	r = p.s.lastResult()
	return r, p.Close()
}

// InternalError is a panic inside a run, recovered so that it ends that
// run alone (RunAll's other runs go on) with a message and the stack to
// report, instead of taking the process down. It is a bug in ratelim,
// never in the scenario.
type InternalError struct {
	Scenario string
	Value    any
	Stack    []byte
}

func (e *InternalError) Error() string {
	return fmt.Sprintf("internal error while running %s: %v (a bug in ratelim: please report it with the scenario)", e.Scenario, e.Value)
}

// recoverInto turns a panic in the caller into an *InternalError in *err.
// It must be deferred directly.
func recoverInto(scenario string, err *error) {
	if v := recover(); v != nil {
		*err = &InternalError{Scenario: scenario, Value: v, Stack: debug.Stack()}
	}
}

// CleanupError is a run that finished but could not delete what it wrote
// to its store (a Redis that went away at the end): the Result is whole,
// and the keys under its prefix are left to their TTLs.
type CleanupError struct{ Err error }

func (e *CleanupError) Error() string {
	return fmt.Sprintf("the run finished, but its keys were not deleted from the store (they expire on their own): %v", e.Err)
}

func (e *CleanupError) Unwrap() error { return e.Err }

// Player runs a simulation piece by piece, for a caller that drives time
// itself (the TUI plays a run frame by frame): Advance moves the virtual
// clock, Snapshot says where things stand. Played to the end it gives the
// same Result as Run.
type Player struct {
	s *sim
}

// NewPlayer prepares sc to be played from 0. Close it when done: a run on
// a Redis store deletes its keys then.
func NewPlayer(ctx context.Context, sc Scenario, opts Options) (p *Player, err error) {
	defer recoverInto(sc.Name, &err)
	s, err := newSim(ctx, sc, opts)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil, err // stopped while it was being set up: not refused
	}
	if err != nil {
		return nil, &SetupError{err}
	}
	return &Player{s: s}, nil
}

// Advance processes every event up to virtual time until (capped at the
// scenario's duration). ctx bounds the store calls it makes, and
// cancelling it stops the run where it is.
func (p *Player) Advance(ctx context.Context, until time.Duration) (err error) {
	defer recoverInto(p.s.sc.Name, &err)
	return p.s.runUntil(ctx, min(int64(algorithms.At(until)), p.s.clock.duration))
}

// Now is the virtual time reached.
func (p *Player) Now() time.Duration { return algorithms.Time(p.s.clock.now).Duration() }

// Done reports whether the run has reached its end.
func (p *Player) Done() bool { return p.s.clock.now >= p.s.clock.duration }

// Result returns the Result of the run so far; played to the end, Run's.
// Its Findings are computed on the figures so far.
func (p *Player) Result() *Result { return p.s.finalResult() }

// Snapshot returns where the run stands; ctx bounds its reads of the
// stores' state.
func (p *Player) Snapshot(ctx context.Context) Snapshot { return p.s.snapshot(ctx) }

// Close releases the stores, deleting what the run wrote to a Redis store;
// a store that would not delete returns a *CleanupError. Closing twice is
// harmless.
func (p *Player) Close() error { return p.s.close() }

// RunAll runs every scenario, on up to workers goroutines at once (0 means
// one per core), and returns the results and errors in the scenarios'
// order. Runs share nothing, so each Result is what Run alone gives.
func RunAll(ctx context.Context, scs []Scenario, opts Options, workers int) ([]*Result, []error) {
	return RunEach(ctx, scs, opts, workers, nil, nil)
}

// RunEach is RunAll with each run's progress told apart: run i reports to
// progressOf(i), and finished(i) is called when it ends (either may be
// nil). opts.Progress itself is never called: progress of one run among
// many means nothing.
func RunEach(ctx context.Context, scs []Scenario, opts Options, workers int, progressOf func(i int) func(done, total time.Duration), finished func(i int)) ([]*Result, []error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	results := make([]*Result, len(scs))
	errs := make([]error, len(scs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, max(len(scs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				o := opts
				o.Progress = nil
				if progressOf != nil {
					o.Progress = progressOf(i)
				}
				results[i], errs[i] = Run(ctx, scs[i], o)
				if finished != nil {
					finished(i)
				}
			}
		}()
	}
	for i := range scs {
		next <- i
	}
	close(next)
	wg.Wait()
	return results, errs
}
