package sim

import (
	"context"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/sat"
	"github.com/ratelim/ratelim/store"
)

// jar is a copy of the limiter state in the simulator's own memory: what
// the memory store is for a run, without what a store shared by server
// goroutines needs. The run knows its keys in advance and numbers them
// (keyIndex, one for all of a run's jars), so a key's state is found by
// its number, not by a string hashed into a locked map; a decision is the
// algorithm's step on it, as store.Memory's is (a run never forgets a
// key, so a jar decides exactly as store.Memory built by store.NewMemory
// does).
//
// A jar is dense, a state per key of the run in key order, where that is
// small (denseJarPairs), and then sampled whole at every step's end as a
// store's copies are; otherwise sparse, a state only for the keys a
// request reached, found through slots, and only those sampled: on 1,000
// servers with 10,000 keys, each key on one server, the jars hold and the
// recorder reads 10,000 states, not 10⁷. A key the jar never reached is in
// the zero state, as a fresh store's is.
//
// A sliding log is appended to where it lies. Load hands out, and Save
// keeps, logs whose capacity ends at their length, so a racy read or a
// replica never shares an array the jar appends to (store.Memory's rule).
type jar struct {
	step stepper
	keys *keyIndex
	// states are the keys' states: by key number when dense (slots nil),
	// else in the order the jar first reached them.
	states []algorithms.State
	// slots is a sparse jar's key number → its index in states.
	slots map[int32]int32
	// fresh are the keys a sparse jar reached since the recorder last
	// took them (reachedSince): the recorder samples only what was
	// reached.
	fresh []int32
}

// denseJarPairs is the most (key, copy) pairs a run's jars hold densely
// when it has more than one copy: 65,536 states of 72 bytes, 4.7 MB, read
// whole at each step's end as before. A run of one copy is always dense:
// its keys are its pairs. A variable only so that tests run small
// scenarios on sparse jars (set it to 0, and back, outside t.Parallel).
var denseJarPairs = 1 << 16

// onJars reports whether a run on the named store keeps its state in the
// simulator's own jars: the memory store, the default.
func onJars(store string) bool { return store == "" || store == "memory" }

// jarsDense reports whether a run's jars hold keys × copies states densely
// (setupStores), as the memory estimate counts them.
func jarsDense(keys, copies int64) bool {
	return copies == 1 || sat.Mul(keys, copies) <= int64(denseJarPairs)
}

// keyIndex numbers a run's keys, by name, for the calls that name a key
// (a racy write, a replica's, a heal's copy): one map for all the run's
// jars, not one each (10⁷ entries on 1,000 servers with 10,000 keys).
type keyIndex struct {
	ids map[string]int
}

func newKeyIndex(keys []keyRun) *keyIndex {
	x := &keyIndex{ids: make(map[string]int, len(keys))}
	for i, k := range keys {
		x.ids[k.name] = i
	}
	return x
}

// id is key's number, added if the run did not know it.
func (x *keyIndex) id(key string) int {
	i, ok := x.ids[key]
	if !ok {
		i = len(x.ids)
		x.ids[key] = i
	}
	return i
}

// newJar is a jar of alg's states for the run's keys, dense or not.
func newJar(alg algorithms.Algorithm, keys *keyIndex, dense bool) *jar {
	j := &jar{step: newStepper(alg), keys: keys}
	if dense {
		j.states = make([]algorithms.State, len(keys.ids))
	} else {
		j.slots = map[int32]int32{}
	}
	return j
}

// state is where the run's key id keeps its state in this jar, made
// (the zero state) if the jar never reached it.
func (j *jar) state(id int) *algorithms.State {
	if j.slots == nil && id < len(j.states) {
		return &j.states[id]
	}
	return j.reach(id)
}

// reach is state's way for a key a dense jar did not know when it was
// made, or any key of a sparse jar. It is kept out of line so that state,
// a dense jar's index alone, inlines where a request is decided: inlined
// in it, reach made state too big to inline, and its call cost a
// simulated request 21 instructions.
//
//go:noinline
func (j *jar) reach(id int) *algorithms.State {
	if j.slots == nil {
		j.states = append(j.states, make([]algorithms.State, id+1-len(j.states))...)
		return &j.states[id]
	}
	i, ok := j.slots[int32(id)]
	if !ok {
		i = int32(len(j.states))
		j.slots[int32(id)] = i
		j.states = append(j.states, algorithms.State{})
		j.fresh = append(j.fresh, int32(id))
	}
	return &j.states[i]
}

// load is the run's key id's state, the zero state if the jar never
// reached it, without making it.
func (j *jar) load(id int) algorithms.State {
	if j.slots == nil {
		if id < len(j.states) {
			return j.states[id].Capped()
		}
		return algorithms.State{}
	}
	if i, ok := j.slots[int32(id)]; ok {
		return j.states[i].Capped()
	}
	return algorithms.State{}
}

// takeInto decides a request of cost for key id at now into d, which
// arrives zeroed: the verdict alone unless whole, when the algorithm can
// give it alone. Written in place: a decision returned by value and
// copied cost a simulated request 46 of its 1,108 instructions.
func (j *jar) takeInto(d *algorithms.Decision, id int, now algorithms.Time, cost int64, whole bool) {
	st := j.state(id)
	if !whole && j.step.admit != nil {
		d.Allowed = j.step.admit.Admit(st, now, cost)
		return
	}
	*d = j.step.whole(st, now, cost)
}

func (j *jar) Take(_ context.Context, key string, now algorithms.Time, cost int64) (store.Decision, error) {
	var d store.Decision
	j.takeInto(&d.Decision, j.keys.id(key), now, cost, true)
	return d, nil
}

func (j *jar) Load(_ context.Context, key string) (algorithms.State, error) {
	i, ok := j.keys.ids[key]
	if !ok {
		return algorithms.State{}, nil
	}
	return j.load(i), nil
}

func (j *jar) Save(_ context.Context, key string, st algorithms.State, _ time.Duration) error {
	*j.state(j.keys.id(key)) = st.Capped()
	return nil
}

// takeFresh appends to ids the keys a sparse jar reached since it was
// last asked, and forgets them. A dense jar gives none: the recorder
// samples its every key, as reached from the start.
func (j *jar) takeFresh(ids []int32) []int32 {
	ids = append(ids, j.fresh...)
	j.fresh = j.fresh[:0]
	return ids
}
