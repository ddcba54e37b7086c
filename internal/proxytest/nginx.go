package proxytest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// NeedNginx skips the test, saying so, when nginx is not on PATH.
func NeedNginx(t testing.TB) { t.Helper(); need(t, "nginx") }

// NginxConfig is the limiter part of an nginx configuration: the rest
// (one worker, foreground, logs and temporary files under the test's
// directory, the listen on a free loopback port) is StartNginx's.
type NginxConfig struct {
	// HTTP are lines of the http block: the zones and the status, e.g.
	//	limit_req_zone $http_x_api_key zone=z:1m rate=10r/s;
	//	limit_req_status 429;
	// A key of $http_x_api_key is what `ratelim load` sends (X-API-Key);
	// a request without it is never limited (an empty key is skipped).
	HTTP string
	// Locations maps an exact path ("/burst") to the directives of its
	// location, e.g. "limit_req zone=z burst=5 nodelay;". Each serves a
	// small static file of that name, so the limit applies.
	Locations map[string]string
}

// Nginx is an nginx master and its one worker, on loopback.
type Nginx struct {
	// URL is the server's base URL, http://127.0.0.1:PORT.
	URL string
	// Dir is its prefix: nginx.conf, logs/ and html/ are in it.
	Dir string
	p   *process
}

// readyPath answers at once, unlimited and unlogged, for StartNginx to
// see the server up.
const readyPath = "/_proxytest_ready"

// StartNginx starts nginx with conf for the length of the test and
// returns once it answers.
func StartNginx(t testing.TB, conf NginxConfig) *Nginx {
	t.Helper()
	bin := need(t, "nginx")
	dir := t.TempDir()
	paths := slices.Sorted(maps.Keys(conf.Locations))
	for _, path := range paths {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path[1:], "/ ;{}") || len(path) < 2 {
			t.Fatalf("nginx location %q: want one path segment such as /burst", path)
		}
		writeFile(t, filepath.Join(dir, "html", path[1:]), "ok\n")
	}
	for _, sub := range []string{"logs", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for try := 1; ; try++ {
		port := freePort(t)
		token := readyToken()
		text := nginxConf(port, token, conf, paths)
		writeFile(t, filepath.Join(dir, "nginx.conf"), text)
		url := "http://127.0.0.1:" + strconv.Itoa(port)
		cmd := exec.Command(bin, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"))
		p, err := start(t, "nginx", cmd, url+readyPath, token)
		if err == errAddrInUse && try < portTries {
			continue
		}
		if err != nil {
			t.Fatalf("%v\nnginx.conf:\n%s", err, text)
		}
		n := &Nginx{URL: url, Dir: dir, p: p}
		t.Cleanup(p.stop)
		return n
	}
}

// nginxConf is the whole configuration. Why each line is there:
//   - one worker: each worker caches its own millisecond clock, and a
//     key's requests seen by two would meet two clocks;
//   - no timer_resolution: with it, nginx's clock moves in steps of that
//     size and the limiter sees coarse instants;
//   - keepalive_timeout 0: each request on a fresh connection, so that
//     $msec − $request_time is the instant limit_req saw it;
//   - every temporary path under the prefix: Debian's compiled-in ones
//     (/var/lib/nginx) are not writable by a user;
//   - user root when run as root: the worker would otherwise drop to
//     nobody and could not read the test's directory.
func nginxConf(port int, token string, conf NginxConfig, paths []string) string {
	var b strings.Builder
	b.WriteString("worker_processes 1;\ndaemon off;\nmaster_process on;\npid logs/nginx.pid;\nerror_log logs/error.log info;\n")
	if os.Geteuid() == 0 {
		b.WriteString("user root;\n")
	}
	b.WriteString("events { worker_connections 1024; }\nhttp {\n")
	b.WriteString(`  log_format proxytest escape=json '{"msec":"$msec","request_time":"$request_time","status":"$status",` +
		`"limit_req":"$limit_req_status","uri":"$uri","id":"$http_x_ratelim_request","key":"$http_x_api_key"}';` + "\n")
	b.WriteString("  access_log logs/access.log proxytest;\n")
	for _, kind := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		fmt.Fprintf(&b, "  %s_temp_path tmp/%s;\n", kind, kind)
	}
	b.WriteString("  default_type text/plain;\n  keepalive_timeout 0;\n")
	for _, line := range strings.Split(strings.TrimSpace(conf.HTTP), "\n") {
		b.WriteString("  " + strings.TrimSpace(line) + "\n")
	}
	fmt.Fprintf(&b, "  server {\n    listen 127.0.0.1:%d;\n    root html;\n", port)
	fmt.Fprintf(&b, "    location = %s { access_log off; add_header %s %s; return 204; }\n", readyPath, readyHeader, token)
	for _, path := range paths {
		fmt.Fprintf(&b, "    location = %s { %s }\n", path, conf.Locations[path])
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// NginxLogLine is one request as nginx logged it.
type NginxLogLine struct {
	// StartMs is the millisecond nginx began the request on its clock
	// ($msec − $request_time, the wall clock in ms since 1970): for a
	// request on a fresh connection, the instant limit_req saw it, to
	// within the millisecond (nginx caches its clock per event-loop pass,
	// and $msec's clock is not the monotonic one limit_req reads: the two
	// may differ by 1 ms).
	StartMs int64
	// TimeMs is how long nginx took over it ($request_time, in ms): a
	// delayed request's delay.
	TimeMs int64
	// Status is the HTTP status sent.
	Status int
	// LimitReq is $limit_req_status: PASSED, DELAYED, REJECTED (or the
	// dry-run forms), "" where no limit applied.
	LimitReq string
	// URI is the path requested.
	URI string
	// RequestID is the X-Ratelim-Request header ("" without one), and
	// Key the X-API-Key header.
	RequestID, Key string
}

// AccessLog reads the requests nginx has logged so far (a request is
// logged when its answer is sent: a delayed one after its delay).
func (n *Nginx) AccessLog(t testing.TB) []NginxLogLine {
	t.Helper()
	f, err := os.Open(filepath.Join(n.Dir, "logs", "access.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []NginxLogLine
	sc := bufio.NewScanner(f)
	for i := 1; sc.Scan(); i++ {
		l, err := parseNginxLine(sc.Text())
		if err != nil {
			t.Fatalf("access.log:%d: %v: %q", i, err, sc.Text())
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// loggedWithin bounds how long AccessLogUntil waits for nginx's lines.
const loggedWithin = 5 * time.Second

// AccessLogUntil reads the access log until done says it holds what the
// test waits for, or loggedWithin has passed (it then returns what there
// is, for the test to name what is missing): nginx writes a request's
// line after it has sent the answer, so a client can hold the answer of
// its last request before that line is written.
func (n *Nginx) AccessLogUntil(t testing.TB, done func([]NginxLogLine) bool) []NginxLogLine {
	t.Helper()
	deadline := time.Now().Add(loggedWithin)
	for {
		lines := n.AccessLog(t)
		if done(lines) || time.Now().After(deadline) {
			return lines
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// parseNginxLine reads a line of the proxytest log format: JSON, which
// nginx escapes (escape=json), so that a key or path with a space or a
// quote reads back as it was sent.
func parseNginxLine(s string) (NginxLogLine, error) {
	var f struct{ Msec, RequestTime, Status, LimitReq, URI, ID, Key string }
	if err := json.Unmarshal([]byte(s), &struct {
		Msec        *string `json:"msec"`
		RequestTime *string `json:"request_time"`
		Status      *string `json:"status"`
		LimitReq    *string `json:"limit_req"`
		URI         *string `json:"uri"`
		ID          *string `json:"id"`
		Key         *string `json:"key"`
	}{&f.Msec, &f.RequestTime, &f.Status, &f.LimitReq, &f.URI, &f.ID, &f.Key}); err != nil {
		return NginxLogLine{}, err
	}
	msec, err := millis(f.Msec)
	if err != nil {
		return NginxLogLine{}, fmt.Errorf("msec: %w", err)
	}
	took, err := millis(f.RequestTime)
	if err != nil {
		return NginxLogLine{}, fmt.Errorf("request_time: %w", err)
	}
	status, err := strconv.Atoi(f.Status)
	if err != nil {
		return NginxLogLine{}, fmt.Errorf("status: %w", err)
	}
	return NginxLogLine{StartMs: msec - took, TimeMs: took, Status: status, LimitReq: f.LimitReq, URI: f.URI,
		RequestID: f.ID, Key: f.Key}, nil
}

// millis reads nginx's "seconds.milliseconds" exactly, as an integer of
// milliseconds (a float would round 1712345678.123 × 1000).
func millis(s string) (int64, error) {
	sec, frac, ok := strings.Cut(s, ".")
	if !ok || len(frac) != 3 {
		return 0, fmt.Errorf("%q is not seconds.mmm", s)
	}
	whole, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return 0, err
	}
	ms, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return 0, err
	}
	return whole*1000 + ms, nil
}
