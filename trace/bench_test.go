package trace_test

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/ratelim/ratelim/trace"
)

// benchLines is the length of the logs benchmarked: enough for the
// reorder window to be full most of the time (the logs run at 1000
// requests a second), small enough to build quickly.
const benchLines = 200_000

// benchLog returns a log of benchLines requests in format f from 2000
// clients, ~1% of lines a second out of order: what a busy nginx or
// application log looks like.
func benchLog(f trace.Format) []byte {
	benchOnce.Do(func() { benchLogs = map[trace.Format][]byte{} })
	if b, ok := benchLogs[f]; ok {
		return b
	}
	rng := rand.New(rand.NewPCG(1, 1))
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	uas := []string{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0 Safari/537.36", "curl/8.5.0", "Go-http-client/2.0", `python-requests/2.31.0`}
	paths := []string{"/api/items", "/api/items/42", "/api/orders", "/static/app.js", "/health"}
	var b bytes.Buffer
	if f == trace.CSV {
		b.WriteString("time,client,key,method,path,status,bytes,ua\n")
	}
	for i := range benchLines {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		if rng.IntN(100) == 0 {
			at = at.Add(-time.Second)
		}
		c := rng.IntN(2000)
		ip := fmt.Sprintf("10.%d.%d.%d", c>>8&255, c&255, c%7)
		key := fmt.Sprintf("key-%04d", c)
		p := paths[rng.IntN(len(paths))]
		ua := uas[rng.IntN(len(uas))]
		st := []int{200, 200, 200, 429, 404}[rng.IntN(5)]
		switch f {
		case trace.Combined:
			fmt.Fprintf(&b, "%s - - [%s] \"GET %s?api_key=%s&page=%d HTTP/1.1\" %d %d \"https://shop.example/\" \"%s\"\n",
				ip, at.Format("02/Jan/2006:15:04:05 -0700"), p, key, i%10, st, 100+i%5000, ua)
		case trace.JSONL:
			fmt.Fprintf(&b, `{"time":"%s","level":"info","msg":"request","client":"%s","request":{"method":"GET","path":"%s?page=%d","headers":{"x-api-key":"%s","user-agent":"%s"}},"status":%d,"bytes":%d,"duration_ms":%.3f}`+"\n",
				at.Format(time.RFC3339Nano), ip, p, i%10, key, ua, st, 100+i%5000, rng.Float64()*50)
		case trace.CSV:
			fmt.Fprintf(&b, "%s,%s,%s,GET,%s,%d,%d,\"%s\"\n", at.Format(time.RFC3339Nano), ip, key, p, st, 100+i%5000, ua)
		case trace.ALB:
			fmt.Fprintf(&b, "https %s app/shop-lb/50dc6c495c0c9188 %s:%d 10.0.1.21:8080 0.000 0.004 0.000 %d %d 241 512 \"GET https://api.shop.example:443%s?api_key=%s HTTP/1.1\" \"%s\" ECDHE-RSA-AES128-GCM-SHA256 TLSv1.2 arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/api/73e2d6bc24d8a067 \"Root=1-65e1c3a0-0a1b2c3d4e5f60718293a4b5\" \"api.shop.example\" \"arn:aws:acm:us-east-2:123456789012:certificate/12345678-1234-1234-1234-123456789012\" 0 %s \"forward\" \"-\" \"-\" \"10.0.1.21:8080\" \"200\" \"-\" \"-\" TID_5a3c2f8e9d7b4a1c\n",
				at.Add(4*time.Millisecond).Format("2006-01-02T15:04:05.000000Z"), ip, 40000+i%20000, st, st, p, key, ua, at.Format("2006-01-02T15:04:05.000000Z"))
		}
	}
	benchLogs[f] = b.Bytes()
	return b.Bytes()
}

var (
	benchOnce sync.Once
	benchLogs map[trace.Format][]byte
)

var benchCases = []struct {
	name   string
	format trace.Format
	key    string
	fields trace.Fields
}{
	{"combined", trace.Combined, "ip", trace.Fields{}},
	{"combined-query", trace.Combined, "query:api_key", trace.Fields{}},
	{"jsonl", trace.JSONL, "request.headers.x-api-key", trace.Fields{Method: "request.method", Path: "request.path"}},
	{"jsonl-ip", trace.JSONL, "ip:client", trace.Fields{Method: "request.method", Path: "request.path"}},
	{"csv", trace.CSV, "key", trace.Fields{}},
	{"alb", trace.ALB, "ip", trace.Fields{}},
}

// BenchmarkReader reads each log through Reader.Next: splitting lines,
// parsing the time, finding the key, and the reorder window.
func BenchmarkReader(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			data := benchLog(bc.format)
			key, err := trace.ParseKey(bc.format, bc.key)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			lines := 0
			for range b.N {
				r, err := trace.NewReader(bytes.NewReader(data), bc.name, trace.Options{Format: bc.format, Key: key, Fields: bc.fields})
				if err != nil {
					b.Fatal(err)
				}
				for {
					_, err := r.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					lines++
				}
			}
			b.ReportMetric(float64(lines)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}

// BenchmarkScanner is the floor: bufio.Scanner splitting the same bytes
// into lines and doing nothing with them.
func BenchmarkScanner(b *testing.B) {
	for _, f := range []trace.Format{trace.Combined, trace.JSONL, trace.CSV, trace.ALB} {
		b.Run(f.String(), func(b *testing.B) {
			data := benchLog(f)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			lines := 0
			for range b.N {
				sc := bufio.NewScanner(bytes.NewReader(data))
				for sc.Scan() {
					lines++
				}
			}
			b.ReportMetric(float64(lines)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}

// BenchmarkEncodingCSV is what encoding/csv costs only to split the CSV
// log into fields, for comparison with the Reader's own splitter.
func BenchmarkEncodingCSV(b *testing.B) {
	data := benchLog(trace.CSV)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	lines := 0
	for range b.N {
		cr := csv.NewReader(bytes.NewReader(data))
		cr.ReuseRecord = true
		for {
			if _, err := cr.Read(); err != nil {
				break
			}
			lines++
		}
	}
	b.ReportMetric(float64(lines)/b.Elapsed().Seconds(), "lines/s")
}
