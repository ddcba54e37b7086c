package algorithms

import (
	"fmt"
	"strings"
	"time"
)

// MaxLimits is how many limits one key may have: APIs publish two or three
// (per second, per hour, per day); eight leaves room and keeps a key's
// decision one bounded step.
const MaxLimits = 8

// Multi is several limits on one key, as public APIs publish them: 10/s
// with a burst of 20 and 1000 per hour, say. A request passes only if every
// limit admits it, and a request that any limit refuses consumes nothing
// from the limits that would have admitted it: otherwise a client held back
// by its hourly quota would still drain its per-second bucket with requests
// that never ran, and find it empty when the hour turned.
//
// Each limit keeps its own State, in State.Sub (one per limit, in order).
// A step decides every limit on its own state at the same instant with the
// same cost, then commits all of them if all admitted; if not, a limit that
// refused keeps what its own refusal left (a refusal consumes nothing from
// the exact algorithms; a peer model that counts refused hits counts it)
// and a limit that would have admitted keeps its state untouched. On Redis
// the store runs the same rule in one Lua script over all of a key's
// limits, so the decision stays atomic.
//
// The Decision speaks for the whole key (see [Combine]): Retry-After is the
// longest wait a refusing limit asks for; Remaining is the fewest requests
// any limit has left, and Binding names that limit, the one a client meets
// first; ResetAfter is when every limit is back to full.
type Multi struct {
	policies []Policy
	// inPlace[i] is policies[i]'s algorithm when it steps in place, nil
	// otherwise: asked once, not on every request.
	inPlace []inPlaceStep
	// chargers[i] is policies[i]'s algorithm as a Charger; chargers is
	// nil unless every one of them is one ([AsCharger]).
	chargers []Charger
}

// Policy is one named limit of a key.
type Policy struct {
	// Name names the limit in the RateLimit-Policy header: "burst",
	// "hourly".
	Name      string
	Algorithm Algorithm
	// Shadow runs the limit in shadow mode (a dark launch): it decides and
	// counts, but what it would refuse passes, and the decision says
	// WouldReject. With ShadowUntil set it enforces from that instant on;
	// 0 shadows it for good. A shadowed limit's refusal commits nothing of
	// the others and blocks nothing; the enforcing limits decide alone.
	Shadow      bool
	ShadowUntil Time
}

// shadowedAt reports whether p is in shadow mode at now.
func (p *Policy) shadowedAt(now Time) bool {
	return p.Shadow && (p.ShadowUntil == 0 || now < p.ShadowUntil)
}

// NewMulti builds the limits of one key. It wants 1 to [MaxLimits]
// policies with distinct, non-empty names.
func NewMulti(policies []Policy) (*Multi, error) {
	if len(policies) == 0 || len(policies) > MaxLimits {
		return nil, &ParamError{"limits", fmt.Sprintf("%d limits on one key (want 1 to %d)", len(policies), MaxLimits)}
	}
	seen := make(map[string]bool, len(policies))
	for i, p := range policies {
		if p.Name == "" {
			return nil, &ParamError{"limits", fmt.Sprintf("limit %d has no name (want a name for the RateLimit-Policy header)", i+1)}
		}
		if seen[p.Name] {
			return nil, &ParamError{"limits", fmt.Sprintf("two limits are named %q (want distinct names)", p.Name)}
		}
		seen[p.Name] = true
		if p.Algorithm == nil {
			return nil, &ParamError{"limits", fmt.Sprintf("limit %q has no algorithm", p.Name)}
		}
	}
	m := &Multi{policies: append([]Policy(nil), policies...), inPlace: make([]inPlaceStep, len(policies))}
	for i, p := range policies {
		m.inPlace[i], _ = p.Algorithm.(inPlaceStep)
	}
	m.chargers = make([]Charger, len(policies))
	for i, p := range policies {
		c, ok := AsCharger(p.Algorithm)
		if !ok {
			m.chargers = nil
			break
		}
		m.chargers[i] = c
	}
	return m, nil
}

// Name joins the limits' algorithm names with "+".
func (m *Multi) Name() string {
	parts := make([]string, len(m.policies))
	for i, p := range m.policies {
		parts[i] = p.Algorithm.Name()
	}
	return strings.Join(parts, "+")
}

// Params returns the first limit's parameters: the one a scenario lists
// first, which the single-limit views (a run's header) describe.
func (m *Multi) Params() Params { return m.policies[0].Algorithm.Params() }

// Policies returns the limits, in order: a copy.
func (m *Multi) Policies() []Policy { return append([]Policy(nil), m.policies...) }

// Len is the number of limits.
func (m *Multi) Len() int { return len(m.policies) }

// Step decides one request on every limit at once; see [Multi]. The new
// State's Sub is a slice of its own, never prev's.
func (m *Multi) Step(prev State, now Time, cost int64) (State, Decision) {
	next := State{Sub: make([]State, len(m.policies))}
	for i := range min(len(prev.Sub), len(next.Sub)) {
		// Capped: a limit stepped in place appends to a log of its own,
		// never past the end of prev's, which another may append to.
		sub := prev.Sub[i]
		sub.Log = sub.Log[:len(sub.Log):len(sub.Log)]
		next.Sub[i] = sub
	}
	d := m.stepSubs(next.Sub, now, cost)
	return next, d
}

// Charge counts a request of cost at now as admitted on every limit
// ([Charger]), each by its own algorithm's Charge, so that a key's shared
// copy counts what its servers admitted on each of its limits, the
// hourly quota as well as the per-second bucket. A limit in shadow mode at
// now is stepped instead, counting the request only if it admits it, as
// Step commits it: a shadowed limit measures what it would refuse were it
// enforced, and an enforced limit counts nothing it refuses. The new
// State's Sub is a slice of its own, never prev's.
//
// A Multi with a limit whose algorithm is not a Charger ([AsCharger]
// reports false for it) cannot count a request it did not decide: Charge
// then returns prev unchanged, as the zero Multi does.
func (m *Multi) Charge(prev State, now Time, cost int64) State {
	if len(m.policies) == 0 || !m.charges() {
		return prev
	}
	next := State{Sub: make([]State, len(m.policies))}
	for i := range min(len(prev.Sub), len(next.Sub)) {
		next.Sub[i] = prev.Sub[i].Capped()
	}
	for i := range m.policies {
		p := &m.policies[i]
		if p.shadowedAt(now) {
			next.Sub[i], _ = p.Algorithm.Step(next.Sub[i], now, cost)
			continue
		}
		next.Sub[i] = m.chargers[i].Charge(next.Sub[i], now, cost)
	}
	return next
}

// ChargeInPlace is Charge for a caller that owns st ([Charger]): each
// limit's state is charged where it lies in st.Sub, as [Multi.StepInPlace]
// steps it (a limit in shadow mode is stepped, as Charge steps it); st
// gets a Sub of its own only when it has none of the right length.
func (m *Multi) ChargeInPlace(st *State, now Time, cost int64) {
	if len(m.policies) == 0 || !m.charges() {
		return
	}
	if len(st.Sub) != len(m.policies) {
		sub := make([]State, len(m.policies))
		copy(sub, st.Sub)
		st.Sub = sub
	}
	if st.T != 0 || st.N != 0 || st.Prev != 0 || st.Log != nil {
		*st = State{Sub: st.Sub} // Charge's state is its Sub alone
	}
	for i := range m.policies {
		p, sub := &m.policies[i], &st.Sub[i]
		if p.shadowedAt(now) {
			// Stepped by Step, as Charge steps it: StepInPlace keeps
			// fields of a state that Step's new one drops (a bucket's
			// keeps a Log it does not read), and a limit in shadow
			// mode, a dark launch, is rare enough to copy.
			*sub, _ = p.Algorithm.Step(*sub, now, cost)
			continue
		}
		m.chargers[i].ChargeInPlace(sub, now, cost)
	}
}

// charges reports whether every limit's algorithm is a [Charger]: the
// zero Multi, with none, counts as one that charges nothing.
func (m *Multi) charges() bool { return len(m.policies) == 0 || m.chargers != nil }

// StepInPlace is Step on a state its caller owns, Sub stepped where it
// lies: a store that keeps one State per key allocates its Sub once, not
// on every request.
func (m *Multi) StepInPlace(st *State, now Time, cost int64) Decision {
	if len(st.Sub) != len(m.policies) {
		sub := make([]State, len(m.policies))
		copy(sub, st.Sub)
		st.Sub = sub
	}
	return m.stepSubs(st.Sub, now, cost)
}

// Release gives back a completed request's lease on every limit that
// holds leases ([Concurrency]); the others are left as they are. The new
// State's Sub is a slice of its own.
func (m *Multi) Release(prev State, now, lease Time, cost int64) State {
	next := State{Sub: make([]State, len(m.policies))}
	copy(next.Sub, prev.Sub)
	for i, p := range m.policies {
		if r, ok := p.Algorithm.(interface {
			Release(State, Time, Time, int64) State
		}); ok {
			next.Sub[i] = r.Release(next.Sub[i], now, lease, cost)
		}
	}
	return next
}

// stepSubs steps the limits' states in subs, len(subs) == m.Len(),
// committing as [Multi] says. It steps each limit where its state lies
// (StepInPlace, for the algorithms that have it) and puts back, from a
// copy, those that must not have moved: a key's request is almost always
// admitted by all of its limits or refused by one, and copying each new
// state out and back in cost more than the steps themselves. Its scratch
// space is an array on the stack sized to the limits.
func (m *Multi) stepSubs(subs []State, now Time, cost int64) (d Decision) {
	switch n := len(m.policies); {
	case n <= 2:
		var saved [2]State
		var ds [2]Decision
		m.stepInto(subs, saved[:n], ds[:n], now, cost, &d)
	case n <= 4:
		var saved [4]State
		var ds [4]Decision
		m.stepInto(subs, saved[:n], ds[:n], now, cost, &d)
	default:
		var saved [MaxLimits]State
		var ds [MaxLimits]Decision
		m.stepInto(subs, saved[:n], ds[:n], now, cost, &d)
	}
	return d
}

// inPlaceStep is an algorithm that steps a state where it lies, never
// writing inside the log it was given (only past its end): a copy of the
// State taken before is still the state before.
type inPlaceStep interface {
	StepInPlace(st *State, now Time, cost int64) Decision
}

// stepInto is stepSubs with its scratch space, saved and ds, given, and
// the key's decision written to out (an 80-byte Decision returned up three
// calls was copied at each).
func (m *Multi) stepInto(subs, saved []State, ds []Decision, now Time, cost int64, out *Decision) {
	var shadow uint
	allowed := true
	for i := range m.policies {
		p := &m.policies[i]
		saved[i] = subs[i]
		if ip := m.inPlace[i]; ip != nil {
			ds[i] = ip.StepInPlace(&subs[i], now, cost)
		} else {
			subs[i], ds[i] = p.Algorithm.Step(subs[i], now, cost)
		}
		if p.shadowedAt(now) {
			shadow |= 1 << i
		} else {
			allowed = allowed && ds[i].Allowed
		}
	}
	if !allowed {
		for i := range m.policies {
			if !ds[i].Allowed {
				continue // a refusal keeps what it left
			}
			// Would have admitted, but another limit refused: this one
			// keeps its state, and says what it has left without the
			// request, as a peek does.
			subs[i] = saved[i]
			_, ds[i] = m.policies[i].Algorithm.Step(subs[i], now, 0)
			ds[i].Allowed = true
		}
	}
	combine(ds, shadow, out)
}

// Combine is the decision a key with several limits gives, from each
// limit's own decision at the same instant (a limit that would have
// admitted a request another refused gives its peek), shadow having bit
// i set when limit i is in shadow mode:
//
//   - Allowed when every enforcing limit admitted; WouldReject when it was
//     and a shadowed limit refused;
//   - refused: RetryAfter is the longest any refusing enforcing limit asks
//     (the request passes none sooner), and that limit is the Binding one;
//   - admitted: the Binding limit is the enforcing one with the fewest
//     requests remaining (the first of those with the longest reset on a
//     tie), and Delay the longest any limit queues the request;
//   - Limit and Remaining are the Binding limit's, BindingResetAfter its
//     reset, and ResetAfter the longest reset of all: when the whole key
//     is back to full and a store may forget it.
//
// With every limit shadowed the request passes and all of them are
// candidates to bind; the Delay and Lease are those of the limits that
// admitted it, as when all did. The store's Redis path combines the Lua script's
// per-limit replies with it, so the memory store and Redis decide alike.
func Combine(ds []Decision, shadow uint) Decision {
	var d Decision
	combine(ds, shadow, &d)
	return d
}

// combine is Combine writing its decision to out.
func combine(ds []Decision, shadow uint, out *Decision) {
	if len(ds) == 0 {
		*out = Decision{}
		return
	}
	if shadow&(1<<len(ds)-1) == 1<<len(ds)-1 {
		// Every limit shadowed: all of them speak, none refuses, and the
		// request passes as if all had admitted it. Each limit committed
		// its step (no enforcing limit refused), so the lease a
		// concurrency limit took and the wait a queue set are the
		// caller's, refused by another or not: a lease not named here
		// could never be given back.
		combine(ds, 0, out)
		if !out.Allowed {
			out.Allowed, out.WouldReject, out.RetryAfter = true, true, 0
			for i := range ds {
				out.Delay = max(out.Delay, ds[i].Delay)
				out.Lease = max(out.Lease, ds[i].Lease)
			}
		}
		return
	}
	allowed, wouldReject := true, false
	for i := range ds {
		if shadow&(1<<i) != 0 {
			wouldReject = wouldReject || !ds[i].Allowed
		} else {
			allowed = allowed && ds[i].Allowed
		}
	}
	b := -1
	var reset, delay time.Duration
	for i := range ds {
		d := &ds[i]
		reset = max(reset, d.ResetAfter)
		if shadow&(1<<i) != 0 {
			continue
		}
		delay = max(delay, d.Delay)
		switch {
		case b < 0 && (allowed || !d.Allowed):
			b = i
		case b < 0:
		case !allowed:
			if !d.Allowed && d.RetryAfter > ds[b].RetryAfter {
				b = i
			}
		case d.Remaining < ds[b].Remaining || (d.Remaining == ds[b].Remaining && d.ResetAfter > ds[b].ResetAfter):
			b = i
		}
	}
	bd := &ds[b]
	*out = Decision{
		Allowed:           allowed,
		Limit:             bd.Limit,
		Remaining:         bd.Remaining,
		ResetAfter:        reset,
		Binding:           b,
		BindingResetAfter: bd.ResetAfter,
	}
	if allowed {
		out.Delay = delay
		out.WouldReject = wouldReject
		for i := range ds {
			out.Lease = max(out.Lease, ds[i].Lease) // a concurrency limit's
		}
	} else {
		out.RetryAfter = bd.RetryAfter
	}
}
