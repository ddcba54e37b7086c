package testsize

import "testing"

func TestPick(t *testing.T) {
	t.Setenv(EnvVar, "")
	if got := Pick(1, 100); got != 1 {
		t.Errorf("unset: Pick(1, 100) = %d, want 1", got)
	}
	t.Setenv(EnvVar, "yes")
	if got := Pick(1, 100); got != 1 {
		t.Errorf("%s=yes: Pick(1, 100) = %d, want 1 (only 1 asks)", EnvVar, got)
	}
	t.Setenv(EnvVar, "1")
	if got := Pick(1, 100); got != 100 {
		t.Errorf("%s=1: Pick(1, 100) = %d, want 100", EnvVar, got)
	}
}
