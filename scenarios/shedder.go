package scenarios

// The fleet's load shedder: its capacity, burst and the share of it
// reserved for each priority.

import (
	"math/big"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
)

// shedder reads the fleet's load shedder:
//
//	shedder: {capacity: 1000/s, burst: 1000, reserve: {normal: 0.2, sheddable: 0.5}}
func (d *decoder) shedder(n *yaml.Node) *sim.Shedder {
	const want = "a mapping such as {capacity: 1000/s, burst: 1000, reserve: {normal: 0.2, sheddable: 0.5}}"
	f := d.record(n, "shedder", &shedderObject, want)
	if d.failed() {
		return nil
	}
	sh := &sim.Shedder{Reserve: defaultReserve}
	v, ok := f.values["capacity"]
	if !ok {
		d.failf(f.node, "shedder.capacity", "missing: what the fleet serves (want e.g. capacity: 1000/s)")
		return nil
	}
	sh.Capacity = d.rate(v, "shedder.capacity", false)
	sh.Burst = max(1, int64(sh.Capacity.PerSecond())) // a second of capacity
	if v, ok := f.values["burst"]; ok {
		sh.Burst = d.integer(v, "shedder.burst", 1, 1<<50, "1000")
	}
	if v, ok := f.values["reserve"]; ok {
		r := d.record(v, "shedder.reserve", &reserveObject, "a mapping such as {normal: 0.2, sheddable: 0.5}")
		if d.failed() {
			return nil
		}
		for i, name := range algorithms.Priorities[1:] { // reserveObject's fields
			if v, ok := r.values[name]; ok {
				share := d.number(v, "shedder.reserve."+name, "0.2")
				switch {
				case d.failed():
				case share < 0 || share >= 1:
					d.failf(v, "shedder.reserve."+name, "%s is not a share of the capacity (want 0 to below 1, e.g. 0.2)", v.Value)
				case !sameDecimal(v.Value, share):
					// The simulator keeps a share as a float64 and
					// reserves on the shortest decimal that reads back
					// as it (algorithms.ReserveOf): the one written, to 15
					// significant digits. Past them, the decimal written
					// may be another, and its reserve a token off.
					d.failf(v, "shedder.reserve."+name, "%s has more significant digits than a share keeps: it would be read as %s (want at most 15 significant digits, e.g. 0.29)", short(v.Value), strconv.FormatFloat(share, 'g', -1, 64))
				}
				sh.Reserve[i+1] = share
			}
		}
	}
	if d.failed() {
		return nil
	}
	if _, err := sh.New(); err != nil {
		d.failf(f.node, "shedder", "%v", err)
		return nil
	}
	return sh
}

// sameDecimal reports whether text, a number as YAML wrote it, is exactly
// the shortest decimal that reads back as x, the float64 it was read as.
func sameDecimal(text string, x float64) bool {
	written, ok := new(big.Rat).SetString(strings.ReplaceAll(strings.TrimSpace(text), "_", ""))
	if !ok {
		return false
	}
	shortest, ok := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
	return ok && written.Cmp(shortest) == 0
}
