package main

import (
	"strings"
	"testing"
)

// Every form of the grammar gives the texts it stands for, in the unit
// typed, exactly.
func TestExpandValues(t *testing.T) {
	for _, tc := range []struct {
		list string
		want string // the values, joined by commas
	}{
		{"1,2,3", "1,2,3"},
		{" 0 , 100ms ,never", "0,100ms,never"},
		{"1..8", "1,2,3,4,5,6,7,8"},
		{"5..5", "5"},
		{"1..10+3", "1,4,7,10"},
		{"1..9+3", "1,4,7"},
		{"100ms..1s+300ms", "100ms,400ms,700ms,1s"},
		{"0.1..1+0.1", "0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1"}, // exact: no 0.30000000000000004
		{"1ms..10s*10", "1ms,10ms,100ms,1s,10s"},
		{"1ms..9s*10", "1ms,10ms,100ms,1s"},
		{"500us..2ms*2", "500µs,1ms,2ms"},
		{"10/s..80/s*2", "10/s,20/s,40/s,80/s"},
		{"10/s..1200/m*2", "10/s,20/s"}, // 1200/m is 20/s: B in another unit, the values in A's
		{"60/m..180/m+60/m", "60/m,120/m,180/m"},
		{"1..4*1.5", "1,1.5,2.25,3.375"},
		{"1,2,4..6,10", "1,2,4,5,6,10"},
		{"0..1s+250ms", "0s,250ms,500ms,750ms,1s"}, // a bare 0 is of B's kind
		{"0..20/s+10/s", "0/s,10/s,20/s"},
		{"{pattern: constant, rate: 5/s},[1..2]", "{pattern: constant, rate: 5/s},[1..2]"}, // brackets: the value's own
	} {
		got, err := expandValues("sweep x", tc.list, maxSweepValues)
		if err != nil || strings.Join(got, ",") != tc.want {
			t.Errorf("%q: %q, %v; want %s", tc.list, got, err, tc.want)
		}
	}
}

// Every refusal says what is wrong and what would do.
func TestExpandValuesRefusals(t *testing.T) {
	for _, tc := range []struct{ list, want string }{
		{"", "sweep x: no values (want V1,V2,... or A..B, e.g. x=1..8)"},
		{"1,,2", "sweep x: value 2 of 3 is empty (want V1,V2,... with no empty one)"},
		{"1,2,", "sweep x: value 3 of 3 is empty"},
		{"1,2,1", "sweep x: 1 given twice (want each value once)"},
		{"1..3,2", "sweep x: 2 given twice"},
		{"8..1", `sweep x: "8..1": 8 is more than 1 (want A..B with A at most B)`},
		{"1s..100ms*10", `sweep x: "1s..100ms*10": 1s is more than 100ms`},
		{"1..8*1", `sweep x: "1..8*1": a factor of 1 never gets to 8 (want a factor more than 1)`},
		{"1..8*0.5", "a factor of 0.5 never gets to 8 (want a factor more than 1)"},
		{"1..8*x", `the factor "x" is not a number (want A..B*K, e.g. 1ms..10s*10)`},
		{"1..8*2s", `the factor "2s" is not a number`},
		{"0..8*2", "0 times 2 is 0 again (want A more than 0)"},
		{"1..8+0", `sweep x: "1..8+0": a step of 0 never gets to 8 (want a step more than 0)`},
		{"1..100", `sweep x: "1..100": more than 32 values (want at most 32)`},
		{"1ms..1h*1.01", "more than 32 values (want at most 32)"},
		{"1..20,21..40", "sweep x: 40 values (want at most 32)"},
		{"1s..10s", `"1s..10s": A..B counts whole numbers (want a step: A..B+S, or A..B*K)`},
		{"1.5..3", "A..B counts whole numbers"},
		{"1s..10/s*2", `"1s..10/s*2": 1s and 10/s are not of one kind (want A and B both a duration)`},
		{"1s..10s+1", "the step 1 is not a duration as 1s is (want a step in a duration's unit, e.g. 100ms)"},
		{"1..10+1s", "the step 1s is not a number as 1 is (want a step in a number's unit, e.g. 2)"},
		{"0s..10+1", "0s and 10 are not of one kind"},
		{"1..1000000000000000000000", `"1000000000000000000000" has too many digits (want at most 18 before the point and 9 after)`},
		{"1ns..2ns+0.0000000001ns", "has too many digits"},
		{"1ns..2ns+0.1ns", "1.1 ns is not a whole nanosecond (want a step or factor that keeps whole nanoseconds)"},
		{"1h..2562048h+2562047h", "ns is too long a duration (want at most 2562047h47m16.854775807s)"},
		{"-1..3", `"-1..3": "-1" is not a number with a unit (want e.g. 8, 100ms or 10/s)`},
		{"1e3..1e4*10", `"1e3" is not a number with a unit`},
		{"10/s..80/fortnight*2", `"80/fortnight" has an unknown rate unit "fortnight" (want s, m, h or a duration such as 500ms)`},
		{"1ns..2ns*1.5", "value 2: 1.5 ns is not a whole nanosecond (want"},
	} {
		_, err := expandValues("sweep x", tc.list, maxSweepValues)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v; want %q", tc.list, err, tc.want)
		}
	}
}
