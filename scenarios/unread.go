package scenarios

// A setting of a field the run never reads: --burst on a fixed window,
// --set topology.failover_after on a shared store. The file may write
// such a field (a bucket's burst stays so that --algorithm can switch it
// back, DESIGN.md lists a topology's every field on a shared one); a
// setting given from outside the file is given to change the run, and
// one the run does not read would change nothing, silently.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/topology"
)

// notLocal are the kinds with a store: a local jar is in the server's
// memory, and reads no store, round trip, store error policy or timeout.
func notLocal() []sim.TopologyKind {
	var kinds []sim.TopologyKind
	for _, k := range topology.Kinds() {
		if k != sim.Local {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// nginxParams are the limit's fields that the nginx-limit-req model alone
// reads (limit_req's delay= and nodelay), beside its Catalog Params.
var nginxParams = []string{"delay", "nodelay"}

// checkRead refuses a setting of sets whose field sc, the run they make,
// does not read: a limit's parameter its algorithm has no use for (the
// Catalog's Params say which it reads), or a topology's field its kind
// has no use for (the field table's kinds). root is the file's tree, to
// turn an entry's name into its index; nil when no setting names one.
func checkRead(root *yaml.Node, sc sim.Scenario, sets []Setting) error {
	for _, s := range sets {
		if overrideName(s.Name) == "store" {
			// check's --store names the store of a whole suite, local
			// files and all; sim's is the same flag.
			continue
		}
		t, err := target(root, s.Name)
		if err != nil {
			continue // checkSetting has said why
		}
		if msg := unread(sc, t, s.Flag); msg != "" {
			return &Error{Field: s.Flag, Msg: msg}
		}
	}
	return nil
}

// unread is why sc does not read the field at path t, or "" when it does
// (or is no parameter of a limit or field of a topology).
func unread(sc sim.Scenario, t, flag string) string {
	limits := append([]sim.Limit{sc.Limit}, sc.Also...)
	lim, param := -1, ""
	switch {
	case strings.HasPrefix(t, "limit.") && !strings.ContainsAny(t[len("limit."):], ".["):
		lim, param = 0, t[len("limit."):]
	case strings.HasPrefix(t, "limits["):
		i, rest, ok := strings.Cut(t[len("limits["):], "].")
		n, err := strconv.Atoi(i)
		if ok && err == nil && n >= 0 && n < len(limits) && !strings.ContainsAny(rest, ".[") {
			lim, param = n, rest
		}
	case strings.HasPrefix(t, "topology."):
		field := t[len("topology."):]
		if i := strings.IndexAny(field, ".["); i >= 0 {
			field = field[:i]
		}
		return unreadTopology(sc.Topology.Kind, field, flag)
	}
	if lim < 0 {
		return ""
	}
	return unreadParam(limits[lim].Algorithm, param, flag)
}

// unreadParam is why algorithm reads no param, or "".
func unreadParam(algorithm, param, flag string) string {
	reads := func(name string) []string {
		info, ok := algorithms.Lookup(name)
		if !ok {
			return nil
		}
		if name == "nginx-limit-req" {
			return append(slices.Clone(info.Params), nginxParams...)
		}
		return info.Params
	}
	isParam := slices.Contains(nginxParams, param)
	var other string
	for _, info := range algorithms.Catalog() {
		if slices.Contains(reads(info.Name), param) {
			isParam = true
			if other == "" {
				other = info.Name
			}
		}
	}
	own := reads(algorithm)
	if !isParam || own == nil || slices.Contains(own, param) {
		return ""
	}
	return fmt.Sprintf("%s reads no %s (want %s, or %s)", algorithm, param, words.OneOf(own), wholeFlag(flag, "algorithm", other))
}

// unreadTopology is why a topology of kind reads no field name, or "".
func unreadTopology(kind sim.TopologyKind, name, flag string) string {
	i := slices.IndexFunc(topologyObject.fields, func(f field) bool { return f.name == name })
	if i < 0 || topologyObject.fields[i].kinds == nil {
		return ""
	}
	kinds := topologyObject.fields[i].kinds
	if slices.Contains(kinds, kind) {
		return ""
	}
	if kind == sim.Local {
		return fmt.Sprintf("local reads no %s: a local jar is in the server's memory, with no store (want %s)", name, wholeFlag(flag, "topology", string(sim.Shared)))
	}
	return fmt.Sprintf("%s reads no %s (want %s)", kind, name, wholeFlag(flag, "topology", words.OneOf(kinds)))
}

// wholeFlag is how the setting that flag's kind of setting would use to
// set the override name to value: --algorithm token-bucket on a command
// line, with.algorithm in an expectation, a path in a sweep.
func wholeFlag(flag, name, value string) string {
	switch {
	case strings.HasPrefix(flag, "expect[") || strings.HasPrefix(flag, "with."):
		return fmt.Sprintf("with: {%s: %s}", name, value)
	case strings.HasPrefix(flag, "sweep "):
		return fmt.Sprintf("--%s %s, or sweep %s=%s", name, value, name, value)
	}
	return fmt.Sprintf("--%s %s", name, value)
}
