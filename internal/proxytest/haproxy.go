package proxytest

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// NeedHAProxy skips the test, saying so, when haproxy is not on PATH.
func NeedHAProxy(t testing.TB) { t.Helper(); need(t, "haproxy") }

// HAProxy is an haproxy process on loopback.
type HAProxy struct {
	// URL is the frontend's base URL, http://127.0.0.1:PORT.
	URL string
	// Dir holds its haproxy.cfg.
	Dir string
	p   *process
}

// StartHAProxy starts haproxy for the length of the test with a frontend
// made of frontend's lines after its bind, and returns once it answers.
// A limit is written as
//
//	stick-table type string len 64 size 100k expire 30s store http_req_rate(10s)
//	http-request track-sc0 req.hdr(X-Api-Key)
//	http-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 }
//	http-request return status 200 content-type text/plain string "ok"
//
// in that order: a return before the deny is final, and nothing after it
// runs (haproxy warns, and the limit never applies).
func StartHAProxy(t testing.TB, frontend string) *HAProxy {
	t.Helper()
	bin := need(t, "haproxy")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "haproxy.cfg")
	for try := 1; ; try++ {
		port := freePort(t)
		token := readyToken()
		text := haproxyConf(port, token, frontend)
		writeFile(t, cfg, text)
		url := "http://127.0.0.1:" + strconv.Itoa(port)
		p, err := start(t, "haproxy", exec.Command(bin, "-f", cfg, "-db"), url+readyPath, token)
		if err == errAddrInUse && try < portTries {
			continue
		}
		if err != nil {
			t.Fatalf("%v\nhaproxy.cfg:\n%s", err, text)
		}
		t.Cleanup(p.stop)
		return &HAProxy{URL: url, Dir: dir, p: p}
	}
}

// haproxyConf is the whole configuration: one thread, so that requests
// at one instant are handled in one order; the readiness path answered
// before the test's rules, so it is neither tracked nor counted.
func haproxyConf(port int, token, frontend string) string {
	var b strings.Builder
	b.WriteString("global\n    maxconn 1000\n    nbthread 1\n\n")
	b.WriteString("defaults\n    mode http\n    timeout connect 5s\n    timeout client 30s\n    timeout server 30s\n\n")
	fmt.Fprintf(&b, "frontend fe\n    bind 127.0.0.1:%d\n", port)
	fmt.Fprintf(&b, "    http-request return status 204 hdr %s %s if { path %s }\n", readyHeader, token, readyPath)
	for _, line := range strings.Split(strings.TrimSpace(frontend), "\n") {
		b.WriteString("    " + strings.TrimSpace(line) + "\n")
	}
	return b.String()
}
