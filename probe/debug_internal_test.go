package probe

import (
	"fmt"
	"os"
	"testing"
)

func TestDebugMismatches(t *testing.T) {
	f, err := os.Open(os.Getenv("REC"))
	if err != nil {
		t.Skip()
	}
	rec, _ := ReadRecording(f)
	obs := rec.Obs
	sortBySent(obs)
	ds, mine := ownDecisions(obs)
	m := newModel(candidate{family: familyBucket}, params{rate: 20, burst: 10})
	t0 := ds[0].t
	for i, d := range ds {
		got := m.decide(d.t)
		mark := ""
		if got != d.admitted {
			mark = "  <-- model " + map[bool]string{true: "admits", false: "refuses"}[got]
		}
		t.Logf("%4d %-8s %9.3fms lat %7.2fms %v tokens %.3f%s", mine[i].Seq, mine[i].Phase, float64(d.t-t0)/1000, float64(mine[i].Answered-mine[i].Sent)/1000, d.admitted, m.(*bucketModel).tokens, mark)
	}
}

func TestDebugFit(t *testing.T) {
	f, err := os.Open(os.Getenv("REC"))
	if err != nil {
		t.Skip()
	}
	rec, _ := ReadRecording(f)
	obs := rec.Obs
	sortBySent(obs)
	ds, mine := ownDecisions(obs)
	est, _ := estimate(ds, mine, rec.MaxRate)
	t.Logf("est %+v", est)
	for _, b := range []int64{9, 10, 11, 12} {
		ft := fitCandidate(candidate{family: familyBucket}, ds, []int64{b}, est.rate)
		t.Logf("b=%d %+v", b, ft)
	}
	for _, r := range []float64{19.9, 19.95, 20, 20.05, 20.1} {
		t.Logf("r=%g b=11: %d", r, mismatches(candidate{family: familyBucket}, params{rate: r, burst: 11}, ds, len(ds)))
	}
}

func TestDebugAnalyze(t *testing.T) {
	f, err := os.Open(os.Getenv("REC"))
	if err != nil {
		t.Skip()
	}
	rec, _ := ReadRecording(f)
	r := Analyze(rec)
	t.Logf("%s %g/s burst %d limit %d window %v conf %s %d/%d", r.Algorithm, r.Rate, r.Burst, r.Limit, r.Window, r.Confidence, r.Mismatches, r.Decisions)
}

func TestDebugTimeline(t *testing.T) {
	f, err := os.Open(os.Getenv("REC"))
	if err != nil {
		t.Skip()
	}
	rec, _ := ReadRecording(f)
	obs := rec.Obs
	sortBySent(obs)
	_, mine := ownDecisions(obs)
	t0 := mine[0].Sent
	line, phase, last := "", "", int64(0)
	for _, o := range mine {
		if o.Phase != phase || o.Sent-last > 30000 {
			t.Log(line)
			line = fmt.Sprintf("%-8s %8.3f ", o.Phase, float64(o.Sent-t0)/1e6)
			phase = o.Phase
		}
		last = o.Sent
		if o.Admitted() {
			line += "+"
		} else {
			line += "."
		}
	}
	t.Log(line)
	ds, _ := ownDecisions(obs)
	est, _ := estimate(ds, mine, rec.MaxRate)
	t.Logf("est %+v", est)
	for _, ft := range fitAll(ds, est) {
		t.Logf("%+v", ft)
	}
}

func TestDebugWindow(t *testing.T) {
	f, err := os.Open(os.Getenv("REC"))
	if err != nil {
		t.Skip()
	}
	rec, _ := ReadRecording(f)
	obs := rec.Obs
	sortBySent(obs)
	ds, mine := ownDecisions(obs)
	m := newModel(candidate{family: familySlidingClock}, params{limit: 20, window: 1000000}).(*slidingModel)
	t0 := ds[0].t
	for i, d := range ds {
		got := m.decide(d.t)
		if got != d.admitted || i < 3 {
			t.Logf("%4d %-8s %9.3fms %v model %v start %.3f n %d prev %d", mine[i].Seq, mine[i].Phase, float64(d.t-t0)/1000, d.admitted, got, float64(m.start-t0)/1000, m.n, m.prev)
		}
	}
}
