package sim

import (
	"context"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/store"
)

// jar is a copy of the limiter state in the simulator's own memory: what
// the memory store is for a run, without what a store shared by server
// goroutines needs. The run knows its keys in advance and numbers them, so
// a key's state is a slice element, not a string hashed into a locked map;
// a decision is the algorithm's step on it, as store.Memory's is (a run
// never forgets a key, so a jar decides exactly as store.Memory built by
// store.NewMemory does).
//
// A sliding log is appended to where it lies. Load hands out, and Save
// keeps, logs whose capacity ends at their length, so a racy read or a
// replica never shares an array the jar appends to (store.Memory's rule).
type jar struct {
	step   stepper
	states []algorithms.State
	index  map[string]int // key name → its state, for the by-name calls
}

func newJar(alg algorithms.Algorithm, keys []keyRun) *jar {
	j := &jar{step: newStepper(alg), states: make([]algorithms.State, len(keys)), index: make(map[string]int, len(keys))}
	for i, k := range keys {
		j.index[k.name] = i
	}
	return j
}

// take decides a request on the run's key id. Unless whole, the decision
// may carry its verdict alone (Allowed, and Delay): what the simulator
// reads of a request that no one observes and that no client's
// Retry-After waits on.
func (j *jar) take(id int, now algorithms.Time, cost int64, whole bool) algorithms.Decision {
	if !whole && j.step.admit != nil {
		return algorithms.Decision{Allowed: j.step.admit.Admit(&j.states[id], now, cost)}
	}
	return j.step.whole(&j.states[id], now, cost)
}

// slot is key's index, added if the run did not know it.
func (j *jar) slot(key string) int {
	i, ok := j.index[key]
	if !ok {
		i = len(j.states)
		j.index[key] = i
		j.states = append(j.states, algorithms.State{})
	}
	return i
}

func (j *jar) Take(_ context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error) {
	return store.Decision{Decision: j.take(j.slot(key), now, cost, true)}, nil
}

func (j *jar) Load(_ context.Context, key string) (algorithms.State, error) {
	i, ok := j.index[key]
	if !ok {
		return algorithms.State{}, nil
	}
	return j.states[i].Capped(), nil
}

func (j *jar) Save(_ context.Context, key string, st algorithms.State, _ time.Duration) error {
	j.states[j.slot(key)] = st.Capped()
	return nil
}
