package site

// `go generate ./web/site` builds the simulator from this checkout and
// writes it, with the wasm_exec.js of the Go that built it, into gen/
// (ignored by git), where embedded.go embeds it into a ratelim built with
// -tags playground:
//
//	go generate ./web/site && go build -tags playground ./cmd/ratelim
//
//go:generate go run ./internal/gen -o gen
