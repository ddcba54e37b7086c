package trace_test

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ratelim/ratelim/trace"
)

func Example() {
	const log = `192.0.2.1 - - [01/Mar/2026:12:00:00 +0000] "GET /api/items?api_key=alpha HTTP/1.1" 200 512 "-" "curl/8.5.0"
192.0.2.1 - - [01/Mar/2026:12:00:01 +0000] "GET /api/items?api_key=alpha HTTP/1.1" 200 512 "-" "curl/8.5.0"
2001:db8:1:2::7 - - [01/Mar/2026:12:00:00 +0000] "POST /api/orders HTTP/1.1" 201 87 "-" "Go-http-client/2.0"
`
	key, _ := trace.ParseKey(trace.Combined, "ip")
	r, err := trace.NewReader(strings.NewReader(log), "access.log", trace.Options{Format: trace.Combined, Key: key})
	if err != nil {
		fmt.Println(err)
		return
	}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(rec.Line, rec.At.Format(time.TimeOnly), rec.Key, rec.Method, rec.Path, rec.Status)
	}
	// Output:
	// 1 12:00:00 ip:192.0.2.1 GET /api/items 200
	// 3 12:00:00 ip:2001:db8:1:2::/64 POST /api/orders 201
	// 2 12:00:01 ip:192.0.2.1 GET /api/items 200
}

func ExamplePeaks() {
	// Two keys: one sends 3 requests within a second, one sends 10.
	peaks, _ := trace.NewPeaks(time.Second, 2, time.Second) // windows of 1s; bursts at 2/s
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 3 {
		peaks.Add("small", t0.Add(time.Duration(i)*300*time.Millisecond))
	}
	for i := range 10 {
		peaks.Add("big", t0.Add(time.Duration(i)*100*time.Millisecond))
	}
	for _, kp := range peaks.Keys() {
		fmt.Printf("%s: %d requests, at most %d in 1s, burst %d at 2/s\n", kp.Key, kp.Requests, kp.InWindow, kp.Burst)
	}
	// Output:
	// big: 10 requests, at most 10 in 1s, burst 9 at 2/s
	// small: 3 requests, at most 3 in 1s, burst 2 at 2/s
}
