package scenarios

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse feeds Parse arbitrary bytes, seeded with the built-ins and the
// error cases' kind of input. The property: Parse never panics, and either
// returns a scenario the simulator's own checks would accept the basics of,
// or an *Error with a line that says what to write instead.
func FuzzParse(f *testing.F) {
	for _, name := range Builtin() {
		data, _ := builtin(name)
		f.Add(data)
	}
	f.Add([]byte(base))
	f.Add([]byte(base + "servers: 4\nfaults:\n  - {kind: partition, start: 1s, end: 2s, groups: [[0, 1], [2, 3]]}\n"))
	f.Add([]byte(base + "expect:\n  - {client: a, allowed_rate: {max: 11/s}, during: {from: 1s, to: 2s}, with: {algorithm: gcra}}\n"))
	f.Add([]byte("a: &a {<<: [*a, *a]}\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("f.yaml", data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *Error", err)
			}
			if e.File != "f.yaml" || e.Line < 1 {
				t.Fatalf("error %q has no file or line", err)
			}
			if !strings.Contains(e.Msg, "(want ") {
				t.Fatalf("error %q does not say what to write instead", err)
			}
			return
		}
		sc := file.Scenario
		if sc.Duration <= 0 || sc.Step <= 0 || sc.Step > sc.Duration || sc.Servers < 1 || sc.Servers > MaxServers || len(sc.Clients) == 0 {
			t.Fatalf("accepted an unrunnable scenario: %+v", sc)
		}
		for _, c := range sc.Clients {
			if len(c.Traffic) == 0 {
				t.Fatalf("accepted client %q with no traffic", c.Name)
			}
		}
		for _, ft := range sc.Faults {
			if ft.Start < 0 || ft.End <= ft.Start || ft.End > sc.Duration {
				t.Fatalf("accepted fault %+v outside the run", ft)
			}
		}
	})
}
