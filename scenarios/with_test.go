package scenarios

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestWithSetsWhatAPathSets: an expectation's with: takes what --set
// takes. A with: servers is read against the faults as --servers is, when
// the run is made, so a with: that also sets the partition's groups
// runs; alone, it gets the groups' message with their line. A whole
// field of the top (limit: {…}) is a setting, as --set 'limit={…}' is.
func TestWithSetsWhatAPathSets(t *testing.T) {
	partition, err := Open("partition")
	if err != nil {
		t.Fatal(err)
	}
	src := string(partition.Source) +
		"  - {client: app, allowed: {min: 1}, with: {servers: 3, \"faults[0].groups\": [[0], [1, 2]]}}\n" +
		"  - {client: app, allowed: {min: 1}, with: {servers: 3}}\n" +
		"  - {client: app, allowed: {min: 1}, with: {limit: {algorithm: gcra, rate: 10/s, burst: 20}}}\n"
	f, err := Parse("partition.yaml", []byte(src))
	if err != nil {
		t.Fatalf("with: servers and groups, with: limit: %v, want them read", err)
	}
	run := func(i int) (*File, error) {
		var sets []Setting
		for k, v := range f.Expect[i].With {
			sets = append(sets, Setting{Name: k, Value: v, Flag: "expect[" + strconv.Itoa(i) + "].with." + k})
		}
		if len(sets) > 1 && sets[0].Name != "servers" {
			sets[0], sets[1] = sets[1], sets[0] // as check sorts them
		}
		return Apply(f, sets)
	}
	n := len(f.Expect)
	got, err := run(n - 3)
	if err != nil {
		t.Fatalf("with: {servers: 3, faults[0].groups: [[0], [1, 2]]}: %v", err)
	}
	if got.Scenario.Servers != 3 || len(got.Scenario.Faults[0].Groups[1]) != 2 {
		t.Errorf("servers %d, groups %v, want 3 and [[0] [1 2]]", got.Scenario.Servers, got.Scenario.Faults[0].Groups)
	}
	// The groups' line in the built-in: the fault's, in flow style.
	groupsLine := 1 + strings.Count(string(partition.Source[:strings.Index(string(partition.Source), "{kind: partition")]), "\n")
	if _, err := run(n - 2); err == nil || !strings.Contains(err.Error(), "faults[0].groups") || !strings.Contains(err.Error(), fmt.Sprintf("(line %d)", groupsLine)) {
		t.Errorf("with: {servers: 3}: %v, want the groups' message with their line", err)
	}
	got, err = run(n - 1)
	if err != nil {
		t.Fatalf("with: {limit: {algorithm: gcra, …}}: %v", err)
	}
	if got.Scenario.Limit.Algorithm != "gcra" {
		t.Errorf("with: limit: algorithm %s, want gcra", got.Scenario.Limit.Algorithm)
	}
	// expect and lesson are no setting of a run.
	bad := string(partition.Source) + "  - {client: app, allowed: {min: 1}, with: {lesson: quota}}\n"
	if _, err := Parse("partition.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "with.lesson: unknown field") {
		t.Errorf("with: {lesson: …}: %v, want unknown field", err)
	}
}

// TestExpectationIndexIsItsPlaceInExpect: the lesson comes first in a
// File's Expect but is no entry of expect:, so Expect[i] is not expect[i].
func TestExpectationIndexIsItsPlaceInExpect(t *testing.T) {
	f, err := Open("partition")
	if err != nil {
		t.Fatal(err)
	}
	if f.Expect[0].Figure != "lesson" || f.Expect[0].Index != -1 {
		t.Fatalf("Expect[0] %+v, want the lesson, Index -1", f.Expect[0])
	}
	for i, e := range f.Expect[1:] {
		if e.Index != i {
			t.Errorf("Expect[%d].Index %d, want %d (line %d)", i+1, e.Index, i, e.Line)
		}
	}
}
