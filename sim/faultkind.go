package sim

// Fault kinds register here. One kind is one file, fault_KIND.go, holding
// its constant and its FaultType: the fields it reads, its check, what it
// does to a run at its start and end, and how it is told (the log, the
// Result's span, the TUI's banner, the plot's shade). Every list of the
// kinds, every kind's fields and every "want partition, outage, ..." is
// derived from faultTypes, so a new kind is its file and a line there.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ratelim/ratelim/internal/words"
)

// FaultKind is what goes wrong: one of FaultKinds.
type FaultKind string

// Fault is something going wrong between Start and End. Which of the
// other fields it reads is its kind's (FaultType.Fields); a field its
// kind does not read is left zero (Check refuses one that is not).
type Fault struct {
	Kind       FaultKind
	Start, End time.Duration
	Groups     [][]int       // partition: the API servers on each side; groups[0]'s keep the primary
	Nodes      [][]string    // partition: the store nodes (copies) on each side, by name; see topology.Partition
	RTT        time.Duration // latency
	Servers    []int         // crash, clock-skew: the servers it strikes (clock-skew: all if empty)
	Offset     time.Duration // clock-skew: how far ahead (negative: behind) the clock is at Start
	Drift      float64       // clock-skew: seconds gained per second from Start (negative: lost)
	Region     string        // outage, on a regions topology: the region that goes down (all of them if empty)
}

// faultTypes are the fault kinds, in the order the docs, the reference
// and every error's "want ..." name them.
var faultTypes = []*FaultType{&partitionFault, &outageFault, &latencyFault, &clockSkewFault, &crashFault}

// faultFieldSet says, for each field a kind may read, whether a Fault
// has it: what Check refuses on a kind that does not read it. Fault's
// fields in a scenario file's names.
var faultFieldSet = []struct {
	name string
	set  func(Fault) bool
}{
	{"groups", func(f Fault) bool { return len(f.Groups) > 0 }},
	{"nodes", func(f Fault) bool { return len(f.Nodes) > 0 }},
	{"rtt", func(f Fault) bool { return f.RTT != 0 }},
	{"servers", func(f Fault) bool { return len(f.Servers) > 0 }},
	{"offset", func(f Fault) bool { return f.Offset != 0 }},
	{"drift", func(f Fault) bool { return f.Drift != 0 }},
	{"region", func(f Fault) bool { return f.Region != "" }},
}

// FaultType is one kind of fault: what a scenario file writes for it and
// what it does. Its exported fields are for reading.
type FaultType struct {
	Kind FaultKind
	// Fields are the fields it reads besides kind, start and end, in the
	// order the decoder reads them; empty (not nil) for none.
	Fields []FaultField
	// AnyOf are fields of which a file must give at least one, and
	// AnyOfWant the error when it gives none.
	AnyOf     []string
	AnyOfWant string
	// Shade is the hue a plot shades its windows in.
	Shade FaultShade

	// check refuses a fault of the kind that a fleet of servers cannot
	// run, on a store of the nodes named (at is the fault's own path, for
	// messages that name another field); nil when it has nothing to
	// check.
	check func(f Fault, at string, servers int, nodes []string) *FaultError
	// span is the Result's detail of the fault, log the log's (after
	// "KIND begins"); banner what the TUI says while it is in force,
	// before " · until END".
	span   func(f Fault) string
	log    func(f Fault) string
	banner func(sc Scenario, f Fault, now time.Duration) string
	// setup prepares the run for the fault (at its scheduling, before the
	// run starts); start and end are what it does at its instants. Each
	// may be nil.
	setup func(s *sim, f Fault, start, end int64)
	start func(ctx context.Context, s *sim, i int, t int64) error
	end   func(ctx context.Context, s *sim, f Fault, t int64) error
}

// FaultField is a field a fault kind reads besides kind, start and end,
// named as a scenario file writes it.
type FaultField struct {
	Name string
	// Required: the file must give it. Missing says what it is and
	// Example how it is written, for the error when it does not:
	// "missing: the round trip during the spike (want e.g. rtt: 50ms)".
	Required         bool
	Missing, Example string
	// Empty, for a list that must not be given empty, is the error when
	// it is: "empty (want ...)".
	Empty string
}

// required is a field a file must give: what it is, and how it is
// written.
func required(name, missing, example string) FaultField {
	return FaultField{Name: name, Required: true, Missing: missing, Example: example}
}

// FaultShade is the hue a plot shades a kind's windows in, named after
// the colour-blind-safe palette package plots draws with: sim says which
// hue tells the kind, plots owns the colours, so sim stays free of
// drawing packages. The zero shade is orange.
type FaultShade int

const (
	ShadeOrange FaultShade = iota
	ShadeYellow
	ShadeGrey
	ShadeSkyBlue
	ShadeReddishPurple
)

// FaultKinds are the names of the fault kinds, in the docs' order.
func FaultKinds() []string {
	out := make([]string, len(faultTypes))
	for i, ft := range faultTypes {
		out[i] = string(ft.Kind)
	}
	return out
}

// FaultTypeOf is kind's FaultType; false for a kind that is none.
func FaultTypeOf(kind FaultKind) (FaultType, bool) {
	if ft := typeOf(kind); ft != nil {
		return *ft, true
	}
	return FaultType{}, false
}

func typeOf(kind FaultKind) *FaultType {
	for _, ft := range faultTypes {
		if ft.Kind == kind {
			return ft
		}
	}
	return nil
}

// Known says whether k is a registered fault kind.
func (k FaultKind) Known() bool { return typeOf(k) != nil }

// Shade is the hue a plot shades kind k in; orange for a kind that is none.
func (k FaultKind) Shade() FaultShade {
	if ft := typeOf(k); ft != nil {
		return ft.Shade
	}
	return ShadeOrange
}

// FieldNames are the names of the fields ft reads besides kind, start
// and end.
func (ft FaultType) FieldNames() []string {
	out := make([]string, len(ft.Fields))
	for i, f := range ft.Fields {
		out[i] = f.Name
	}
	return out
}

// FieldsWant is what a field ft does not read is told to want instead:
// "start and end only", or "start, end, groups".
func (ft FaultType) FieldsWant() string {
	if len(ft.Fields) == 0 {
		return "start and end only"
	}
	return "start, end, " + strings.Join(ft.FieldNames(), ", ")
}

// reads says whether ft reads the field called name.
func (ft FaultType) reads(name string) bool {
	for _, f := range ft.Fields {
		if f.Name == name {
			return true
		}
	}
	return false
}

// FaultError is a fault's field a user can fix: At is the fault's own
// path ("faults[2]"; "" for a fault on its own, as the live fleet's
// control listener takes one), Field the field in it ("groups[1][0]"),
// Msg what is wrong and what is wanted.
type FaultError struct {
	At, Field, Msg string
}

// Path is the field's path from the top: At and Field joined.
func (e *FaultError) Path() string { return joinPath(e.At, e.Field) }

func (e *FaultError) Error() string { return e.Path() + ": " + e.Msg }

func joinPath(at, field string) string {
	switch {
	case at == "":
		return field
	case field == "":
		return at
	}
	return at + "." + field
}

// Check refuses fault f if a fleet of servers cannot run it: an unknown
// kind, a field its kind does not read, or what its kind's check finds
// (servers that do not exist, groups that do not cover every server once,
// a crash that leaves no server, a skew past its bounds). at is the
// fault's path, for the error's (a *FaultError). The scenario decoder,
// Scenario.check and the live fleet all check a fault here.
//
// nodes are the store's nodes (the copies, as NodeNames gives them), which
// a partition may place; nil to leave them unchecked.
func (f Fault) Check(at string, servers int, nodes []string) error {
	ft := typeOf(f.Kind)
	if ft == nil {
		return &FaultError{At: at, Field: "kind", Msg: fmt.Sprintf("unknown fault kind %q (want %s)", f.Kind, words.OneOf(FaultKinds()))}
	}
	for _, field := range faultFieldSet {
		if field.set(f) && !ft.reads(field.name) {
			return &FaultError{At: at, Field: field.name, Msg: fmt.Sprintf("not a field of fault kind %s (want %s)", f.Kind, ft.FieldsWant())}
		}
	}
	if ft.check == nil {
		return nil
	}
	if err := ft.check(f, at, servers, nodes); err != nil {
		err.At = at
		return err
	}
	return nil
}

// Banner says what fault f, in force at now, does to sc's servers, for
// the TUI's header: "STORE DOWN — failing open · until 20s".
func (f Fault) Banner(sc Scenario, now time.Duration) string {
	until := " · until " + bannerSecs(f.End)
	if ft := typeOf(f.Kind); ft != nil {
		return ft.banner(sc, f, now) + until
	}
	return strings.ToUpper(string(f.Kind)) + until
}

// checkServers checks a list of server numbers at field: each is one of
// servers, and none is in seen already, which maps a server to the field
// that listed it, and which it adds them to. at is the fault's path.
func checkServers(list []int, at, field string, servers int, seen map[int]string) *FaultError {
	for j, s := range list {
		item := fmt.Sprintf("%s[%d]", field, j)
		if s < 0 || s >= servers {
			return &FaultError{Field: item, Msg: fmt.Sprintf("server %d does not exist (want 0 to %d: servers are numbered from 0)", s, servers-1)}
		}
		if owner, dup := seen[s]; dup {
			if owner == field {
				return &FaultError{Field: item, Msg: fmt.Sprintf("server %d is listed twice (want each server once)", s)}
			}
			return &FaultError{Field: item, Msg: fmt.Sprintf("server %d is already in %s (want each server in one group only)", s, joinPath(at, owner))}
		}
		seen[s] = field
	}
	return nil
}

// failing is what sc's servers do when the store fails them, for a banner.
func failing(sc Scenario) string {
	if sc.Topology.FailsClosed() {
		return "failing closed"
	}
	return "failing open"
}

// bannerSecs is a virtual instant as the TUI's header writes it: 12s, 1.5s.
func bannerSecs(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}
