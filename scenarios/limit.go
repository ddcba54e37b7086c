package scenarios

// Limits: a limit: mapping and a key's several limits:, a limit's name
// (what RateLimit-Policy calls it) and its shadow mode.

import (
	"errors"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/sim"
)

// limit reads a limit: mapping at path ("limit", "limits[1]"): its
// algorithm and the parameters the algorithm reads, its key, name and
// shadow mode. The parameters are checked by building the algorithm.
func (d *decoder) limit(n *yaml.Node, path string) sim.Limit {
	f := d.record(n, path, &limitObject, "a mapping with algorithm, rate and burst or window")
	lim := sim.Limit{Algorithm: DefaultAlgorithm, Key: sim.KeyAuto}
	if v, ok := f.values["name"]; ok {
		lim.Name = d.policyName(v, path+".name")
	}
	if v, ok := f.values["algorithm"]; ok {
		lim.Algorithm = d.choice(v, path+".algorithm", "algorithm", algorithms.Names())
	}
	if v, ok := f.values["rate"]; ok {
		lim.Params.Rate = d.rate(v, path+".rate", false)
	} else if lim.Algorithm != "concurrency" {
		d.failf(f.node, path+".rate", "missing (want e.g. rate: 10/s)")
	}
	if v, ok := f.values["max_in_flight"]; ok {
		lim.Params.Burst = d.integer(v, path+".max_in_flight", 1, 1<<20, "20")
	}
	if v, ok := f.values["lease_ttl"]; ok {
		lim.Params.Window = d.positive(v, path+".lease_ttl", "30s")
	}
	d.refuseOtherFamily(f, path, lim.Algorithm)
	if v, ok := f.values["burst"]; ok {
		lim.Params.Burst = d.integer(v, path+".burst", 0, 1<<50, "50")
		if !d.failed() && lim.Params.Burst == 0 && lim.Algorithm != "nginx-limit-req" {
			d.failf(v, path+".burst", "0 is too small (want at least 1); burst: 0, nginx's default, is for nginx-limit-req alone")
		}
	}
	if v, ok := f.values["window"]; ok {
		lim.Params.Window = d.positive(v, path+".window", "1s")
	}
	if v, ok := f.values["delay"]; ok {
		lim.Params.Delay = d.integer(v, path+".delay", 0, 1<<50, "8")
	}
	if v, ok := f.values["nodelay"]; ok {
		lim.Params.NoDelay = d.boolean(v, path+".nodelay")
	}
	if v, ok := f.values["shadow"]; ok {
		lim.Shadow, lim.ShadowUntil = d.shadow(v, path+".shadow")
	}
	if v, ok := f.values["key"]; ok {
		lim.Key = sim.KeyBy(d.choice(v, path+".key", "key", keyKinds))
	}
	if d.failed() {
		return lim
	}
	d.checkAlgorithmParams(f, path, lim)
	return lim
}

// refuseOtherFamily refuses the fields of the other family of limiters:
// the concurrency limiter's (max_in_flight, lease_ttl) on a rate limiter,
// a rate limiter's (rate, burst, window) on the concurrency limiter. Both
// families share Params.Burst and Params.Window, so a field of the other
// family would silently set this one's.
func (d *decoder) refuseOtherFamily(f *fields, path, algorithm string) {
	if !d.failed() && algorithm != "concurrency" {
		for _, field := range []string{"max_in_flight", "lease_ttl"} {
			if v, ok := f.values[field]; ok {
				d.failf(v, path+"."+field, "is the concurrency limiter's (want algorithm: concurrency, or no %s)", field)
			}
		}
	}
	if !d.failed() && algorithm == "concurrency" {
		for _, field := range []string{"rate", "burst", "window"} {
			if v, ok := f.values[field]; ok {
				d.failf(v, path+"."+field, "the concurrency limiter counts requests in flight, not a rate (want max_in_flight and lease_ttl)")
			}
		}
	}
}

// checkAlgorithmParams checks lim's parameters as its algorithm will read
// them: each one the algorithm needs is given, and the algorithm builds
// from them. An algorithm's error is put on the field it names.
func (d *decoder) checkAlgorithmParams(f *fields, path string, lim sim.Limit) {
	// The parameters the algorithm reads must be there; the others may be,
	// so that --algorithm can switch a file between families.
	for _, info := range algorithms.Catalog() {
		if info.Name != lim.Algorithm {
			continue
		}
		for _, p := range info.Params {
			if !f.has(p) {
				example := map[string]string{"rate": "rate: 10/s", "burst": "burst: 50", "window": "window: 1s"}[p]
				d.failf(f.node, path+"."+p, "missing: %s needs a %s (want e.g. %s)", lim.Algorithm, p, example)
				return
			}
		}
	}
	if _, err := algorithms.New(lim.Algorithm, lim.Params); err != nil {
		var pe *algorithms.ParamError
		if errors.As(err, &pe) {
			at := f.values[pe.Param]
			if at == nil {
				at = f.node
			}
			d.failf(at, path+"."+pe.Param, "%s", pe.Msg)
		} else {
			d.failf(f.node, path, "%v", err)
		}
	}
}

// limits reads a key's several limits, each a limit: mapping with a name,
// into sc.Limit (the first) and sc.Also. They share the first's key.
func (d *decoder) limits(n *yaml.Node, sc *sim.Scenario) {
	const want = "a list of limits, each with a name, e.g. - {name: hourly, algorithm: fixed-window, rate: 1000/h, window: 1h}"
	items := d.list(n, "limits", want)
	if d.failed() {
		return
	}
	if len(items) == 0 || len(items) > algorithms.MaxLimits {
		d.failf(n, "limits", "%d limits (want 1 to %d)", len(items), algorithms.MaxLimits)
		return
	}
	seen := map[string]int{}
	for i, item := range items {
		path := index("limits", i)
		lim := d.limit(item, path)
		if d.failed() {
			return
		}
		f := d.record(item, path, &limitObject, want)
		if len(items) > 1 && lim.Name == "" {
			d.failf(item, path+".name", "missing: a key's several limits are named for the RateLimit-Policy header (want e.g. name: hourly)")
			return
		}
		if j, dup := seen[lim.Name]; dup && lim.Name != "" {
			d.failf(f.values["name"], path+".name", "%q names limits[%d] too (want distinct names)", lim.Name, j)
			return
		}
		seen[lim.Name] = i
		if i == 0 {
			sc.Limit = lim
			continue
		}
		if v, ok := f.values["key"]; ok {
			d.failf(v, path+".key", "a key's limits share the first one's key (want key: on limits[0] only)")
			return
		}
		lim.Key = sc.Limit.Key
		sc.Also = append(sc.Also, lim)
	}
}

// policyName reads a limit's name: what RateLimit-Policy calls it, so
// printable ASCII, at most 64 bytes.
func (d *decoder) policyName(n *yaml.Node, field string) string {
	name := d.text(n, field, "hourly")
	if d.failed() {
		return ""
	}
	if name == "" || len(name) > 64 {
		d.failf(n, field, "%d bytes (want 1 to 64)", len(name))
		return ""
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c > 0x7e {
			d.failf(n, field, "%q has a character a header cannot carry (want printable ASCII)", name)
			return ""
		}
	}
	return name
}

// shadow reads a limit's shadow mode: true (or false) for the whole run,
// or {until: 10s}, shadow until then and enforced from then on.
func (d *decoder) shadow(n *yaml.Node, field string) (bool, time.Duration) {
	if n.Kind == yaml.ScalarNode {
		return d.boolean(n, field), 0
	}
	f := d.record(n, field, &shadowObject, "true, or a mapping {until: 10s}")
	if d.failed() {
		return false, 0
	}
	v, ok := f.values["until"]
	if !ok {
		d.failf(f.node, field+".until", "missing (want e.g. shadow: {until: 10s}, or shadow: true for the whole run)")
		return false, 0
	}
	return true, d.positive(v, field+".until", "10s")
}
