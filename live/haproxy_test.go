package live

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/algorithms/peers"
	"github.com/ratelim/ratelim/internal/proxytest"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
	"github.com/ratelim/ratelim/store"
)

// The haproxy-req-rate peer model held to a real haproxy: each
// configuration below is one haproxy on loopback with
//
//	stick-table type string len 64 size 100k expire 30s store http_req_rate(P)
//	http-request track-sc0 req.hdr(X-Api-Key)
//	http-request deny deny_status 429 if { sc_http_req_rate(0) gt N }
//
// `ratelim load` sends it a scenario's clients, one API key each (bursts,
// trains under and over N per P, Poisson arrivals at the rate, idle gaps
// of one to two periods), and each request's 200 or 429 is compared with
// the model's verdict, the model fed the instants load sent them at, on
// the wall clock (Origin: the run's start), key by key in the order of
// those instants and Seq.
//
// haproxy writes no log here, so the oracle's instant is the client's:
// haproxy decides at its global_now_ms, the Unix ms read once per event
// loop pass, somewhere between the request's sending and its answer. The
// verdict the model gives at the instant sent is the strict figure. Where
// it differs, the same requests are tried with the model at each ms of
// their flight, from 1 ms before they were sent (a ms boundary between
// two clocks' readings) to 1 ms after the latest answer: a disagreement is
// explained when haproxy did as the model does at one of those instants,
// and logged with it. Requests of one key in flight together form one
// group, compared by the count admitted: haproxy serves them in the order
// their bytes arrive, not their Seq, and any k of them it admitted are the
// model's first k.
//
// What is asserted: every request is answered 200 or 429; per
// configuration, at least 99.5% of requests are decided as the model
// decides at the instant they were sent, and every other one as the model
// at some instant of its flight. The figures are logged.

type haproxyCase struct {
	name     string
	limit    int64         // N of `gt N`
	period   time.Duration // P of http_req_rate(P)
	clients  string        // the scenario's clients, %[1]s their keys' prefix
	duration time.Duration
}

var haproxyCases = []haproxyCase{
	{name: "20-per-10s", limit: 20, period: 10 * time.Second, duration: 11 * time.Second, clients: `
  - {name: burst, api_key: %[1]s-burst, traffic: [{pattern: burst, count: 30, at: 200ms}, {pattern: burst, count: 10, at: 10500ms}]}
  - {name: burst-then-1s, api_key: %[1]s-d, traffic: [{pattern: burst, count: 21, at: 300ms}, {pattern: constant, rate: 1/s, start: 1s}]}
  - {name: over, api_key: %[1]s-over, traffic: {pattern: constant, rate: 5/2s}}
  - {name: under, api_key: %[1]s-under, traffic: {pattern: constant, rate: 3/2s}}
  - {name: at, api_key: %[1]s-at, traffic: {pattern: poisson, rate: 2/s}}
  - {name: p1, api_key: %[1]s-p1, traffic: {pattern: poisson, rate: 4/s}}
  - {name: p2, api_key: %[1]s-p2, traffic: {pattern: poisson, rate: 4/s}}
  - {name: p3, api_key: %[1]s-p3, traffic: {pattern: poisson, rate: 3/s}}`},
	{name: "5-per-2s", limit: 5, period: 2 * time.Second, duration: 11 * time.Second, clients: `
  - {name: gaps, api_key: %[1]s-gaps, traffic: [{pattern: burst, count: 8, at: 200ms}, {pattern: burst, count: 8, at: 2700ms}, {pattern: burst, count: 8, at: 5300ms}, {pattern: burst, count: 8, at: 9800ms}]}
  - {name: over, api_key: %[1]s-over, traffic: {pattern: constant, rate: 4/s}}
  - {name: under, api_key: %[1]s-under, traffic: {pattern: constant, rate: 3/2s}}
  - {name: at, api_key: %[1]s-at, traffic: {pattern: poisson, rate: 5/2s}}
  - {name: p1, api_key: %[1]s-p1, traffic: {pattern: poisson, rate: 3/s}}
  - {name: p2, api_key: %[1]s-p2, traffic: {pattern: poisson, rate: 3/s}}
  - {name: p3, api_key: %[1]s-p3, traffic: {pattern: poisson, rate: 4/s}}
  - {name: idle, api_key: %[1]s-idle, traffic: [{pattern: constant, rate: 5/s, start: 0s, stop: 1500ms}, {pattern: constant, rate: 5/s, start: 4s, stop: 5s}, {pattern: constant, rate: 5/s, start: 8500ms, stop: 10s}]}`},
}

// frontend is c's limit as haproxy reads it, in the order that makes it
// work: count, then deny, then answer.
func (c haproxyCase) frontend() string {
	return fmt.Sprintf(`stick-table type string len 64 size 100k expire 30s store http_req_rate(%dms)
http-request track-sc0 req.hdr(X-Api-Key)
http-request deny deny_status 429 if { sc_http_req_rate(0) gt %d }
http-request return status 200 content-type text/plain string "ok"`, c.period.Milliseconds(), c.limit)
}

// haproxyAgreement counts one configuration's requests by how the model's
// verdicts compare with haproxy's.
type haproxyAgreement struct {
	requests, admitted int
	// atSent is the requests decided as the model decides at the instants
	// they were sent: the strict figure.
	atSent int
	// open is the requests of groups whose verdict the model changes
	// within their flight: those the client's clock does not determine.
	open int
	// explained and unexplained say, for each group haproxy decided
	// otherwise than the model at the instants sent, whether an instant
	// of its flight agrees, and which.
	explained, unexplained []string
}

func TestHAProxyReqRateModelAgreesWithHAProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts two haproxy and sends them 11 s of requests")
	}
	proxytest.NeedHAProxy(t)
	for _, c := range haproxyCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each its own haproxy: 11 s of wall time for both
			h := proxytest.StartHAProxy(t, c.frontend())
			sc := haproxyScenario(t, c)
			res, err := Load(context.Background(), sc, LoadOptions{Targets: []string{h.URL}})
			if err != nil {
				t.Fatal(err)
			}
			a := compareWithHAProxy(t, c, sc, res)
			strict := float64(a.atSent) / float64(a.requests)
			t.Logf("gt %d over http_req_rate(%v): %d requests, %d admitted; decided as the model at the instant sent: %d (%.2f%%); "+
				"%d in groups the model decides differently within their flight; %d groups explained at another instant of their flight, %d not",
				c.limit, c.period, a.requests, a.admitted, a.atSent, 100*strict, a.open, len(a.explained), len(a.unexplained))
			for _, e := range a.explained {
				t.Logf("explained: %s", e)
			}
			for _, e := range a.unexplained {
				t.Errorf("haproxy decided as the model at no instant of the flight: %s", e)
			}
			if a.admitted == 0 || a.admitted == a.requests {
				t.Errorf("%d of %d admitted: the traffic exercised too little", a.admitted, a.requests)
			}
		})
	}
}

// haproxyScenario is c's traffic as a scenario load can send; its limit
// is haproxy's, which load does not read.
func haproxyScenario(t *testing.T, c haproxyCase) sim.Scenario {
	t.Helper()
	text := fmt.Sprintf("name: haproxy-%s\nduration: %s\nseed: 11\nlimit: {algorithm: token-bucket, rate: 10/s, burst: 5}\nclients:%s\n",
		c.name, c.duration, fmt.Sprintf(c.clients, c.name))
	f, err := scenarios.Parse("haproxy-"+c.name+".yaml", []byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return f.Scenario
}

// compareWithHAProxy compares each key's answers with the model's, fed the
// instants the requests were sent, on the wall clock of the run's start.
func compareWithHAProxy(t *testing.T, c haproxyCase, sc sim.Scenario, res *LoadResult) haproxyAgreement {
	t.Helper()
	model, err := peers.NewHAProxyReqRate(algorithms.Params{
		Rate:   algorithms.Rate{N: c.limit, Per: c.period},
		Window: c.period,
		Origin: algorithms.FromTime(res.Started),
	})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string][]sim.Observation{}
	for _, o := range res.Observations {
		if o.NoAnswer {
			t.Fatalf("request %d got no answer", o.Seq)
		}
		byKey[sc.Clients[o.Client].APIKey] = append(byKey[sc.Clients[o.Client].APIKey], o)
	}
	if res.Audit.TransportErrors != 0 {
		t.Fatalf("audit: %+v", res.Audit)
	}
	var a haproxyAgreement
	for _, key := range slices.Sorted(maps.Keys(byKey)) {
		a.add(key, model, byKey[key])
	}
	return a
}

// add compares one key's requests, group by group, with the model's
// verdicts.
func (a *haproxyAgreement) add(key string, model *peers.HAProxyReqRate, obs []sim.Observation) {
	slices.SortFunc(obs, func(x, y sim.Observation) int { return cmp.Or(cmp.Compare(x.At, y.At), cmp.Compare(x.Seq, y.Seq)) })
	var state algorithms.State
	// floor is the last instant the model was fed: haproxy's clock never
	// goes back, so no group is tried earlier than the one before it.
	floor := time.Duration(math.MinInt64)
	for i := 0; i < len(obs); {
		// A group: the requests in flight together with the first.
		j, end := i+1, obs[i].At+obs[i].Latency
		for j < len(obs) && obs[j].At <= end {
			end = max(end, obs[j].At+obs[j].Latency)
			j++
		}
		group := obs[i:j]
		i = j
		admitted := 0
		for _, o := range group {
			if o.Decision.Allowed {
				admitted++
			}
		}
		// run is the group through the model, each request shift after
		// the instant it was sent.
		run := func(shift time.Duration) (algorithms.State, int) {
			s, k := state, 0
			for _, o := range group {
				var d algorithms.Decision
				if s, d = model.Step(s, algorithms.At(o.At+shift), 1); d.Allowed {
					k++
				}
			}
			return s, k
		}
		sSent, kSent := run(0)
		a.requests += len(group)
		a.admitted += admitted
		a.atSent += len(group) - int(abs(int64(admitted-kSent)))
		flight := end - group[0].At + time.Millisecond
		earliest := max(-time.Millisecond, floor-group[0].At)
		open := false
		for shift := earliest; shift <= flight; shift += time.Millisecond {
			if _, k := run(shift); k != kSent {
				open = true
				break
			}
		}
		if open {
			a.open += len(group)
		}
		if admitted == kSent {
			state, floor = sSent, group[len(group)-1].At
			continue
		}
		what := fmt.Sprintf("key %s, %d requests sent at %v…%v (answered by %v): haproxy admitted %d, the model %d at the instants sent",
			key, len(group), group[0].At, group[len(group)-1].At, end, admitted, kSent)
		// Tried from the state before the group, which run reads.
		found := false
		for shift := earliest; shift <= flight && !found; shift += time.Millisecond {
			if s, k := run(shift); k == admitted {
				// Go on from what haproxy did, so that one group's
				// verdict is not counted again in every group after it.
				state, floor, found = s, group[len(group)-1].At+shift, true
				a.explained = append(a.explained, fmt.Sprintf("%s, and %d with haproxy's clock %v later (a ms of global_now_ms within the flight)", what, k, shift))
			}
		}
		if !found {
			state, floor = sSent, group[len(group)-1].At
			a.unexplained = append(a.unexplained, what)
		}
	}
}

// TestHAProxyAgreementExplainsOnlyWhatTheFlightAllows holds the comparison
// itself to two made-up runs of gt 20 over 10 s: a group is explained only
// from the state before it, so haproxy refusing the 20th of 20 requests at
// once (which the model admits at every instant of their flight) is
// unexplained, and a request after 30 at once that haproxy admits at
// 13,333.5 ms, which the model refuses there and admits 1 ms later, is
// explained.
func TestHAProxyAgreementExplainsOnlyWhatTheFlightAllows(t *testing.T) {
	model, err := peers.NewHAProxyReqRate(algorithms.Params{Rate: algorithms.Rate{N: 20, Per: 10 * time.Second}, Window: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	burst := func(n, admitted int) []sim.Observation {
		var obs []sim.Observation
		for i := range n {
			obs = append(obs, sim.Observation{At: 0, Latency: 500 * time.Microsecond, Seq: uint64(i), Decision: store.Decision{Decision: algorithms.Decision{Allowed: i < admitted}}})
		}
		return obs
	}
	var refused haproxyAgreement
	refused.add("k", model, burst(20, 19))
	if len(refused.unexplained) != 1 || len(refused.explained) != 0 {
		t.Errorf("haproxy refusing the 20th of 20: explained %q, unexplained %q; want it unexplained", refused.explained, refused.unexplained)
	}
	late := append(burst(30, 20), sim.Observation{At: 13333500 * time.Microsecond, Latency: 2 * time.Millisecond, Seq: 30, Decision: store.Decision{Decision: algorithms.Decision{Allowed: true}}})
	var edge haproxyAgreement
	edge.add("k", model, late)
	if len(edge.explained) != 1 || len(edge.unexplained) != 0 {
		t.Errorf("admitted 1 ms before the model would: explained %q, unexplained %q; want it explained", edge.explained, edge.unexplained)
	}
}
