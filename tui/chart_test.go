package tui

import "testing"

func TestChartNumbers(t *testing.T) {
	for v, want := range map[float64]string{20: "20", 100.0 / 60: "1.667", 21.666666666666668: "21.67", 20000: "20000", 1234.56: "1235", 0.5: "0.5"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %s, want %s", v, got, want)
		}
	}
}
