package live

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/algorithms/peers"
	"github.com/ratelim/ratelim/internal/proxytest"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// The nginx-limit-req peer model held to a real nginx: each configuration
// below is a location of one nginx on loopback, `ratelim load` sends it a
// scenario's clients (bursts, trains over and under the rate, Poisson
// arrivals), and each request's verdict and delay, as nginx logged them, are
// compared with the model's, fed the instants nginx logged. nginx's own
// clock is the oracle, not the client's: a request reaches limit_req a
// loop-back's latency after it is sent, and at the rate's boundary that
// latency decides.
//
// Two things the log cannot tell are not counted as disagreements, and
// are reported apart:
//   - which of several requests of one key nginx began in the same
//     millisecond won: they share one instant (nginx caches its clock per
//     event-loop pass), so the model admits the first k of them and nginx
//     the k it accepted first. The requests of a millisecond are compared
//     as a group: the count admitted and the delays, sorted.
//   - a group within a millisecond of the rate's boundary: limit_req reads
//     ngx_current_msec, the monotonic clock truncated to the ms, and the
//     log's $msec is the wall clock truncated to the ms, read in the same
//     ngx_time_update (src/core/ngx_times.c); their sub-millisecond phases
//     differ, so a gap of 100 ms in the log can be 99 ms to the limiter.
//     Where the model decides a group differently 1 ms earlier or later,
//     the log does not determine the verdict; the group agrees when nginx
//     did as the model does at one of those three instants.
//
// What is asserted: every request sent is logged, with the verdict load
// saw; every group that the logged millisecond determines is decided as
// the model decides it; every other group as the model at ±1 ms; and no
// delay is shorter than the model's (a loaded machine serves one late,
// never early). The agreement figures are logged.

// nginxZones are the zones the configurations share: a rate in requests a
// second, and one in requests a minute whose thousandths nginx truncates
// (100r/m is 1666 thousandths a second, a request every 600.24 ms).
const nginxZones = `limit_req_zone $http_x_api_key zone=rs:1m rate=10r/s;
limit_req_zone $http_x_api_key zone=rm:1m rate=100r/m;
limit_req_status 429;`

type nginxCase struct {
	path      string // its location
	directive string
	params    algorithms.Params
	clients   string // the scenario's clients, %[1]s their key's prefix
	duration  time.Duration
}

// perSecondClients cross 10r/s every way: bursts at once (a group of one
// millisecond, then the queue), a train at 13/s (not a multiple of the
// rate, whose every gap would sit on the boundary), Poisson over and under
// the rate.
const perSecondClients = `
  - {name: burst, api_key: %[1]s-burst, traffic: [{pattern: burst, count: 15, at: 200ms}, {pattern: burst, count: 12, at: 2200ms}]}
  - {name: train, api_key: %[1]s-train, traffic: {pattern: constant, rate: 13/s}}
  - {name: over, api_key: %[1]s-over, traffic: {pattern: poisson, rate: 16/s}}
  - {name: under, api_key: %[1]s-under, traffic: {pattern: poisson, rate: 7/s}}`

var nginxCases = []nginxCase{
	{path: "/noburst", directive: "limit_req zone=rs;", params: algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}},
		clients: perSecondClients, duration: 3 * time.Second},
	{path: "/burst", directive: "limit_req zone=rs burst=5;", params: algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Burst: 5},
		clients: perSecondClients, duration: 3 * time.Second},
	{path: "/nodelay", directive: "limit_req zone=rs burst=5 nodelay;", params: algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Burst: 5, NoDelay: true},
		clients: perSecondClients, duration: 3 * time.Second},
	{path: "/delay", directive: "limit_req zone=rs burst=5 delay=3;", params: algorithms.Params{Rate: algorithms.Rate{N: 10, Per: time.Second}, Burst: 5, Delay: 3},
		clients: perSecondClients, duration: 3 * time.Second},
	{path: "/perminute", directive: "limit_req zone=rm burst=3 nodelay;", params: algorithms.Params{Rate: algorithms.Rate{N: 100, Per: time.Minute}, Burst: 3, NoDelay: true},
		clients: `
  - {name: burst, api_key: %[1]s-burst, traffic: {pattern: burst, count: 8, at: 200ms}}
  - {name: over, api_key: %[1]s-over, traffic: {pattern: poisson, rate: 4/s}}
  - {name: under, api_key: %[1]s-under, traffic: {pattern: poisson, rate: 70/m}}`, duration: 4 * time.Second},
}

// nginxAgreement counts one configuration's requests by how the model's
// verdicts compare with nginx's.
type nginxAgreement struct {
	requests int
	// atLoggedMs is the requests decided as the model decides at the
	// millisecond nginx logged: the strict figure.
	atLoggedMs int
	// boundary is the requests of groups within 1 ms of a boundary, and
	// boundaryAgreed those of them nginx decided as the model at the
	// logged millisecond ±1.
	boundary, boundaryAgreed int
	// boundaryMisses say, for each group near a boundary that nginx did
	// not decide as the model at the logged ms, what the model does at
	// the instants around it.
	boundaryMisses []string
	// determinedMisses are requests of determined groups decided
	// otherwise: model errors.
	determinedMisses []string
	// delays counts the admitted requests whose delay was compared;
	// early the ones nginx served before the model's delay, worstLate
	// the most one was served after it.
	delays, early int
	worstLate     time.Duration
}

func TestNginxLimitReqModelAgreesWithNginx(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts nginx and sends it 4 s of requests")
	}
	proxytest.NeedNginx(t)
	conf := proxytest.NginxConfig{HTTP: nginxZones, Locations: map[string]string{}}
	for _, c := range nginxCases {
		conf.Locations[c.path] = c.directive
	}
	n := proxytest.StartNginx(t, conf)
	for _, c := range nginxCases {
		t.Run(strings.TrimPrefix(c.path, "/"), func(t *testing.T) {
			// At once: each configuration has keys of its own, and
			// nginx's one worker serves them all as a busy server would.
			t.Parallel()
			sc := nginxScenario(t, c)
			res, err := Load(context.Background(), sc, LoadOptions{Targets: []string{n.URL}, Path: c.path})
			if err != nil {
				t.Fatal(err)
			}
			a := compareWithNginx(t, c, res, loggedAll(t, n, c.path, res))
			t.Logf("%s (%s): %d requests; decided as the model at nginx's logged ms: %d (%.2f%%); "+
				"%d in groups within 1 ms of a boundary, %d of them as the model at ±1 ms; "+
				"delays: %d compared, %d early, worst %v late",
				c.path, c.directive, a.requests, a.atLoggedMs, 100*float64(a.atLoggedMs)/float64(a.requests),
				a.boundary, a.boundaryAgreed, a.delays, a.early, a.worstLate)
			for _, miss := range a.boundaryMisses {
				t.Logf("near a boundary: %s", miss)
			}
			for _, miss := range a.determinedMisses {
				t.Errorf("model and nginx differ where the logged ms determines the verdict: %s", miss)
			}
			if a.boundaryAgreed != a.boundary {
				t.Errorf("%d requests near a boundary decided as the model at no instant within ±1 ms", a.boundary-a.boundaryAgreed)
			}
			if a.early > 0 {
				t.Errorf("%d admitted requests served before the model's delay", a.early)
			}
		})
	}
}

// nginxScenario is c's traffic as a scenario load can send; its limit
// is nginx's, which load does not read.
func nginxScenario(t *testing.T, c nginxCase) sim.Scenario {
	t.Helper()
	key := strings.TrimPrefix(c.path, "/")
	text := fmt.Sprintf("name: nginx-%s\nduration: %s\nseed: 7\nlimit: {algorithm: token-bucket, rate: 10/s, burst: 5}\nclients:%s\n",
		key, c.duration, fmt.Sprintf(c.clients, key))
	f, err := scenarios.Parse("nginx-"+key+".yaml", []byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return f.Scenario
}

// loggedAll reads nginx's access log once it holds every request res
// sent to path (proxytest's AccessLogUntil: a line is written after its
// answer is sent); past the deadline the comparison names what is missing.
func loggedAll(t *testing.T, n *proxytest.Nginx, path string, res *LoadResult) []proxytest.NginxLogLine {
	t.Helper()
	return n.AccessLogUntil(t, func(log []proxytest.NginxLogLine) bool {
		seen := map[string]bool{}
		for _, l := range log {
			// Request ids are a load run's own: another configuration's
			// run numbers its requests alike.
			if l.URI == path {
				seen[l.RequestID] = true
			}
		}
		for _, o := range res.Observations {
			if !seen[strconv.FormatUint(o.Seq, 10)] {
				return false
			}
		}
		return true
	})
}

// compareWithNginx joins res's observations with nginx's log lines by
// request id and compares each key's verdicts with the model's, fed the
// instants nginx logged.
func compareWithNginx(t *testing.T, c nginxCase, res *LoadResult, log []proxytest.NginxLogLine) nginxAgreement {
	t.Helper()
	logged := map[string]proxytest.NginxLogLine{}
	for _, l := range log {
		if l.URI == c.path {
			logged[l.RequestID] = l
		}
	}
	byKey := map[string][]proxytest.NginxLogLine{}
	for _, o := range res.Observations {
		if o.NoAnswer {
			t.Fatalf("request %d got no answer", o.Seq)
		}
		l, ok := logged[strconv.FormatUint(o.Seq, 10)]
		if !ok {
			t.Fatalf("request %d (client %d at %v) is not in nginx's access log", o.Seq, o.Client, o.At)
		}
		if (l.Status == 200) != o.Decision.Allowed || (l.Status != 200 && l.Status != 429) {
			t.Fatalf("request %d: nginx logged %d %s, load saw allowed=%v", o.Seq, l.Status, l.LimitReq, o.Decision.Allowed)
		}
		byKey[l.Key] = append(byKey[l.Key], l)
	}
	if len(logged) != len(res.Observations) {
		t.Fatalf("nginx logged %d requests on %s, load sent %d", len(logged), c.path, len(res.Observations))
	}
	model, err := peers.NewNginxLimitReq(c.params)
	if err != nil {
		t.Fatal(err)
	}
	var a nginxAgreement
	for _, key := range slices.Sorted(maps.Keys(byKey)) {
		a.add(key, model, byKey[key])
	}
	return a
}

// add compares one key's requests, grouped by the millisecond nginx
// began them, with the model's verdicts.
func (a *nginxAgreement) add(key string, model *peers.NginxLimitReq, lines []proxytest.NginxLogLine) {
	slices.SortStableFunc(lines, func(x, y proxytest.NginxLogLine) int { return cmp.Compare(x.StartMs, y.StartMs) })
	base := lines[0].StartMs
	var state algorithms.State
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && lines[j].StartMs == lines[i].StartMs {
			j++
		}
		group := lines[i:j]
		i = j
		var admitted int
		var delays []time.Duration
		for _, l := range group {
			if l.Status == 200 {
				admitted++
				delays = append(delays, time.Duration(l.TimeMs)*time.Millisecond)
			}
		}
		at := func(shift int64) (algorithms.State, int, []time.Duration) {
			now := algorithms.Time((group[0].StartMs - base + shift) * 1000)
			s, k, ds := state, 0, []time.Duration(nil)
			for range group {
				next, d := model.Step(s, now, 1)
				if d.Allowed {
					s, k = next, k+1
					ds = append(ds, d.Delay)
				}
			}
			return s, k, ds
		}
		sLogged, kLogged, dLogged := at(0)
		sEarly, kEarly, dEarly := at(-1)
		sLate, kLate, dLate := at(+1)
		a.requests += len(group)
		a.atLoggedMs += len(group) - int(abs(int64(admitted-kLogged)))
		next, want := sLogged, dLogged
		if kEarly == kLogged && kLate == kLogged {
			if admitted != kLogged {
				a.determinedMisses = append(a.determinedMisses, fmt.Sprintf("key %s at %d ms: nginx admitted %d of %d, the model %d",
					key, group[0].StartMs-base, admitted, len(group), kLogged))
			}
		} else {
			a.boundary += len(group)
			if admitted != kLogged {
				// Explained, or not: the line says which instant agrees.
				a.boundaryMisses = append(a.boundaryMisses, fmt.Sprintf("key %s at %d ms: nginx admitted %d of %d; the model %d at the logged ms, %d 1 ms earlier, %d 1 ms later",
					key, group[0].StartMs-base, admitted, len(group), kLogged, kEarly, kLate))
			}
			switch admitted {
			case kLogged:
				a.boundaryAgreed += len(group)
			case kEarly:
				a.boundaryAgreed += len(group)
				next, want = sEarly, dEarly
			case kLate:
				a.boundaryAgreed += len(group)
				next, want = sLate, dLate
			}
		}
		// Go on from what nginx did, so that one group's verdict is
		// not counted again in every group after it.
		state = next
		if len(want) == len(delays) {
			slices.Sort(delays)
			slices.Sort(want)
			for k := range delays {
				a.delays++
				// nginx's delay timer is in whole ms from the ms it
				// began the request; its log's ms may be 1 ms off.
				if delays[k] < want[k]-time.Millisecond {
					a.early++
				}
				a.worstLate = max(a.worstLate, delays[k]-want[k])
			}
		}
	}
}
