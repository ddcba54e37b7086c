package trace

import (
	"testing"
)

// benchJSONLine is a line of the JSON-lines log BenchmarkReader reads, and
// benchJSONPaths the fields its "jsonl" case looks for.
const benchJSONLine = `{"time":"2026-03-01T12:00:00.042Z","level":"info","msg":"request","client":"10.3.121.2","request":{"method":"GET","path":"/api/items/42?page=2","headers":{"x-api-key":"key-0889","user-agent":"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0 Safari/537.36"}},"status":200,"bytes":142,"duration_ms":31.377}`

var benchJSONPaths = []string{"time", "request.method", "request.path", "status", "request.headers.x-api-key"}

// BenchmarkJSONExtract is one line's extraction alone, by the extractor
// that skips what no path reads and by the one that checks every byte:
//
//	go test -run '^$' -bench JSONExtract ./trace
func BenchmarkJSONExtract(b *testing.B) {
	line := []byte(benchJSONLine)
	b.Run("skipping", func(b *testing.B) {
		e := newJSONExtractor(benchJSONPaths)
		b.SetBytes(int64(len(line)))
		for range b.N {
			if err := e.extract(line); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("careful", func(b *testing.B) {
		e := newJSONExtractor(benchJSONPaths)
		b.SetBytes(int64(len(line)))
		for range b.N {
			if err := e.carefully(line); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("checking", func(b *testing.B) {
		e := newCheckingExtractor(benchJSONPaths)
		b.SetBytes(int64(len(line)))
		for range b.N {
			if err := e.extract(line); err != nil {
				b.Fatal(err)
			}
		}
	})
}
