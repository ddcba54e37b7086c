package sim

// Findings about what the store and the fleet did: requests no one
// answered, a store that could not be reached, leases a crash leaked,
// load the shedder turned away.

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/route"
)

const (
	// NoAnswer: requests of a live run got no HTTP answer (a refused
	// connection, a reset, a timeout): no limiter decided them, and the
	// run's other figures are of the rest. Value: the requests
	// unanswered.
	FindingNoAnswer FindingKind = "no-answer"
	// FailedClosed: the store was unreachable and the fail-closed policy
	// refused requests, some from clients the limiter would have admitted
	// in full. Value: the requests refused so.
	FindingFailedClosed FindingKind = "failed-closed"
	// FailedOpen: the store was unreachable and the fail-open policy
	// admitted requests unchecked. Value: the requests admitted so.
	FindingFailedOpen FindingKind = "failed-open"
	// Leaked: a server crashed mid-request holding a concurrency limit's
	// leases, or its requests ended while an outage or a partition kept
	// it from the store, and nothing gave the leases back until they
	// expired: slots counted in flight though nothing ran, and requests
	// refused that an exact limiter without the fault admitted. Value:
	// those requests.
	FindingLeaked FindingKind = "leaked"
	// Shed: the fleet's load shedder turned requests away with 503 for
	// want of capacity, the lower priorities first: whose, and that the
	// critical ones were kept. Value: the requests shed.
	FindingShed FindingKind = "shed"
)

// noAnswerFinding says how many of a live run's requests got no HTTP
// answer, which its other figures leave out.
func noAnswerFinding(t KeyResult) Finding {
	text := fmt.Sprintf("%s of %s requests got no HTTP answer (not counted as rejected): the other figures are of the %s answered",
		words.Thousands(t.NoAnswer), words.Thousands(t.Sent), words.Thousands(t.Sent-t.NoAnswer))
	if t.NoAnswer == t.Sent {
		text = fmt.Sprintf("none of %s requests got an HTTP answer: the run says nothing about a limiter", words.Thousands(t.Sent))
	}
	return Finding{Kind: FindingNoAnswer, Value: float64(t.NoAnswer), Text: text}
}

// failedClosed is the requests the fail-closed policy refused while the
// store could not be reached, and those of them whose clients were under
// their limit.
func failedClosed(r *Result, t KeyResult) (Finding, bool) {
	if t.FailedClosed == 0 {
		return Finding{}, false
	}
	var entitled []string
	var lost int64
	for _, c := range r.Clients {
		// Under its limit: an exact limiter would have admitted every
		// first try.
		if c.FailedClosed > 0 && c.IdealAllowed >= c.Sent-c.Retries {
			entitled = append(entitled, c.Name)
			lost += c.FailedClosed
		}
	}
	text := fmt.Sprintf("%s failed closed %s", requests(t.FailedClosed), outageText(r))
	if len(entitled) > 0 {
		text += fmt.Sprintf(": %s, under %s limit, lost %s", nameList(entitled), their(len(entitled)), words.Thousands(lost))
	}
	text += breakerText(r)
	return Finding{Kind: FindingFailedClosed, Value: float64(t.FailedClosed), Text: text}, true
}

// failedOpen is the requests the fail-open policy admitted unchecked
// while the store could not be reached, and whose were the most.
func failedOpen(r *Result, t KeyResult) (Finding, bool) {
	if t.FailedOpen == 0 {
		return Finding{}, false
	}
	top := slices.MaxFunc(r.Clients, func(a, b ClientResult) int { return cmp.Compare(a.FailedOpen, b.FailedOpen) })
	text := fmt.Sprintf("%s failed open, admitted unchecked %s", requests(t.FailedOpen), outageText(r))
	if top.FailedOpen < t.FailedOpen {
		text += fmt.Sprintf("; %s were %s's", words.Thousands(top.FailedOpen), top.Name)
	}
	text += breakerText(r)
	return Finding{Kind: FindingFailedOpen, Client: top.Name, Value: float64(t.FailedOpen), Text: text}, true
}

// breakerText is what the circuit breakers did for the requests a fail
// policy answered: "; the circuit breakers, open 4 times, answered 1,100
// of them at once instead of waiting 100ms"; "" with none or when they
// never opened.
func breakerText(r *Result) string {
	b := r.Breaker
	if b == nil || b.ShortCircuited == 0 {
		return ""
	}
	wait := ""
	if r.TimeoutMs > 0 {
		wait = fmt.Sprintf(" instead of waiting %gms", r.TimeoutMs)
	}
	return fmt.Sprintf("; the circuit breakers, opened %s, answered %s of them at once%s", words.Count(b.Opened, "time", "times"), words.Thousands(b.ShortCircuited), wait)
}

// outageText names when the store could not be reached: "while the store
// was down (10–20s)".
func outageText(r *Result) string {
	var spans []string
	for _, f := range r.Faults {
		if f.Kind == string(Outage) || f.Kind == string(Partition) {
			spans = append(spans, fmt.Sprintf("%g–%gs", f.StartS, f.EndS))
		}
	}
	cas := ""
	if p := PeerOf(r.Algorithm); p != nil && p.Write == "cas" && r.Topology == string(Racy) {
		cas = fmt.Sprintf("when %s's compare-and-swap found the key changed %d times in a row, servers contending for it", r.Algorithm, route.MaxCASAttempts)
	}
	switch {
	case len(spans) == 0 && cas != "":
		return cas
	case len(spans) == 0:
		return "while the store was unreachable"
	case cas != "":
		return "while the store was unreachable (" + strings.Join(spans, ", ") + ") or " + cas
	}
	return "while the store was unreachable (" + strings.Join(spans, ", ") + ")"
}

// leakedFinding is the fault whose leases cost the most: the requests an
// exact limiter without it admitted and the run refused, and whose.
func leakedFinding(r *Result) (Finding, bool) {
	var worst *FaultSpan
	for i := range r.Faults {
		if f := &r.Faults[i]; f.Leaked > 0 && (worst == nil || f.Leaked > worst.Leaked) {
			worst = f
		}
	}
	if worst == nil {
		return Finding{}, false
	}
	var denied int64
	top := -1
	for i, c := range r.Clients {
		denied += c.FalseDenies
		if c.FalseDenies > 0 && (top < 0 || c.FalseDenies > r.Clients[top].FalseDenies) {
			top = i
		}
	}
	if top < 0 {
		return Finding{}, false
	}
	fault := fmt.Sprintf("a crash at %gs (%s)", worst.StartS, worst.Detail)
	switch FaultKind(worst.Kind) {
	case Outage:
		fault = fmt.Sprintf("an outage at %gs", worst.StartS)
	case Partition:
		fault = fmt.Sprintf("a partition at %gs (%s)", worst.StartS, worst.Detail)
	}
	text := fmt.Sprintf("%s left %s held that no request used until they expired at %s: %s refused that an exact limiter without it admitted, %s of them %s",
		fault, words.Count(worst.Leaked, "lease", "leases"), words.Duration(time.Duration(worst.LeakedUntilS*float64(time.Second)).Round(time.Millisecond)),
		requests(denied), words.Thousands(r.Clients[top].FalseDenies), possessive(r.Clients[top].Name))
	return Finding{Kind: FindingLeaked, Client: r.Clients[top].Name, Value: float64(denied), Text: text}, true
}

// shedFinding says what the load shedder turned away, by priority, and
// whom it spared.
func shedFinding(r *Result) (Finding, bool) {
	if r.Shedder == nil {
		return Finding{}, false
	}
	byPriority := map[string]int64{}
	sent := map[string]int64{}
	top := -1
	var total int64
	for i, c := range r.Clients {
		byPriority[c.Priority] += c.Shed
		sent[c.Priority] += c.Sent
		total += c.Shed
		if c.Shed > 0 && (top < 0 || c.Shed > r.Clients[top].Shed) {
			top = i
		}
	}
	if total == 0 {
		return Finding{}, false
	}
	var parts []string
	for _, p := range slices.Backward([]string{"critical", "normal", "sheddable"}) {
		if sent[p] > 0 {
			parts = append(parts, fmt.Sprintf("%s of %s %s", words.Thousands(byPriority[p]), words.Thousands(sent[p]), p))
		}
	}
	text := fmt.Sprintf("the load shedder (%s a second) turned away %s with 503, the lower priorities first: %s; the most from %s",
		words.Thousands(int64(r.Shedder.CapacityPerS)), requests(total), strings.Join(parts, ", "), r.Clients[top].Name)
	return Finding{Kind: FindingShed, Client: r.Clients[top].Name, Value: float64(total), Text: text}, true
}

// possessive is name's: "batch-job's", "reports'".
func possessive(name string) string {
	if strings.HasSuffix(name, "s") {
		return name + "'"
	}
	return name + "'s"
}
