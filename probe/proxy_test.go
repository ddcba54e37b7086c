package probe_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/internal/proxytest"
	"github.com/ratelim/ratelim/probe"
)

// probeURL probes url with the X-Api-Key header and logs the report.
// With -record its observations are written to testdata/name.json.
func probeURL(t *testing.T, name, url string) probe.Report {
	t.Helper()
	_, r := probeRecording(t, name, url)
	return r
}

// probeRecording is probeURL with the recording the report was made of.
func probeRecording(t *testing.T, name, url string) (probe.Recording, probe.Report) {
	t.Helper()
	rec, err := probe.Run(t.Context(), probe.Options{URL: url, KeyHeader: "X-Api-Key"})
	if err != nil {
		t.Fatal(err)
	}
	r := probe.Analyze(rec)
	var b strings.Builder
	if err := probe.WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", b.String())
	recordIfAsked(t, name, rec)
	return rec, r
}

// TestProbeFindsNginxLimitReq probes a real nginx's limit_req at 20r/s
// burst=10, with nodelay (a token bucket: nginx's excess, in thousandths
// of a request on its millisecond clock, ngx_http_limit_req_lookup) and
// without (the same admissions, the admitted ones held: a leaky bucket).
// nginx admits burst + 1 at once (its excess may reach burst after the
// request that finds it 0), so the bucket the probe finds holds 11.
func TestProbeFindsNginxLimitReq(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: each probe takes seconds of wall time")
	}
	proxytest.NeedNginx(t)
	n := proxytest.StartNginx(t, proxytest.NginxConfig{
		HTTP: "limit_req_zone $http_x_api_key zone=z:1m rate=20r/s;\nlimit_req_status 429;",
		Locations: map[string]string{
			"/nodelay": "limit_req zone=z burst=10 nodelay;",
			"/queue":   "limit_req zone=z burst=10;",
		},
	})
	for _, c := range []struct{ path, algorithm string }{{"/nodelay", "token-bucket"}, {"/queue", "leaky-bucket"}} {
		t.Run(c.path, func(t *testing.T) {
			rec, r := probeRecording(t, "nginx-"+c.path[1:], n.URL+c.path)
			if r.Algorithm == c.algorithm && near(r.Rate, 20) && near(float64(r.Burst), 11) {
				return
			}
			truthFitsAsWell(t, rec, r, 20, 11, "nginx's own bucket")
		})
	}
}

// TestProbeFindsHAProxyRate probes a real haproxy denying over 20
// requests in its http_req_rate(1s): a sliding window of two periods
// anchored at the key's first hit that counts the requests it denies
// (include/haproxy/freq_ctr.h), which ratelim's peer haproxy-req-rate
// models.
func TestProbeFindsHAProxyRate(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the probe takes seconds of wall time")
	}
	h := proxytest.StartHAProxy(t, strings.Join([]string{
		"stick-table type string len 64 size 100k expire 30s store http_req_rate(1s)",
		"http-request track-sc0 req.hdr(X-Api-Key)",
		"http-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 }",
		`http-request return status 200 content-type text/plain string "ok"`,
	}, "\n"))
	r := probeURL(t, "haproxy", h.URL+"/api")
	if r.Algorithm != "haproxy-req-rate" || r.Anchor != "first-hit" || r.RefusedCounted != "yes" {
		t.Errorf("found %s anchored at %q, refused counted %s; want a sliding window anchored at first-hit, refusals counted: haproxy-req-rate", r.Algorithm, r.Anchor, r.RefusedCounted)
	}
	if r.Limit != 20 || !near(float64(r.Window), float64(time.Second)) {
		t.Errorf("found %d per %s, want 20 per 1s within 5%%", r.Limit, time.Duration(r.Window))
	}
}

// truthFitsAsWell holds a probe that did not find the configured bucket
// (rate per second, burst) to what it observed. On a loaded machine the
// instants the probe saw are not the server's (a request leaves late on
// its goroutine, an answer is read late), and may not tell the truth from
// what was found. What must hold then: the configured bucket decides the
// observed answers no better than the finding (else the probe's search
// missed a better fit), and the report does not claim high confidence in a
// finding the truth fits as well. Observations the load moved so far that
// they contradict the truth are logged: the probe reported what it saw.
func truthFitsAsWell(t *testing.T, rec probe.Recording, r probe.Report, rate float64, burst int64, truthName string) {
	t.Helper()
	truthFits(t, r, probe.BucketMismatches(rec, rate, burst), fmt.Sprintf("%s (%g/s, %d)", truthName, rate, burst))
}

// truthFits holds a report that did not name the truth to what was
// observed: truth is how many of the answers the truth decides
// otherwise. The probe must not have missed a better fit, and must not
// be sure of what it found where the truth fits as well; where the
// answers as observed contradict the truth (a loaded machine moved their
// instants), what it reported is what it saw.
func truthFits(t *testing.T, r probe.Report, truth int, truthName string) {
	t.Helper()
	found := fmt.Sprintf("%s %g/s burst %d", r.Algorithm, r.Rate, r.Burst)
	if r.MaxInFlight > 0 {
		found = fmt.Sprintf("%s of %d in flight", r.Algorithm, r.MaxInFlight)
	}
	// A probe that decided almost nothing has nothing to be held to: too
	// few answers is a failure of its own.
	const fewest = 10
	if r.Decisions < fewest {
		t.Errorf("found %s from %d answers on the probe's key, fewer than %d: nothing to hold it to", found, r.Decisions, fewest)
		return
	}
	slack := probe.FitSlack(r.Decisions)
	switch {
	case truth < r.Mismatches:
		t.Errorf("found %s deciding %d of %d answers otherwise; %s decides only %d otherwise: the probe missed a better fit", found, r.Mismatches, r.Decisions, truthName, truth)
	case truth <= r.Mismatches+slack && r.Confidence == "high":
		t.Errorf("found %s with high confidence; %s fits the answers as well (%d vs %d of %d otherwise)", found, truthName, truth, r.Mismatches, r.Decisions)
	case truth > r.Mismatches+slack:
		t.Logf("the answers as observed contradict %s (%d of %d otherwise, against %d for what was found): the machine's load moved the instants; the probe reported what it saw", truthName, truth, r.Decisions, r.Mismatches)
	default:
		t.Logf("found %s (confidence %s); %s fits the answers as well (%d vs %d of %d otherwise): these observations could not tell them apart", found, r.Confidence, truthName, truth, r.Mismatches, r.Decisions)
	}
}
