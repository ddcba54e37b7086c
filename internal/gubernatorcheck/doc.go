// Package gubernatorcheck runs the real gubernator v2.13.0 (in process, on
// loopback) against the GLOBAL cases in testdata/cases.json and keeps what it
// answered in testdata/global.golden.json, so that ratelim's owner topology
// can be replayed against the library's own answers.
//
// It is a separate module so that gubernator and its dependencies (grpc,
// etcd, k8s client-go) stay out of the main module's go.sum. It has no
// non-test code; see global_test.go and README.md.
package gubernatorcheck
