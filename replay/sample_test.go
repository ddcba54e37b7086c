package replay

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the files under testdata/")

// sampleStart is the sample log's first instant.
var sampleStart = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

type sampleLine struct {
	at          time.Time
	ip, method  string
	path, agent string
	status      int
}

// sampleLog is the log in testdata/access.log, made here so that what it
// holds is known exactly: ten minutes of an API's nginx log (whole
// seconds, a line written as its response finishes, so a few are a
// second out of order) with
//
//   - 203.0.113.9, a health-check loop gone wrong: 5 requests a second
//     from 10:02:00 to 10:05:59, 1,200 in all;
//   - 198.51.100.23, a nightly export run by hand: 150 requests in the
//     ten seconds from 10:07:00;
//   - eight people at 192.0.2.10–17, a request every 10 s or so each;
//   - two phones behind one carrier's IPv6 /64, 2001:db8:7:1::/64, each a
//     request every 4 s or so: one key, as the middleware counts it;
//   - a line or two with no request on it, as a scanner leaves.
func sampleLog() []byte {
	rng := rand.New(rand.NewPCG(24, 11))
	var lines []sampleLine
	add := func(at time.Time, ip, method, path, agent string, status int) {
		lines = append(lines, sampleLine{at, ip, method, path, agent, status})
	}
	for s := 120; s < 360; s++ {
		for range 5 {
			add(sampleStart.Add(time.Duration(s)*time.Second), "203.0.113.9", "GET", "/api/v1/health", "healthcheck/0.3", 200)
		}
	}
	for i := range 150 {
		add(sampleStart.Add(7*time.Minute+time.Duration(i)*10*time.Second/150), "198.51.100.23", "GET", fmt.Sprintf("/api/v1/orders?page=%d", i+1), "python-requests/2.32", 200)
	}
	poisson := func(ip, agent string, mean time.Duration, paths []string) {
		at := sampleStart.Add(time.Duration(rng.Int64N(int64(mean))))
		for at.Before(sampleStart.Add(10 * time.Minute)) {
			path := paths[rng.IntN(len(paths))]
			method := "GET"
			if path == "/api/v1/cart" {
				method = "POST"
			}
			add(at, ip, method, path, agent, 200)
			at = at.Add(time.Duration(rng.ExpFloat64() * float64(mean)))
		}
	}
	browse := []string{"/api/v1/items", "/api/v1/items/42", "/api/v1/search?q=lamp", "/api/v1/cart"}
	for i := range 8 {
		poisson(fmt.Sprintf("192.0.2.%d", 10+i), "Mozilla/5.0 (X11; Linux x86_64)", 10*time.Second, browse)
	}
	poisson("2001:db8:7:1::a1", "shop-ios/4.2", 4*time.Second, browse)
	poisson("2001:db8:7:1:8e2::17", "shop-android/4.2", 4*time.Second, browse)
	slices.SortStableFunc(lines, func(a, b sampleLine) int { return a.at.Compare(b.at) })
	// A response that took a second is logged after the next second's.
	for i := 40; i+1 < len(lines); i += 97 {
		if lines[i+1].at.Sub(lines[i].at) <= time.Second {
			lines[i], lines[i+1] = lines[i+1], lines[i]
		}
	}
	var b bytes.Buffer
	for i, l := range lines {
		if i == 300 || i == 1400 {
			// A TLS probe on the plain port: nginx logs a 400 with no request.
			fmt.Fprintf(&b, "%s - - [%s] \"\\x16\\x03\\x01\" 400 150 \"-\" \"-\"\n", "192.0.2.99", l.at.Format("02/Jan/2006:15:04:05 -0700"))
		}
		fmt.Fprintf(&b, "%s - - [%s] \"%s %s HTTP/1.1\" %d %d \"-\" \"%s\"\n", l.ip, l.at.Format("02/Jan/2006:15:04:05 -0700"), l.method, l.path, l.status, 100+rng.IntN(900), l.agent)
	}
	return b.Bytes()
}

func TestSampleLogIsMadeHere(t *testing.T) {
	path := filepath.Join("testdata", "access.log")
	want := sampleLog()
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not the log sampleLog makes (go test ./replay -run SampleLog -update rewrites it)", path)
	}
}
