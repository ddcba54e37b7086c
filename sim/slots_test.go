package sim

import "testing"

// TestSlotsReuseWhatIsTakenBack: a slot taken back is the next given out,
// holds the zero value meanwhile, and the room kept is the most in use
// at once.
func TestSlotsReuseWhatIsTakenBack(t *testing.T) {
	var s slots[string]
	a, b := s.put("a"), s.put("b")
	if a != 0 || b != 1 {
		t.Fatalf("first slots %d, %d; want 0, 1", a, b)
	}
	if got := s.take(a); got != "a" || s.items[a] != "" {
		t.Fatalf("take(%d) = %q, leaving %q; want \"a\", leaving \"\"", a, got, s.items[a])
	}
	if c := s.put("c"); c != a {
		t.Errorf("put after a take gave slot %d, want the freed %d", c, a)
	}
	for range 100 {
		s.take(s.put("x"))
	}
	if len(s.items) != 3 {
		t.Errorf("%d slots kept for at most 3 in use at once", len(s.items))
	}
	if got := s.take(b); got != "b" {
		t.Errorf("take(%d) = %q, want \"b\"", b, got)
	}
}
