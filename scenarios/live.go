package scenarios

// What a live check can judge: `ratelim check --target` sends a scenario's
// clients to a service it knows only by its answers, and evaluates the
// expect: lines on what it observed (a live.LoadResult's Result). Some
// figures of that Result are not observations of the service at all:
// they are the scenario's design (a topology's bound), the simulator's
// model of a fleet or a store (copies, shards, leases), or what only
// ratelim's own middleware says in its answers' headers. An expectation on
// one of them is skipped with the reason, never passed on a figure that
// reads 0 because nothing could show it, and never failed.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ratelim/ratelim/sim"
)

// sight is how a live run knows a figure or a finding.
type sight int

const (
	// seen: counted from the requests sent and their answers' statuses
	// and timing, whatever the service is.
	seen sight = iota
	// exact: the exact limiter of the scenario's limit fed the requests
	// as they were observed (sim.Replay does, with the recorder's exact
	// limiter): what the design admits of what was really sent.
	exact
	// told: read from a header ratelim's httplimit middleware sends (and
	// `ratelim serve` with it); another service's answers never carry
	// it, and the figure would read 0 whatever happened.
	told
	// internal: the simulator's model of the fleet, its store or the
	// scenario's design; nothing in an answer shows it.
	internal
)

// liveSight is how a live run knows something, and for what it does not
// know, why: the reason a skipped expectation gives.
type liveSight struct {
	sight sight
	why   string
}

// Reasons shared by several figures.
const (
	whyTopology = "derived from the scenario's topology, the design, not observed of the targets"
	whyCluster  = "a simulated Redis Cluster's shards, which a service's answers do not show"
)

// liveFigures are the figures an expectation may bound (figures and
// keyFigures), by how a live run knows them. TestLiveSightCoversEveryFigure
// holds it to those lists: a figure added to the results must be placed.
var liveFigures = map[string]liveSight{
	"sent":            {seen, ""},
	"allowed":         {seen, ""},
	"rejected":        {seen, ""},
	"no_answer":       {seen, ""},
	"retries":         {seen, ""},
	"retries_allowed": {seen, ""},
	"max_allowed_1s":  {seen, ""},
	"allowed_rate":    {seen, ""},
	"p50_ms":          {seen, ""},
	"p99_ms":          {seen, ""},
	// A cost is what the run asked for (X-Ratelim-Cost): what a service
	// that reads it spent is its own, but what was asked and admitted
	// is seen.
	"cost_sent":    {seen, ""},
	"cost_allowed": {seen, ""},
	// The exact limiter on the arrivals as observed, first tries and
	// retries at the instants they were decided (or sent, where the
	// answer does not say): what the scenario's limit admits of them.
	"ideal_allowed":        {exact, ""},
	"ideal_max_allowed_1s": {exact, ""},
	"false_allows":         {exact, ""},
	"false_denies":         {exact, ""},
	"failed_open":          {told, "counted from X-RateLimit-Decided-By: fail-open, which only ratelim's httplimit middleware sends"},
	// A 503 without X-RateLimit-Shed is counted failed closed: another
	// service's 503 says nothing of a fail policy.
	"failed_closed": {told, "counted from 503 answers as ratelim's httplimit middleware sends them when its store fails; another service's 503 is no fail policy's"},
	"would_reject":  {told, "counted from X-RateLimit-Shadow, which only ratelim's httplimit middleware sends"},
	"shed":          {told, "counted from X-RateLimit-Shed, which only ratelim's httplimit middleware sends"},
	// Served is when an admission left a leaky bucket's queue, which
	// the answer says in X-RateLimit-Delay; without it a delayed
	// answer is served when it was sent.
	"served":          {told, "placed by X-RateLimit-Delay, which only ratelim's httplimit middleware sends"},
	"design_bound_1s": {internal, whyTopology},
}

// liveFindings are the findings (sim.FindingKinds) by how a live run
// knows them: a finding is computed from the Result's figures, and is
// known as well as the figures it reads.
var liveFindings = map[sim.FindingKind]liveSight{
	sim.FindingNoAnswer:          {seen, ""},
	sim.FindingFailedClosed:      {told, liveFigures["failed_closed"].why},
	sim.FindingFailedOpen:        {told, liveFigures["failed_open"].why},
	sim.FindingFailedOver:        {internal, whyCluster},
	sim.FindingFenced:            {internal, whyCluster},
	sim.FindingMasterUnreachable: {internal, whyCluster},
	sim.FindingUncovered:         {internal, whyCluster},
	sim.FindingLeaked:            {internal, "a lease the simulator's store held through a fault, which a service's answers do not show"},
	sim.FindingShed:              {told, liveFigures["shed"].why},
	sim.FindingShadow:            {told, liveFigures["would_reject"].why},
	sim.FindingQuota:             {told, "which of a key's limits refused is read from the policy a 429's RateLimit field names, which a service need not send"},
	sim.FindingCostly:            {seen, ""},
	sim.FindingQueued:            {seen, ""},
	sim.FindingWorstWindow:       {exact, ""},
	sim.FindingOverAdmitted:      {exact, ""},
	sim.FindingDesignBound:       {internal, "it weighs the peak seen against a bound " + whyTopology},
	sim.FindingCopiesDiverged:    {internal, "the store's copies of a counter, which a service's answers do not show"},
	sim.FindingLostUnderShare:    {seen, ""},
	sim.FindingRetriesWasted:     {seen, ""},
	sim.FindingIsolated:          {seen, ""},
	sim.FindingPeer:              {exact, ""},
	sim.FindingExact:             {exact, ""},
}

// liveWith are the settings a with: may change (overrideNames), and for
// those that change the limiter, which a live check cannot do to a
// service, why. The others change only the traffic sent or how the run is
// reported.
var liveWith = map[string]string{
	"seed":            "",
	"duration":        "",
	"step":            "",
	"balancer":        "", // the load run spreads the requests: the client's choice
	"algorithm":       "it changes the limiter's algorithm",
	"topology":        "it changes where the limiter's counters live",
	"store":           "it changes the limiter's store",
	"servers":         "it changes the servers, which are the targets given",
	"key":             "it changes what the limit is keyed by",
	"on-error":        "it changes the limiter's fail policy",
	"rtt":             "it changes the store's round trip",
	"sync-interval":   "it changes how often the servers sync",
	"replication-lag": "it changes the regions' replication",
	"wall-clock":      "it changes where the limiter's windows are aligned",
	"shadow":          "it puts the limits in shadow mode",
}

// LiveCheck judges expectations on a live run against services known by
// their answers alone (`ratelim check --target`).
type LiveCheck struct {
	// Told says the targets send the headers of ratelim's httplimit
	// middleware (a `ratelim serve` fleet, a service built on it), so
	// the figures and findings read from them (failed_open,
	// failed_closed, would_reject, shed, served; quota's policy names)
	// are checked on what they said rather than skipped.
	Told bool
}

// Skip says why e cannot be checked on a live run: "" when it can.
func (lc LiveCheck) Skip(e *Expectation) string {
	if e.Figure == "finding" || e.Figure == "lesson" {
		s, ok := liveFindings[e.Finding]
		if !ok {
			return fmt.Sprintf("finding %s: no live run is known to show it", e.Finding)
		}
		return lc.reason("finding "+string(e.Finding), s)
	}
	s, ok := liveFigures[e.Figure]
	if !ok {
		return fmt.Sprintf("%s: no live run is known to observe it", e.Figure)
	}
	return lc.reason(e.Figure, s)
}

func (lc LiveCheck) reason(what string, s liveSight) string {
	switch {
	case s.sight == told && !lc.Told:
		return what + ": " + s.why + " (pass --httplimit-headers if the targets send them)"
	case s.sight == told, s.sight == seen, s.sight == exact:
		return ""
	}
	return what + ": " + s.why
}

// SkipWith says why a with: cannot run against a service: the first
// setting (by name) that changes the limiter, which is the service's and
// not the check's to change; "" when it changes only the traffic.
func (lc LiveCheck) SkipWith(with map[string]string) string {
	names := make([]string, 0, len(with))
	for name := range with {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		why, known := liveWith[strings.ReplaceAll(name, "_", "-")]
		if !known {
			why = "it is no setting a live run knows"
		}
		if why != "" {
			return fmt.Sprintf("with: %s: %s, and a live check cannot change the targets' (check a file configured so against a service configured so)", name, why)
		}
	}
	return ""
}

// Findings are those of fs a live run can show, in their order: a lesson
// is then the first of them, and what the simulator's model found of the
// fleet is not taken for something the service did.
func (lc LiveCheck) Findings(fs []sim.Finding) []sim.Finding {
	var out []sim.Finding
	for _, f := range fs {
		s, ok := liveFindings[f.Kind]
		if ok && lc.reason("", s) == "" {
			out = append(out, f)
		}
	}
	return out
}
