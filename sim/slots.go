package sim

// slots hold the values an event names by index (its arg): a racy write in
// flight, a lease held. A slot taken back is reused, so that a long run
// keeps room for the most in flight at once, not for every one it sent.
type slots[T any] struct {
	items []T     // by slot; a free slot holds the zero T
	free  []int32 // slots taken back, reused last in, first out
}

// put stores v in a free slot, or a new one, and returns the slot.
func (s *slots[T]) put(v T) int32 {
	if n := len(s.free); n > 0 {
		slot := s.free[n-1]
		s.free = s.free[:n-1]
		s.items[slot] = v
		return slot
	}
	s.items = append(s.items, v)
	return int32(len(s.items) - 1)
}

// take returns the value in slot and frees the slot.
func (s *slots[T]) take(slot int32) T {
	v := s.items[slot]
	var zero T
	s.items[slot] = zero
	s.free = append(s.free, slot)
	return v
}
