package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/internal/proxytest"
	"github.com/ratelim/ratelim/live"
	"github.com/ratelim/ratelim/live/livetest"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/sim"
)

// The live checks below send at most 2 s of traffic each, to a fleet of
// this process on loopback. Their expectations bound what any run of the
// traffic observes, however late a loaded machine sends or answers: the
// polite client's 4 requests are fewer than its key's burst of 5, and the
// hammer's 200 in 2 s are more than a bucket of 5 refilling at 10/s admits
// in the 10 s a request may wait for its answer.
const targetScenario = `name: target-check
duration: 2s
servers: 3
limit: {algorithm: token-bucket, rate: 10/s, burst: 5}
topology: {kind: shared}
clients:
  - name: hammer
    api_key: h
    traffic: {pattern: constant, rate: 100/s}
  - name: polite
    api_key: p
    traffic: {pattern: constant, rate: 2/s}
expect:
  - {client: polite, rejected: {max: 0}}
  - {client: hammer, rejected: {min: 1}}
  - {client: hammer, ideal_allowed: {min: 5}}
`

// startTargetFleet starts a 'ratelim serve' fleet of sc's text in this
// process, on free loopback ports, with servers servers (not the file's:
// a live check's targets are what it is given), stopped with the test.
func startTargetFleet(t *testing.T, text string, servers int) *live.Fleet {
	t.Helper()
	f, err := scenarios.Parse("fleet.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	sc := f.Scenario
	sc.Servers = servers
	return livetest.Serve(t, live.ServeOptions{Scenario: sc})
}

// A live check of a fleet: the expectations that hold pass, those it
// cannot observe are skipped, each named with its reason in the text and
// in the JUnit report, a scenario with faults is skipped whole (nothing
// sent), and it exits 0. Then an expectation that the same traffic
// cannot meet fails (exit 1), and a malformed file is exit 2, the JUnit
// report written each time.
func TestCheckTargetPassesSkipsAndFails(t *testing.T) {
	fleet := startTargetFleet(t, targetScenario, 2)
	targets := strings.Join(fleet.URLs, ",")
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good.yaml", targetScenario+`  - {client: hammer, failed_open: {max: 0}}
  - {finding: copies-diverged}
  - {client: hammer, allowed: {max: 1}, with: {algorithm: gcra}}
`)
	faulty := write("faulty.yaml", strings.Replace(targetScenario, "expect:\n", "faults:\n  - {kind: outage, start: 500ms, end: 1s}\nexpect:\n", 1))
	report := filepath.Join(dir, "report.xml")

	code, out, errOut := runArgs("check", good, faulty, "--target", targets, "--junit", report)
	if code != exitOK {
		t.Fatalf("exit %d, want 0\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"ok   " + good + ":14: polite rejected <= 0 (got 0)",
		"ok   " + good + ":15: hammer rejected >= 1",
		"ok   " + good + ":16: hammer ideal_allowed >= 5",
		"skip " + good + ":17: hammer failed_open <= 0 not checked: failed_open: counted from X-RateLimit-Decided-By",
		"skip " + good + ":18: finding copies-diverged not checked: finding copies-diverged: the store's copies",
		"skip " + good + ":19: hammer allowed <= 1 with algorithm=gcra not checked: with: algorithm: it changes the limiter's algorithm",
		"skip " + faulty + ":16: polite rejected <= 0 not checked: its faults (outage 500ms–1s) cannot be applied to the targets",
		"3 passed, 0 failed, 6 skipped\n",
	} {
		if !strings.Contains(unwrapSkips(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	doc := readJUnit(t, report)
	if doc.Tests != 9 || doc.Failures != 0 || doc.Errors != 0 || doc.Skipped != 6 || len(doc.Suites) != 2 {
		t.Fatalf("JUnit %d tests, %d failures, %d errors, %d skipped in %d suites; want 9, 0, 0, 6 in 2", doc.Tests, doc.Failures, doc.Errors, doc.Skipped, len(doc.Suites))
	}
	skipped := map[string]string{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			if c.Skipped != nil {
				skipped[s.Name+": "+c.Name] = c.Skipped.Message
			}
		}
	}
	if why := skipped[good+": hammer failed_open <= 0"]; !strings.Contains(why, "X-RateLimit-Decided-By") {
		t.Errorf("JUnit: failed_open skipped for %q, want the header named; skipped cases %v", why, skipped)
	}
	if why := skipped[faulty+": hammer rejected >= 1"]; !strings.Contains(why, "outage 500ms–1s") {
		t.Errorf("JUnit: the faulty file's case skipped for %q, want its outage named", why)
	}

	// The same traffic cannot keep the hammer unrefused.
	failing := write("failing.yaml", targetScenario+"  - {client: hammer, rejected: {max: 0}}\n")
	code, out, errOut = runArgs("check", failing, "--target", targets, "--junit", report, "--format", "json")
	if code != exitFailed {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	var res struct {
		Passed, Failed, Errors, Skipped int
		Results                         []checkLine
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("--format json: %v\n%s", err, out)
	}
	last := res.Results[len(res.Results)-1]
	if res.Passed != 3 || res.Failed != 1 || res.Skipped != 0 || last.Line != 17 || last.OK || last.Got < 1 {
		t.Errorf("json %+v, want 3 passed and line 17 failed with some rejected", res)
	}
	if doc := readJUnit(t, report); doc.Failures != 1 || doc.Tests != 4 {
		t.Errorf("JUnit %d tests %d failures, want 4 and 1", doc.Tests, doc.Failures)
	}

	// A malformed file sends nothing, and is an errored case.
	broken := write("broken.yaml", "name: broken\nduration: 2s\nclients: [\n")
	code, out, errOut = runArgs("check", broken, "--target", targets, "--junit", report)
	if code != exitBadInput || !strings.Contains(out, "ERROR "+broken) {
		t.Fatalf("exit %d, want 2 and the file's ERROR\n%s%s", code, out, errOut)
	}
	if doc := readJUnit(t, report); doc.Errors != 1 {
		t.Errorf("JUnit %d errors, want 1", doc.Errors)
	}
}

// With --control and --token, a scenario's outage is applied to the
// 'ratelim serve' fleet the targets are, and its fail-closed answers
// (which httplimit's servers say) are checked rather than skipped.
func TestCheckTargetAppliesFaultsThroughControl(t *testing.T) {
	text := outageLive + `expect:
  - {client: steady, failed_closed: {min: 1}}
  - {finding: failed-closed}
  - {client: steady, rejected: {min: 1}}
`
	fleet := startTargetFleet(t, text, 2)
	path := writeScenario(t, "outage.yaml", text)
	code, out, errOut := runArgs("check", path, "--target", strings.Join(fleet.URLs, ","), "--control", fleet.ControlURL, "--token", fleet.Token)
	// The outage is a second of wall time: some requests land in it
	// however late a loaded machine sends them.
	if code != exitOK || !strings.Contains(out, "3 passed, 0 failed\n") {
		t.Fatalf("exit %d, want 0 and all 3 passed\n%s%s", code, out, errOut)
	}
}

// A target nothing listens on is found before any run (a TCP connect, no
// request): exit 4 naming it, no run made, and the JUnit report says so
// for each.
func TestCheckTargetUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	short := strings.Replace(targetScenario, "duration: 2s", "duration: 300ms", 1)
	a, b := writeScenario(t, "a.yaml", short), writeScenario(t, "b.yaml", short)
	report := filepath.Join(t.TempDir(), "report.xml")
	code, out, errOut := runArgs("check", a, b, "--target", closed, "--junit", report)
	if code != exitInternal {
		t.Fatalf("exit %d, want 4\n%s%s", code, out, errOut)
	}
	refused := ": --target " + closed + ": not reachable, nothing was sent: dial tcp " + strings.TrimPrefix(closed, "http://") + ": connect: connection refused (want a server listening there)"
	for _, want := range []string{"ERROR " + a + refused, "ERROR " + b + refused, "0 passed, 0 failed, 2 could not be checked"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if doc := readJUnit(t, report); doc.Errors != 2 {
		t.Errorf("JUnit %d errors, want 2", doc.Errors)
	}
}

// Interrupted during a live run (the target's first request cancels the
// check, as ctrl-c would), check exits 130 and writes nothing: no lines,
// no JUnit report.
func TestCheckTargetInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { cancel() }))
	defer srv.Close()
	report := filepath.Join(t.TempDir(), "report.xml")
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"check", writeScenario(t, "a.yaml", targetScenario), "--target", srv.URL, "--junit", report},
		streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	if code != exitInterrupted || out.Len() != 0 {
		t.Errorf("exit %d, stdout %q; want 130 and nothing", code, out.String())
	}
	if _, err := os.Stat(report); !os.IsNotExist(err) {
		t.Errorf("a JUnit report was written (%v), want none", err)
	}
}

// A live check of a scenario with faults, without --control, skips each
// expectation saying why, and sends nothing (the target is a port no one
// listens on): its lines and its JUnit report, as goldens. Nothing was
// checked, which is exit 1, said on standard error.
func TestCheckTargetSkipsGolden(t *testing.T) {
	report := filepath.Join(t.TempDir(), "report.xml")
	code, out, errOut := runArgs("check", "store-outage", "--target", "http://127.0.0.1:1", "--junit", report)
	if code != exitFailed || errOut != "ratelim: nothing checked: every expectation was skipped\n" {
		t.Fatalf("exit %d, stderr %q; want 1 and nothing checked", code, errOut)
	}
	golden(t, "check-target-store-outage.txt", []byte(out))
	xml, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "check-target-store-outage.xml", xml)
}

// The exact-limiter figures a live check checks (ideal_allowed,
// false_allows...) are one exact limiter of the scenario's limit fed the
// requests as they were observed: a token bucket stepped here over a load
// run's observations, each key's in the order the run recorded them (at
// the instant the server decided, clamped into the run as sim.Replay
// clamps it), admits for each client what the run's Result says.
func TestLiveIdealIsTheExactLimiterOnTheObservedRequests(t *testing.T) {
	fleet := startTargetFleet(t, targetScenario, 2)
	f, err := scenarios.Parse("target.yaml", []byte(targetScenario))
	if err != nil {
		t.Fatal(err)
	}
	sc := f.Scenario
	res, err := live.Load(context.Background(), sc, live.LoadOptions{Targets: fleet.URLs})
	if err != nil {
		t.Fatal(err)
	}
	exact, err := algorithms.NewTokenBucket(sc.Limit.Params.Rate, sc.Limit.Params.Burst)
	if err != nil {
		t.Fatal(err)
	}
	obs := slices.Clone(res.Observations)
	slices.SortStableFunc(obs, func(a, b sim.Observation) int {
		return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(a.Seq, b.Seq))
	})
	last := algorithms.At(sc.Duration) - 1
	states := make([]algorithms.State, len(sc.Clients)) // a key per client here
	ideal := make([]int64, len(sc.Clients))
	for _, o := range obs {
		if o.NoAnswer {
			continue
		}
		var d algorithms.Decision
		states[o.Client], d = exact.Step(states[o.Client], min(max(algorithms.At(o.At), 0), last), max(o.Cost, 1))
		if d.Allowed {
			ideal[o.Client]++
		}
	}
	for i, c := range res.Result.Clients {
		if c.IdealAllowed != ideal[i] || c.Sent == 0 {
			t.Errorf("%s: ideal_allowed %d of %d sent, a token bucket on the observations admits %d", c.Name, c.IdealAllowed, c.Sent, ideal[i])
		}
	}
}

// A live check of a service that is not ratelim's: a real nginx on
// loopback with limit_req keyed by X-API-Key. What its answers show is
// checked; what only ratelim's middleware would say is skipped.
func TestCheckTargetNginx(t *testing.T) {
	proxytest.NeedNginx(t)
	n := proxytest.StartNginx(t, proxytest.NginxConfig{
		HTTP:      "limit_req_zone $http_x_api_key zone=z:1m rate=10r/s;\nlimit_req_status 429;",
		Locations: map[string]string{"/api": "limit_req zone=z burst=5 nodelay;"},
	})
	text := strings.Replace(targetScenario, "limit: {algorithm: token-bucket, rate: 10/s, burst: 5}",
		"limit: {algorithm: nginx-limit-req, rate: 10/s, burst: 5, nodelay: true, key: api-key}", 1) +
		"  - {client: hammer, failed_closed: {max: 0}}\n"
	code, out, errOut := runArgs("check", writeScenario(t, "nginx.yaml", text), "--target", n.URL)
	if code != exitOK || !strings.Contains(out, "3 passed, 0 failed, 1 skipped\n") || !strings.Contains(out, "skip ") {
		t.Fatalf("exit %d, want 0 with 3 passed and failed_closed skipped\n%s%s", code, out, errOut)
	}
}

// A --target with no URL in it (an unset variable in a CI script:
// --target "$URL") is a flag error, exit 2, never a simulated check that
// passes.
func TestCheckTargetEmptyIsAFlagError(t *testing.T) {
	path := writeScenario(t, "a.yaml", targetScenario)
	for _, target := range []string{"", " ", ",", " , "} {
		code, out, errOut := runArgs("check", path, "--target", target)
		if code != exitBadInput || !strings.Contains(errOut, "--target: no URL given (want ") || strings.Contains(out, "ok ") {
			t.Errorf("--target %q: exit %d, want 2 and the flag named\n%s%s", target, code, out, errOut)
		}
	}
}

// More targets than a scenario may have servers is the flag's error,
// once, exit 2; a scenario the targets' count makes invalid (a partition
// naming server 2 of 2) is its file's ERROR, named once.
func TestCheckTargetCountAndRefusalNamedOnce(t *testing.T) {
	path := writeScenario(t, "short.yaml", targetScenario)
	many := strings.TrimSuffix(strings.Repeat("http://127.0.0.1:1,", scenarios.MaxServers+1), ",")
	code, out, errOut := runArgs("check", path, "--target", many)
	if code != exitBadInput || !strings.Contains(errOut, "ratelim: --target: 1025 URLs (want at most 1024") || strings.Contains(out+errOut, "short.yaml") {
		t.Errorf("1025 targets: exit %d, want 2 and the flag's error alone\n%s%s", code, out, errOut)
	}
	partitioned := strings.Replace(targetScenario, "expect:\n", "faults:\n  - {kind: partition, start: 500ms, end: 1s, groups: [[0], [1, 2]]}\nexpect:\n", 1)
	path = writeScenario(t, "part.yaml", partitioned)
	code, out, errOut = runArgs("check", path, "--target", "http://127.0.0.1:1,http://127.0.0.1:2", "--control", "http://127.0.0.1:1", "--token", "x")
	if code != exitBadInput || strings.Count(out, path) != 1 || !strings.Contains(out, "ERROR "+path+": ") {
		t.Errorf("a partition of 3 servers on 2 targets: exit %d, want 2 and the file named once\n%s%s", code, out, errOut)
	}
}

// A file's name is input: its ERROR line and the summary on standard
// error show it escaped, simulated and live, never a terminal escape.
func TestCheckErrorLinesEscapeNames(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		path := filepath.Join(dir, "evil\x1b[31m.yaml")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	path := write("name: broken\nduration: 2s\nclients: [\n")
	code, out, errOut := runArgs("check", path)
	if code != exitBadInput || strings.Contains(out+errOut, "\x1b") || !strings.Contains(out, `ERROR `+dir+`/evil\x1b[31m.yaml`) {
		t.Errorf("simulated: exit %d, want 2 and the name escaped\n%q\n%q", code, out, errOut)
	}
	write(strings.Replace(targetScenario, "expect:\n", "faults:\n  - {kind: partition, start: 500ms, end: 1s, groups: [[0], [1, 2]]}\nexpect:\n", 1))
	code, out, errOut = runArgs("check", path, "--target", "http://127.0.0.1:1,http://127.0.0.1:2", "--control", "http://127.0.0.1:1", "--token", "x")
	if code != exitBadInput || strings.Contains(out+errOut, "\x1b") || !strings.Contains(out, `ERROR `+dir+`/evil\x1b[31m.yaml: `) {
		t.Errorf("live: exit %d, want 2 and the name escaped\n%q\n%q", code, out, errOut)
	}
}

// A check refused for its flags (exit 2) still writes its JUnit report
// when --junit names a usable path: one errored case that says why.
func TestCheckFlagErrorWritesJUnit(t *testing.T) {
	path := writeScenario(t, "a.yaml", targetScenario)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{path, "--target", "http://example.com"}, "--target: example.com is not a loopback address"},
		{[]string{path, "--target", "ftp://127.0.0.1/x"}, `--target: "ftp://127.0.0.1/x" is not an http URL`},
		{[]string{path, "--target", "http://127.0.0.1:1", "--max-requests", "0"}, "--max-requests"},
		{[]string{path, "--format", "bad"}, "--format"},
		{nil, "nothing to check"},
	} {
		report := filepath.Join(t.TempDir(), "report.xml")
		code, out, errOut := runArgs(append(append([]string{"check"}, tt.args...), "--junit", report)...)
		if code != exitBadInput {
			t.Errorf("%v: exit %d, want 2\n%s%s", tt.args, code, out, errOut)
			continue
		}
		if _, err := os.Stat(report); err != nil {
			t.Errorf("%v: no JUnit report: %v", tt.args, err)
			continue
		}
		doc := readJUnit(t, report)
		if doc.Tests != 1 || doc.Errors != 1 || len(doc.Suites) != 1 || doc.Suites[0].Cases[0].Error == nil ||
			!strings.Contains(doc.Suites[0].Cases[0].Error.Message, tt.want) {
			t.Errorf("%v: JUnit %+v, want one errored case saying %q", tt.args, doc, tt.want)
		}
	}
	// --junit - with --format json is the flags' error: no report, as
	// standard output is json's.
	code, out, _ := runArgs("check", path, "--format", "json", "--junit", "-")
	if code != exitBadInput || strings.Contains(out, "<testsuites") {
		t.Errorf("--junit - --format json: exit %d, stdout %q; want 2 and no report", code, out)
	}
}

// A live check of a concurrency limit against a 'ratelim serve' fleet of
// the same file: the exact limiter gives each admitted request's lease
// back when it was served, as the simulator does, so it admits what the
// fleet did (one client at 20/s, 50 ms each, never 5 in flight). It kept
// every lease before: ideal_allowed 5, and the rest false allows.
func TestCheckTargetConcurrencyExactFigures(t *testing.T) {
	text := `name: in-flight
duration: 2s
limit: {algorithm: concurrency, max_in_flight: 5, lease_ttl: 30s}
topology: {kind: shared}
clients:
  - name: c
    api_key: c
    service: 50ms
    traffic: {pattern: constant, rate: 20/s}
expect:
  - {client: c, false_allows: {max: 0}}
  - {client: c, ideal_allowed: {min: 20}}
`
	fleet := startTargetFleet(t, text, 1)
	code, out, errOut := runArgs("check", writeScenario(t, "in-flight.yaml", text), "--target", fleet.URLs[0])
	if code != exitOK || !strings.Contains(out, "2 passed, 0 failed\n") {
		t.Fatalf("exit %d, want 0 and both passed\n%s%s", code, out, errOut)
	}
}

// A target that answers what no rate limit answers (a 404 everywhere, as
// a wrong path gets; a redirect) is an error of the run, exit 4, never a
// check passed on refusals that were not a limiter's; each run's audit is
// printed, as load prints it. --path names what is requested.
func TestCheckTargetNotLimitingAnswersAreErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/items":
			w.WriteHeader(http.StatusOK)
		case "/moved":
			http.Redirect(w, r, "/v1/items", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	short := strings.Replace(targetScenario, "duration: 2s", "duration: 300ms", 1) + "  - {client: hammer, allowed: {max: 125}}\n"
	path := writeScenario(t, "short.yaml", short)
	report := filepath.Join(t.TempDir(), "report.xml")
	code, out, errOut := runArgs("check", path, "--target", srv.URL, "--junit", report)
	if code != exitInternal {
		t.Fatalf("404 everywhere: exit %d, want 4\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"run  " + path + ": ", "headers: ", "(among the rejected)", "ERROR " + path + ": ", "neither 2xx, 429 nor 503 (the first 404), which no rate limit answers: is the path right? (--path, /api sent)"} {
		if !strings.Contains(out, want) {
			t.Errorf("404 everywhere: output lacks %q\n%s", want, out)
		}
	}
	if doc := readJUnit(t, report); doc.Errors != 1 || doc.Tests != 1 {
		t.Errorf("404 everywhere: JUnit %d tests, %d errors; want the run errored", doc.Tests, doc.Errors)
	}
	code, out, errOut = runArgs("check", path, "--target", srv.URL, "--path", "/moved")
	if code != exitInternal || !strings.Contains(out, "(the first 302)") {
		t.Errorf("redirected: exit %d, want 4 and the 302 named\n%s%s", code, out, errOut)
	}
	code, out, errOut = runArgs("check", path, "--target", srv.URL, "--path", "/v1/items")
	if code != exitFailed || !strings.Contains(out, "hammer rejected >= 1 (got 0)") {
		t.Errorf("--path /v1/items: exit %d, want 1 (nothing limits it)\n%s%s", code, out, errOut)
	}
	for _, bad := range []string{"api", "/a?b=1", "/a#b", "/a\nb", "/" + strings.Repeat("a", live.MaxPathLen)} {
		code, out, errOut = runArgs("check", path, "--target", srv.URL, "--path", bad)
		if code != exitBadInput || !strings.Contains(errOut, "--path: ") {
			t.Errorf("--path %q: exit %d, want 2 and the flag named\n%s%s", bad, code, out, errOut)
		}
		code, out, errOut = runArgs("load", path, "--target", srv.URL, "--path", bad)
		if code != exitBadInput || !strings.Contains(errOut, "--path: ") {
			t.Errorf("load --path %q: exit %d, want 2 and the flag named\n%s%s", bad, code, out, errOut)
		}
	}
	if code, _, errOut := runArgs("check", path, "--path", "/api"); code != exitBadInput || !strings.Contains(errOut, "--path: only for a live check") {
		t.Errorf("--path without --target: exit %d, want 2\n%s", code, errOut)
	}
}

// queued is a leaky bucket's queue, which a live run tells from a slow
// handler only by X-RateLimit-Delay: against a token bucket whose
// requests take 300 ms, a file that says leaky-bucket is not found
// queued (skipped without --httplimit-headers; failed with it, as no
// answer said it waited). Against a leaky bucket that queues, with the
// headers, it holds. costly is skipped without them too.
func TestCheckTargetQueuedIsToldNotLatency(t *testing.T) {
	leaky := `name: queue
duration: 1s
limit: {algorithm: leaky-bucket, rate: 5/s, burst: 10}
topology: {kind: shared}
clients:
  - name: c
    api_key: c
    service: 300ms
    traffic: {pattern: constant, rate: 20/s}
expect:
  - {client: c, sent: {min: 1}}
  - {finding: queued}
  - {finding: costly}
`
	path := writeScenario(t, "queue.yaml", leaky)
	bucket := startTargetFleet(t, strings.Replace(leaky, "leaky-bucket", "token-bucket", 1), 1)
	code, out, errOut := runArgs("check", path, "--target", bucket.URLs[0])
	if code != exitOK || !strings.Contains(unwrapSkips(out), "skip "+path+":12: finding queued not checked: finding queued: a leaky bucket's queue is told from a slow handler only by X-RateLimit-Delay") ||
		!strings.Contains(unwrapSkips(out), "skip "+path+":13: finding costly not checked: finding costly: it says the refusals came of the cost asked in X-Ratelim-Cost") {
		t.Errorf("a slow token bucket: exit %d, want 0 and queued and costly skipped\n%s%s", code, out, errOut)
	}
	code, out, errOut = runArgs("check", path, "--target", bucket.URLs[0], "--httplimit-headers")
	if code != exitFailed || !strings.Contains(out, "FAIL "+path+":12: finding queued") {
		t.Errorf("a slow token bucket, told: exit %d, want 1 and queued failed\n%s%s", code, out, errOut)
	}
	queue := startTargetFleet(t, leaky, 1)
	code, out, errOut = runArgs("check", path, "--target", queue.URLs[0], "--httplimit-headers")
	if !strings.Contains(out, "ok   "+path+":12: finding queued") {
		t.Errorf("a leaky bucket, told: exit %d, want queued found\n%s%s", code, out, errOut)
	}
}

// A scenario the targets cannot play is found before anything is sent:
// a regions topology is skipped with the reason (its clients' regions
// cannot be placed on the targets), and one the targets' count makes
// invalid (a crash of server 2 of 2) is refused, exit 2, naming --target,
// with no request sent to the target.
func TestCheckTargetInvalidWithTheTargetsBeforeSending(t *testing.T) {
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got.Add(1) }))
	defer srv.Close()
	regions := `name: regions
duration: 300ms
limit: {algorithm: token-bucket, rate: 10/s, burst: 5, key: api-key}
topology:
  kind: regions
  regions:
    - {name: us, servers: 1}
    - {name: eu, servers: 1}
clients:
  - {name: a, api_key: a, region: us, traffic: {pattern: constant, rate: 20/s}}
expect:
  - {client: a, allowed: {max: 100}}
`
	crash := strings.Replace(targetScenario, "duration: 2s", "duration: 300ms", 1)
	crash = strings.Replace(crash, "expect:\n", "faults:\n  - {kind: crash, servers: [2], start: 100ms, end: 200ms}\nexpect:\n", 1)
	r, c := writeScenario(t, "regions.yaml", regions), writeScenario(t, "crash.yaml", crash)
	code, out, errOut := runArgs("check", r, "--target", srv.URL)
	if code != exitFailed || !strings.Contains(unwrapSkips(out), "skip "+r+":12: a allowed <= 100 not checked: its topology is regions") || got.Load() != 0 {
		t.Errorf("regions: exit %d, %d requests; want 1 (nothing checked), skipped, none sent\n%s%s", code, got.Load(), out, errOut)
	}
	code, out, errOut = runArgs("check", c, "--target", srv.URL+","+srv.URL, "--control", "http://127.0.0.1:1", "--token", "x")
	if code != exitBadInput || !strings.Contains(out, "ERROR "+c+": --target: ") || got.Load() != 0 {
		t.Errorf("a crash of server 2 of 2: exit %d, %d requests; want 2, --target named, none sent\n%s%s", code, got.Load(), out, errOut)
	}
}

// unwrapSkips joins each skip line's reason, wrapped under it at 80
// columns, back onto it: "skip FILE:LINE: CLAIM not checked: REASON".
func unwrapSkips(out string) string {
	return strings.ReplaceAll(out, "\n  ", " ")
}
