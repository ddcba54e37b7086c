package main

import (
	"encoding/json"
	"net"
	"strings"
	"testing"
)

// TestLoadAgainstNothingFails: a load run against a port nothing listens
// on prints its figures, with the requests under "no answer" and none
// rejected, then exits 4 saying why; the JSON says the same.
func TestLoadAgainstNothingFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := "http://" + ln.Addr().String()
	ln.Close()
	path := writeScenario(t, "short.yaml", strings.Replace(shortLive, "duration: 2s", "duration: 500ms", 1))
	code, out, errOut := runArgs("load", path, "--target", target)
	if code != exitInternal {
		t.Errorf("exit %d, want %d (a target that answered nothing)", code, exitInternal)
	}
	if !strings.Contains(errOut, "no request got an HTTP answer") || !strings.Contains(errOut, "connection refused") {
		t.Errorf("stderr does not say why:\n%s", errOut)
	}
	header := ""
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "client") && strings.Contains(line, "sent") {
			header = line
		}
	}
	if !strings.Contains(header, "no answer") {
		t.Errorf("the table has no \"no answer\" column:\n%s", out)
	}
	code, out, _ = runArgs("load", path, "--target", target, "--format", "json")
	if code != exitInternal {
		t.Errorf("--format json: exit %d, want %d", code, exitInternal)
	}
	var res struct {
		Clients []struct {
			Name     string `json:"name"`
			Sent     int64  `json:"sent"`
			Rejected int64  `json:"rejected"`
			NoAnswer int64  `json:"no_answer"`
		} `json:"clients"`
		Audit struct {
			TransportErrors int64 `json:"transport_errors"`
		} `json:"audit"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var sent, noAnswer int64
	for _, c := range res.Clients {
		if c.Rejected != 0 {
			t.Errorf("%s: %d rejected, want 0: nothing answered", c.Name, c.Rejected)
		}
		sent += c.Sent
		noAnswer += c.NoAnswer
	}
	if sent == 0 || noAnswer != sent || res.Audit.TransportErrors != sent {
		t.Errorf("sent %d, no_answer %d, transport_errors %d: want every request sent unanswered", sent, noAnswer, res.Audit.TransportErrors)
	}
}
