package route_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/route"
)

// TestBreaker walks a breaker of 3 failures and a 1 s cooldown through a
// store that stops answering at 0 s (each call waits a 100 ms timeout)
// and answers again from 2.5 s, with a call every 100 ms: what each call
// meets, "w" waited for the store, "x" failed at once.
func TestBreaker(t *testing.T) {
	b := route.Breaker{Failures: 3, Cooldown: algorithms.At(time.Second)}
	var got strings.Builder
	for i := range 40 {
		at := algorithms.At(time.Duration(i) * 100 * time.Millisecond)
		if !b.Allow(at) {
			got.WriteByte('x')
			continue
		}
		got.WriteByte('w')
		failed := at < algorithms.At(2500*time.Millisecond)
		b.Done(at, at+algorithms.At(100*time.Millisecond), failed)
	}
	// 0–0.2 s: three calls wait and fail; the third's failure, known at
	// 0.3 s, opens it until 1.3 s; the probe at 1.3 s fails (known at
	// 1.4 s): open until 2.4 s; the probe at 2.4 s fails too, open until
	// 3.5 s; the probe at 3.5 s succeeds and it closes.
	want := "www" + strings.Repeat("x", 10) + "w" + strings.Repeat("x", 10) + "w" + strings.Repeat("x", 10) + "wwwww"
	if got.String() != want {
		t.Errorf("calls\n got %s\nwant %s", got.String(), want)
	}
	if b.Opened != 3 || b.ShortCircuited != 30 {
		t.Errorf("opened %d times, short-circuited %d calls; want 3 and 30", b.Opened, b.ShortCircuited)
	}
	var zero route.Breaker
	for i := range 10 {
		if !zero.Allow(algorithms.Time(i)) {
			t.Fatalf("the zero breaker refused a call")
		}
		zero.Done(algorithms.Time(i), algorithms.Time(i+1), true)
	}
}
