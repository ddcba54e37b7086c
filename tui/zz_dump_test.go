package tui

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/scenarios"
)

// TestZZDump prints frames of DUMP=name at DUMPSIZE=WxH at DUMPAT seconds.
func TestZZDump(t *testing.T) {
	name := os.Getenv("DUMP")
	if name == "" {
		t.Skip()
	}
	w, h := 80, 24
	if s := os.Getenv("DUMPSIZE"); s != "" {
		fmt.Sscanf(s, "%dx%d", &w, &h)
	}
	for _, n := range strings.Split(name, ",") {
		f, err := scenarios.Open(n)
		if err != nil {
			t.Fatal(err)
		}
		var m Model
		if vs := os.Getenv("DUMPVS"); vs != "" {
			b := f.Scenario
			b.Topology.OnError = "fail-closed"
			var err error
			m, err = NewModel(f.Scenario, Options{NoColor: true, Versus: &b, Labels: [2]string{"on_error=fail-open", "on_error=fail-closed"}})
			if err != nil {
				t.Fatal(err)
			}
			m = send(t, m, size(w, h))
		} else {
			m = send(t, newTestModel(t, f.Scenario, os.Getenv("DUMPCOLOR") == ""), size(w, h))
		}
		d := f.Scenario.Duration
		if s := os.Getenv("DUMPAT"); s != "" {
			x, _ := strconv.ParseFloat(s, 64)
			d = time.Duration(x * float64(time.Second))
		}
		m = at(t, m, d)
		fmt.Println(m.View())
		fmt.Println(strings.Repeat("=", w))
	}
}
