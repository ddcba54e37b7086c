package scenarios

import (
	"strings"
	"testing"
)

// TestApplyLeavesTheFilesSubjectsUnchecked: a setting that renames a
// client, or a log's key, makes a run the file's expectations were not
// written for; the run (sim's, a sweep's) does not check them, and Apply
// does not refuse it for them. An expectation a setting puts in the file
// is checked, and the file read alone still is.
func TestApplyLeavesTheFilesSubjectsUnchecked(t *testing.T) {
	health, err := Open("runaway-healthcheck")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(health, []Setting{{"clients[scheduler].name", "cron", "--set clients[scheduler].name"}}); err != nil {
		t.Errorf("--set clients[scheduler].name=cron: %v, want it taken", err)
	}
	_, err = Apply(health, []Setting{{"expect", "[{client: nobody, rejected: {max: 0}}]", "--set expect"}})
	if err == nil || !strings.Contains(err.Error(), `"nobody" matches no client`) {
		t.Errorf("--set expect=[{client: nobody…}]: %v, want nobody matches no client", err)
	}
	access, err := Load("../replay/testdata/access.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(access, []Setting{{"trace.key", "path", "sweep trace.key"}}); err != nil {
		t.Errorf("sweep trace.key=path: %v, want it taken", err)
	}
	bad := strings.Replace(string(health.Source), "{client: scheduler,", "{client: cron,", 1)
	if _, err := Parse("renamed.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), `"cron" matches no client`) {
		t.Errorf("the file with client: cron: %v, want cron matches no client", err)
	}
}
