package sim

// Shadow mode (a dark launch): a limit decides and counts every request,
// and lets through those it would refuse.

// shadowOne is shadow mode for a key's one limit: a request the limiter
// refused before until (true time, µs) is let through. A decision the fail
// policy took is left as it is: shadow mode is about what the limit would
// do, and a store that cannot be reached decides nothing.
type shadowOne struct {
	until int64 // when the limit enforces; MaxInt64 for never
}

func (sh shadowOne) conclude(_ *sim, o *outcome) {
	d := &o.d
	if d.Allowed || d.Policy != "" || o.p.t >= sh.until {
		return
	}
	d.Allowed, d.RetryAfter = true, 0
	// Admitted now: the lease the limit named, if any, is the request's.
	o.shadowed, o.lease = true, d.Lease
}

// shadowSeveral is shadow mode for one of a key's several limits: the
// limits' step itself (algorithms.Multi) let through what a shadowed one
// would have refused, and says so.
type shadowSeveral struct{}

func (shadowSeveral) conclude(_ *sim, o *outcome) {
	o.shadowed = o.d.WouldReject && o.d.Policy == ""
}
