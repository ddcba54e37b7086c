package scenarios

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ratelim/ratelim/sim"
)

const traceLines = `192.0.2.1 - - [01/Mar/2026:12:00:00 +0000] "GET /api/a HTTP/1.1" 200 1 "-" "-"
192.0.2.1 - - [01/Mar/2026:12:00:00 +0000] "GET /api/a HTTP/1.1" 200 1 "-" "-"
192.0.2.2 - - [01/Mar/2026:12:00:01 +0000] "POST /api/b HTTP/1.1" 201 1 "-" "-"
192.0.2.1 - - [01/Mar/2026:12:00:05 +0000] "GET /api/a HTTP/1.1" 200 1 "-" "-"
192.0.2.1 - - [01/Mar/2026:12:00:05 +0000] "GET /api/a HTTP/1.1" 200 1 "-" "-"
192.0.2.1 - - [01/Mar/2026:12:00:05 +0000] "GET /api/a HTTP/1.1" 200 1 "-" "-"
`

// traceDir is a directory holding access.log and a scenario with body.
func traceScenario(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "access.log"), []byte(traceLines), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTopLevelTraceMakesAClientPerKey(t *testing.T) {
	path := traceScenario(t, `name: t
trace: {file: access.log, retry: retry-after}
limit: {algorithm: token-bucket, rate: 1/s, burst: 2, key: ip}
expect:
  - {client: "ip:192.0.2.1", rejected: {min: 1}}
`)
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := f.Scenario
	if len(sc.Clients) != 2 || sc.Clients[0].Name != "ip:192.0.2.1" || sc.Clients[0].IP != "192.0.2.1" || sc.Clients[1].Name != "ip:192.0.2.2" {
		t.Fatalf("clients %+v", sc.Clients)
	}
	if sc.Clients[0].Retry.Policy != sim.RetryAfter {
		t.Errorf("retry %v, want the trace's retry-after", sc.Clients[0].Retry.Policy)
	}
	// The log spans 5 s: the run lasts to just past its last request, at 1s steps.
	if sc.Duration != 6*time.Second || sc.Step != time.Second {
		t.Errorf("duration %s step %s, want 6s at 1s", sc.Duration, sc.Step)
	}
	r, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 2 at 0s take the burst; of the 3 at 5s, the 2 tokens back by then
	// admit two and one is refused, its retry due at 6s, the run's end.
	c := r.Clients[0]
	if c.Sent != 5 || c.Allowed != 4 || c.Rejected != 1 {
		t.Errorf("ip:192.0.2.1: sent %d, allowed %d, rejected %d; want 5, 4, 1", c.Sent, c.Allowed, c.Rejected)
	}
	if r.Clients[1].Sent != 1 || r.Clients[1].Allowed != 1 {
		t.Errorf("ip:192.0.2.2: %+v", r.Clients[1].Counts)
	}
}

func TestTracePatternForOneClient(t *testing.T) {
	path := traceScenario(t, `name: t
duration: 10s
limit: {algorithm: token-bucket, rate: 1/s, burst: 2}
clients:
  - name: replayed-{i}
    count: 2
    api_key: k{i}
    traffic:
      - {pattern: trace, file: access.log, only: "ip:192.0.2.1", start: 2s}
      - {pattern: constant, rate: 1/s, start: 9s}
`)
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := f.Scenario
	if len(sc.Feeds) != 2 || sc.Feeds[1].FirstClient != 1 || sc.Feeds[0].Requests != 5 {
		t.Fatalf("feeds %+v", sc.Feeds)
	}
	r, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Clients {
		// 5 from the log (at 2s and 7s), 1 constant at 9s.
		if c.Sent != 6 {
			t.Errorf("%s sent %d, want 6", c.Name, c.Sent)
		}
	}
}

func TestTraceErrors(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"name: t\ntrace: {file: none.log}\nlimit: {rate: 1/s, burst: 1}\n", "s.yaml:2: trace.file: open"},
		{"name: t\ntrace: {file: access.log, key: cookie}\nlimit: {rate: 1/s, burst: 1}\n", `s.yaml:2: trace.key: "cookie" is not a key of a combined log`},
		{"name: t\ntrace: {file: access.log, speed: -2}\nlimit: {rate: 1/s, burst: 1}\n", "s.yaml:2: trace.speed: -2 is not a positive speed"},
		{"name: t\ntrace: {file: access.log, from: tuesday}\nlimit: {rate: 1/s, burst: 1}\n", `s.yaml:2: trace.from: "tuesday" is not a time`},
		{"name: t\ntrace: {file: access.log, colour: red}\nlimit: {rate: 1/s, burst: 1}\n", "s.yaml:2: trace.colour: unknown field"},
		{"name: t\ntrace: {file: access.log, path: /nowhere}\nlimit: {rate: 1/s, burst: 1}\n", "every request was filtered out"},
		{"name: t\ntrace: {file: access.log, skip_bad: maybe}\nlimit: {rate: 1/s, burst: 1}\n", "trace.skip_bad"},
		{"name: t\ntrace: {file: '-'}\nlimit: {rate: 1/s, burst: 1}\n", "standard input is not a log"},
		{"name: t\ntrace: {file: access.log}\nlimit: {rate: 1/s, burst: 1}\nclients:\n  - {name: 'ip:192.0.2.2', api_key: x, traffic: {pattern: constant, rate: 1/s}}\n", "is also the name of a client"},
		{"name: t\nlimit: {rate: 1/s, burst: 1}\nclients:\n  - {name: a, api_key: a, traffic: {pattern: trace, file: access.log}}\n", "duration: missing"},
		{"name: t\nduration: 5s\nlimit: {rate: 1/s, burst: 1}\nclients:\n  - {name: a, api_key: a, traffic: {pattern: trace, file: access.log, retry: none}}\n", "clients[0].traffic.retry: unknown field"},
	} {
		_, err := Load(traceScenario(t, tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n err = %v\nwant one saying %q", tc.body, err, tc.want)
		}
	}
	// A bad line of the log, with the scenario's line and the log's.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bad.log"), []byte(traceLines+"192.0.2.1 - - [01/Mar/2026:12:00:06 +0000] \"GET / HTTP/1.1\" OK 1 \"-\" \"-\"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "s.yaml"), []byte("name: t\ntrace: {file: bad.log}\nlimit: {rate: 1/s, burst: 1}\n"), 0o644)
	if _, err := Load(filepath.Join(dir, "s.yaml")); err == nil || !strings.Contains(err.Error(), "s.yaml:2: trace.file: "+filepath.Join(dir, "bad.log")+":7: status") {
		t.Errorf("a bad log line: %v", err)
	}
	// A log that is not a regular file is refused before it is opened:
	// /dev/zero would be read for ever, a pipe would block the open.
	fifo := filepath.Join(dir, "fifo.log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{"/dev/zero": "/dev/zero is a character device, not a regular file", fifo: "is a named pipe (FIFO), not a regular file", dir: "is a directory, not a regular file"} {
		os.WriteFile(filepath.Join(dir, "s.yaml"), []byte("name: t\ntrace: {file: "+file+"}\nlimit: {rate: 1/s, burst: 1}\n"), 0o644)
		done := make(chan error, 1)
		go func() { _, err := Load(filepath.Join(dir, "s.yaml")); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "s.yaml:2: trace.file: ") || !strings.Contains(err.Error(), want) {
				t.Errorf("trace: {file: %s}: %v (want one saying %q)", file, err, want)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("trace: {file: %s}: still reading after 20s (want it refused)", file)
		}
	}
	// Parse reads no files, whatever the text asks.
	if _, err := Parse("p.yaml", []byte("name: t\ntrace: {file: /etc/passwd}\nlimit: {rate: 1/s, burst: 1}\n")); err == nil || !strings.Contains(err.Error(), "reads no logs") {
		t.Errorf("Parse with a trace: %v", err)
	}
}
