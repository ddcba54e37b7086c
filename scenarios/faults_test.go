package scenarios

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ratelim/ratelim/sim"
)

// TestFaultKindsAsPrinted: the fault kinds `ratelim scenarios reference`
// and `schema` print, and the fields each takes there, are sim's
// registry's (sim.FaultKinds, sim.FaultType.Fields), in its order; and
// every field a kind reads has a row in the field table and a reader.
func TestFaultKindsAsPrinted(t *testing.T) {
	var schema bytes.Buffer
	if err := Schema(&schema); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Definitions struct {
			Fault struct {
				AllOf []struct {
					If struct {
						Properties struct {
							Kind struct{ Const string }
						}
					}
					Then struct {
						PropertyNames struct{ Enum []string }
					}
				}
				Properties struct {
					Kind struct{ Enum []string }
				}
			}
		}
	}
	if err := json.Unmarshal(schema.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	fault := doc.Definitions.Fault
	if got, want := fault.Properties.Kind.Enum, sim.FaultKinds(); !slices.Equal(got, want) {
		t.Errorf("the schema's fault kinds %v, the registry's %v", got, want)
	}
	schemaFields := map[string][]string{}
	for _, a := range fault.AllOf {
		schemaFields[a.If.Properties.Kind.Const] = a.Then.PropertyNames.Enum
	}

	var ref bytes.Buffer
	if err := Reference(&ref); err != nil {
		t.Fatal(err)
	}
	refFields := referenceFaultFields(t, ref.String())
	var refKinds []string
	for _, row := range refFields {
		refKinds = append(refKinds, row[0])
	}
	if want := sim.FaultKinds(); !slices.Equal(refKinds, want) {
		t.Errorf("the reference's fault kinds %v, the registry's %v", refKinds, want)
	}

	for i, kind := range sim.FaultKinds() {
		ft, ok := sim.FaultTypeOf(sim.FaultKind(kind))
		if !ok {
			t.Fatalf("%s: listed, not registered", kind)
		}
		want := append([]string{"start", "end"}, ft.FieldNames()...)
		if i < len(refFields) && !slices.Equal(refFields[i][1:], want) {
			t.Errorf("%s: the reference gives fields %v, the registry %v", kind, refFields[i][1:], want)
		}
		if got := schemaFields[kind]; !slices.Equal(got, append([]string{"kind"}, want...)) {
			t.Errorf("%s: the schema allows fields %v, the registry %v", kind, got, want)
		}
		for _, name := range ft.FieldNames() {
			if faultFieldReaders[name] == nil {
				t.Errorf("%s: no reader of field %s", kind, name)
			}
			if !slices.Contains(faultObject.names(), name) {
				t.Errorf("%s: field %s has no row in the field table", kind, name)
			}
		}
	}
}

// referenceFaultFields are the rows of the reference's "By kind, each
// takes only:" under fault:, each the kind and its fields.
func referenceFaultFields(t *testing.T, ref string) [][]string {
	t.Helper()
	_, rest, ok := strings.Cut(ref, "\nfault: ")
	if !ok {
		t.Fatal("the reference has no fault:")
	}
	_, rest, ok = strings.Cut(rest, "By kind, each takes only:\n")
	if !ok {
		t.Fatal("the reference's fault: has no By kind")
	}
	var rows [][]string
	for _, line := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(line, "    ") {
			break
		}
		words := strings.Fields(strings.ReplaceAll(line, ",", " "))
		if strings.HasPrefix(line, "     ") && len(rows) > 0 { // a wrapped row
			rows[len(rows)-1] = append(rows[len(rows)-1], words...)
			continue
		}
		rows = append(rows, words)
	}
	return rows
}

// TestFaultErrorsNameTheirLine: an error sim.Fault.Check finds is placed
// on the line of the field, the list item or the fault it names, in a
// fault written one field a line.
func TestFaultErrorsNameTheirLine(t *testing.T) {
	const head = "name: t\nduration: 30s\nservers: 4\nlimit: {rate: 10/s, burst: 5}\nclients:\n  - {name: a, ip: 10.0.0.1, traffic: {pattern: constant, rate: 1/s}}\nfaults:\n"
	for _, tt := range []struct{ name, faults, want string }{
		{"a server of a group", "  - kind: partition\n    start: 1s\n    end: 2s\n    groups:\n      - [0, 1]\n      - - 2\n        - 7\n",
			"t.yaml:14: faults[0].groups[1][1]: server 7 does not exist (want 0 to 3: servers are numbered from 0)"},
		{"a server in two groups", "  - kind: partition\n    start: 1s\n    end: 2s\n    groups:\n      - [0, 1]\n      - [2,\n         1, 3]\n",
			"t.yaml:14: faults[0].groups[1][1]: server 1 is already in faults[0].groups[0] (want each server in one group only)"},
		{"an empty group", "  - kind: partition\n    start: 1s\n    end: 2s\n    groups:\n      - [0, 1, 2, 3]\n      - []\n",
			"t.yaml:13: faults[0].groups[1]: empty group (want at least one server, e.g. [0], or store nodes on its side in nodes)"},
		{"servers in no group", "  - kind: partition\n    start: 1s\n    end: 2s\n    groups:\n      - [0]\n      - [1]\n",
			"t.yaml:12: faults[0].groups: servers 2 and 3 are in no group (want every server from 0 to 3 in exactly one group)"},
		{"every server crashes", "  - kind: crash\n    start: 1s\n    end: 2s\n    servers:\n      - 0\n      - 1\n      - 2\n      - 3\n",
			"t.yaml:12: faults[0].servers: every server crashes, and no one is left to serve (want fewer than the 4 servers)"},
		{"a drift", "  - kind: clock-skew\n    start: 1s\n    end: 2s\n    drift:\n      5\n",
			"t.yaml:12: faults[0].drift: 5 is more than a second per second (want -1 to 1, e.g. 0.01 for 1% fast)"},
		{"an alias's server", "  - {kind: outage, start: 1s, end: 2s}\n  - kind: clock-skew\n    start: 1s\n    end: 2s\n    offset: 1s\n    servers: [1, &one 1]\n",
			"t.yaml:13: faults[1].servers[1]: server 1 is listed twice (want each server once)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(head+tt.faults))
			if err == nil || err.Error() != tt.want {
				t.Errorf("error\n\t%v\nwant\n\t%s", err, tt.want)
			}
		})
	}
}
