package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/algorithms"
)

func tokenBucket(t testing.TB, n int64, burst int64) algorithms.Algorithm {
	t.Helper()
	a, err := algorithms.NewTokenBucket(algorithms.Rate{N: n, Per: time.Second}, burst)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestMemoryTakeMatchesTheStep(t *testing.T) {
	for _, name := range algorithms.Names() {
		alg, err := algorithms.New(name, algorithms.Params{Rate: algorithms.Rate{N: 7, Per: time.Second}, Burst: 3, Window: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		m := NewMemory(alg)
		var st algorithms.State
		for i := range 200 {
			now := algorithms.Time(i * 37_000)
			var want algorithms.Decision
			st, want = alg.Step(st, now, int64(i%3))
			got, err := m.Take(context.Background(), "k", now, int64(i%3))
			if err != nil || got.Decision != want || got.Policy != "" {
				t.Fatalf("%s request %d: Take = %+v, %v; want %+v", name, i, got, err, want)
			}
		}
	}
}

func TestPolicyDecidesWhenTheStoreFails(t *testing.T) {
	down := errors.New("connection refused")
	failing := limiterFunc(func(context.Context, string, algorithms.Time, int64) (Decision, error) {
		return Decision{}, down
	})
	d, err := WithPolicy(failing, FailOpen).Take(context.Background(), "k", 0, 1)
	if err != nil || !d.Allowed || d.Policy != FailOpen || !errors.Is(d.Err, down) {
		t.Errorf("fail-open: %+v, %v; want allowed by fail-open with the store's error", d, err)
	}
	d, err = WithPolicy(failing, FailClosed).Take(context.Background(), "k", 0, 1)
	if err != nil || d.Allowed || d.Policy != FailClosed || d.RetryAfter != DefaultFailClosedRetryAfter || !errors.Is(d.Err, down) {
		t.Errorf("fail-closed: %+v, %v; want rejected by fail-closed, Retry-After %v", d, err, DefaultFailClosedRetryAfter)
	}
	// A healthy store's decision passes through untouched.
	alg := tokenBucket(t, 1, 1)
	d, err = WithPolicy(NewMemory(alg), FailClosed).Take(context.Background(), "k", 0, 1)
	if err != nil || !d.Allowed || d.Policy != "" {
		t.Errorf("healthy store: %+v, %v; want allowed by the limiter", d, err)
	}
	// The caller giving up is not the store failing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cancelled := limiterFunc(func(ctx context.Context, _ string, _ algorithms.Time, _ int64) (Decision, error) {
		return Decision{}, ctx.Err()
	})
	if _, err := WithPolicy(cancelled, FailOpen).Take(ctx, "k", 0, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v, want context.Canceled", err)
	}
}

func TestParsePolicy(t *testing.T) {
	for _, s := range []string{"fail-open", "fail-closed"} {
		if p, err := ParsePolicy(s); err != nil || string(p) != s {
			t.Errorf("ParsePolicy(%q) = %q, %v", s, p, err)
		}
	}
	if _, err := ParsePolicy("fail-sideways"); err == nil || !strings.Contains(err.Error(), "fail-open or fail-closed") {
		t.Errorf("ParsePolicy(fail-sideways) error = %v", err)
	}
}

func TestNegativeCostIsAnError(t *testing.T) {
	alg := tokenBucket(t, 1, 1)
	if _, err := NewMemory(alg).Take(context.Background(), "k", 0, -1); err == nil {
		t.Error("memory: negative cost accepted")
	}
	if _, err := NewRacy(alg, NewMemory(alg)).Take(context.Background(), "k", 0, -1); err == nil {
		t.Error("racy: negative cost accepted")
	}
}

func TestMemorySweepForgetsResetKeys(t *testing.T) {
	m := NewMemory(tokenBucket(t, 10, 5)) // refills fully in 500 ms
	ctx := context.Background()
	for i := range 100 {
		if _, err := m.Take(ctx, fmt.Sprint("k", i), 0, 5); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Take(ctx, "busy", algorithms.At(time.Second), 5); err != nil {
		t.Fatal(err)
	}
	if n := m.Sweep(algorithms.At(400 * time.Millisecond)); n != 0 {
		t.Fatalf("Sweep at 400ms forgot %d keys still refilling", n)
	}
	if n := m.Sweep(algorithms.At(time.Second)); n != 100 || m.Len() != 1 || m.Keys()[0] != "busy" {
		t.Fatalf("Sweep at 1s forgot %d keys, left %v; want the 100 full buckets gone and busy kept", n, m.Keys())
	}
}

type limiterFunc func(ctx context.Context, key string, now algorithms.Time, cost int64) (Decision, error)

func (f limiterFunc) Take(ctx context.Context, key string, now algorithms.Time, cost int64) (Decision, error) {
	return f(ctx, key, now, cost)
}
