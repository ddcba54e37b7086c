package scenarios

import (
	"strings"
	"testing"

	"github.com/ratelim/ratelim/sim"
)

// TestATraceKeyAndAClientOfOneAddressShareAKey: a log's address key
// (ip:203.0.113.9, named as httplimit names it) and a client the file
// configures with that address count against one key of the limit.
func TestATraceKeyAndAClientOfOneAddressShareAKey(t *testing.T) {
	f, err := Load("../replay/testdata/access.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err = Apply(f, []Setting{{"clients[uptime-monitor].ip", "203.0.113.9", "--set clients[uptime-monitor].ip"}})
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, c := range f.Scenario.Clients {
		keys[c.Name] = sim.KeyOf(c, f.Scenario.Limit.Key)
	}
	logged, ok := keys["ip:203.0.113.9"]
	if !ok {
		t.Fatalf("no client ip:203.0.113.9 among %v", keys)
	}
	if mine := keys["uptime-monitor"]; mine != logged {
		t.Errorf("uptime-monitor at 203.0.113.9 keys as %q, the log's ip:203.0.113.9 as %q: want one key", mine, logged)
	}
}

// TestATraceKeyNoRequestCarriesIsRefused: trace.key: user on a log whose
// users are all - leaves no client to replay; the reader says so, on the
// key, rather than the simulator on a feed of no clients.
func TestATraceKeyNoRequestCarriesIsRefused(t *testing.T) {
	f, err := Load("../replay/testdata/access.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Apply(f, []Setting{{"trace.key", "user", "sweep trace.key"}})
	if want := "sweep trace.key: none of the log's 2119 requests has this key"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("trace.key=user: %v, want %s…", err, want)
	}
}
