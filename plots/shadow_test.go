package plots

import (
	"bytes"
	"strings"
	"testing"
)

// A dark launch's picture shows when the limit was in shadow mode: a span
// shaded in every panel and labelled in the lane above them, up to the
// instant it began to enforce, so that the admissions over the limit
// before it and the refusals after it read as one lesson.
func TestShadowModeIsShadedAndLabelled(t *testing.T) {
	r := builtin(t, "window-boundary", nil)
	shadowed := *r
	shadowed.Limit.Shadow, shadowed.Limit.ShadowUntilS = true, 2
	spans := spansOf(&shadowed)
	if len(spans) != 1 || spans[0].Kind != "shadow" || spans[0].StartS != 0 || spans[0].EndS != 2 {
		t.Fatalf("spans %+v, want one shadow span from 0 to 2 s", spans)
	}
	var svg bytes.Buffer
	if err := Timeline(&svg, &shadowed, Options{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Shadow mode", "nothing refused until 2s, enforced after"} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("the SVG does not say %q", want)
		}
	}
	if spans := spansOf(r); len(spans) != len(r.Faults) {
		t.Errorf("a run without shadow mode has spans %+v, want its faults alone", spans)
	}
}
