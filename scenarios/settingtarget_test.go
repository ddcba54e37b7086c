package scenarios

import "testing"

// SettingTarget names the field a setting sets as one path, every list
// entry by index, so that two names for one field compare equal.
func TestSettingTargetSpellings(t *testing.T) {
	f, err := Open("sync-interval")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"burst":                           "limit.burst",
		"limit.burst":                     "limit.burst",
		"sync-interval":                   "topology.sync_interval",
		"topology.sync_interval":          "topology.sync_interval",
		"clients[flash-bot].traffic.rate": "clients[0].traffic.rate",
		"clients[0].traffic.rate":         "clients[0].traffic.rate",
		"clients[dashboard]":              "clients[1]",
		"clients[nobody].traffic":         "clients[nobody].traffic", // no such entry: as typed
		"on-error":                        "topology.on_error",
		"step":                            "step",
	} {
		if got, _ := SettingTarget(f, name); got != want {
			t.Errorf("SettingTarget(%q) = %q, want %q", name, got, want)
		}
	}
}
