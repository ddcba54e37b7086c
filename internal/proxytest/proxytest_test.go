package proxytest

import (
	"io"
	"net/http"
	"testing"
)

// get sends one request with an API key and returns its status.
func get(t *testing.T, url, key, id string) int {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", key)
	req.Header.Set("X-Ratelim-Request", id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestNginxLimitsAndLogs starts nginx with a limit of one request a
// minute and no burst: of three requests at once the first passes and
// the others are refused, and the access log says so for each, joined by
// its request id.
func TestNginxLimitsAndLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts nginx")
	}
	n := StartNginx(t, NginxConfig{
		HTTP:      "limit_req_zone $http_x_api_key zone=z:1m rate=1r/m;\nlimit_req_status 429;",
		Locations: map[string]string{"/one": "limit_req zone=z;"},
	})
	// A key with a space and a quote reads back as sent.
	const key = `k "1" x`
	var got []int
	for _, id := range []string{"a", "b", "c"} {
		got = append(got, get(t, n.URL+"/one", key, id))
	}
	if got[0] != 200 || got[1] != 429 || got[2] != 429 {
		t.Fatalf("statuses %v, want 200 429 429 (1r/m, no burst)", got)
	}
	lines := n.AccessLogUntil(t, func(l []NginxLogLine) bool { return len(l) >= 3 })
	if len(lines) != 3 {
		t.Fatalf("access log has %d lines, want 3: %+v", len(lines), lines)
	}
	want := map[string]string{"a": "PASSED", "b": "REJECTED", "c": "REJECTED"}
	for _, l := range lines {
		if l.LimitReq != want[l.RequestID] || l.Key != key || l.URI != "/one" || l.StartMs <= 0 {
			t.Errorf("logged %+v, want limit_req %s for request %s of key %q on /one", l, want[l.RequestID], l.RequestID, key)
		}
	}
}

// TestHAProxyLimits starts haproxy with a limit of 2 requests in 10 s:
// the third of three at once is refused, and a request of another key
// passes.
func TestHAProxyLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts haproxy")
	}
	h := StartHAProxy(t, `
		stick-table type string len 64 size 1k expire 30s store http_req_rate(10s)
		http-request track-sc0 req.hdr(X-Api-Key)
		http-request deny deny_status 429 if { sc_http_req_rate(0) gt 2 }
		http-request return status 200 content-type text/plain string "ok"`)
	var got []int
	for _, key := range []string{"k", "k", "k", "other"} {
		got = append(got, get(t, h.URL+"/", key, ""))
	}
	if got[0] != 200 || got[1] != 200 || got[2] != 429 || got[3] != 200 {
		t.Fatalf("statuses %v, want 200 200 429 200 (gt 2 over 10 s, per key)", got)
	}
}

func TestParseNginxLine(t *testing.T) {
	for _, c := range []struct {
		line string
		want NginxLogLine
		bad  bool
	}{
		{line: `{"msec":"1765000000.123","request_time":"0.101","status":"200","limit_req":"DELAYED","uri":"/burst","id":"17","key":"k \"1\""}`,
			want: NginxLogLine{StartMs: 1765000000022, TimeMs: 101, Status: 200, LimitReq: "DELAYED", URI: "/burst", RequestID: "17", Key: `k "1"`}},
		{line: `{"msec":"1765000000.000","request_time":"0.000","status":"429","limit_req":"REJECTED","uri":"/b","id":"","key":""}`,
			want: NginxLogLine{StartMs: 1765000000000, Status: 429, LimitReq: "REJECTED", URI: "/b"}},
		{line: `{"msec":"1765000000.5","request_time":"0.000","status":"200","limit_req":"PASSED","uri":"/b","id":"1","key":"k"}`, bad: true},
		{line: `{"msec":"1765000000.500","request_time":"0.000","status":"x"}`, bad: true},
		{line: `1765000000.500 0.000 200 PASSED /b "1" "k"`, bad: true},
	} {
		got, err := parseNginxLine(c.line)
		if c.bad != (err != nil) || (!c.bad && got != c.want) {
			t.Errorf("parseNginxLine(%q) = %+v, %v; want %+v (bad %v)", c.line, got, err, c.want, c.bad)
		}
	}
}
