package main

// A digest of a scenario, so that a sweep's planning can tell two runs'
// scenarios apart without keeping them: 256 runs of 20,000 clients each
// held at once for reflect.DeepEqual took 4 GB. maphash, not SHA-256:
// the digest is compared within one process, and SHA-256 was 60% of
// planning 64 runs of 20,000 clients.

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"reflect"
	"slices"

	"github.com/ratelim/ratelim/algorithms"
)

// digest is a scenario's digest: two 64-bit hashes under two seeds, a
// collision between 256 runs' scenarios about 2⁻¹¹² likely. The seeds
// are the process's own: a digest is compared only with others made in
// the same run of the program.
type digest [2]uint64

// digestSeeds are the two hashes' seeds.
var digestSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// digester feeds both hashes, a few kilobytes at a time: a scenario is
// mostly small fields, and a hash's Write per field costs more than the
// field.
type digester struct {
	h   [2]maphash.Hash
	buf []byte
}

func newDigester() *digester {
	d := &digester{buf: make([]byte, 0, 4096)}
	d.h[0].SetSeed(digestSeeds[0])
	d.h[1].SetSeed(digestSeeds[1])
	return d
}

func (d *digester) flush() {
	d.h[0].Write(d.buf)
	d.h[1].Write(d.buf)
	d.buf = d.buf[:0]
}

func (d *digester) uint(u uint64) {
	if len(d.buf)+8 > cap(d.buf) {
		d.flush()
	}
	d.buf = binary.LittleEndian.AppendUint64(d.buf, u)
}

func (d *digester) string(s string) {
	d.uint(uint64(len(s)))
	if len(d.buf)+len(s) > cap(d.buf) {
		d.flush()
	}
	if len(s) > cap(d.buf) {
		d.h[0].WriteString(s)
		d.h[1].WriteString(s)
		return
	}
	d.buf = append(d.buf, s...)
}

func (d *digester) sum() digest {
	d.flush()
	return digest{d.h[0].Sum64(), d.h[1].Sum64()}
}

// scenarioDigest is a digest of v's contents as reflect.DeepEqual sees
// them (unexported fields included, pointers followed, maps in the
// order of their entries' own digests): two values DeepEqual calls equal
// have one digest, and two that differ another but for a collision. A
// function is only nil or not.
func scenarioDigest(v any) digest {
	d := newDigester()
	d.value(reflect.ValueOf(v), 0)
	return d.sum()
}

// rateType is algorithms.Rate's, digested in lowest terms.
var rateType = reflect.TypeOf(algorithms.Rate{})

// gcd is the greatest common divisor of a and b, 1 when either is 0 or
// less (a rate the reader refuses, digested as it is).
func gcd(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 1
	}
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// maxDigestDepth bounds the walk: a scenario is a tree a few levels
// deep, and a cycle (none is expected) ends here instead of never.
const maxDigestDepth = 64

func (d *digester) value(v reflect.Value, depth int) {
	if depth > maxDigestDepth || !v.IsValid() {
		d.uint(math.MaxUint64 - 1)
		return
	}
	d.uint(uint64(v.Kind()))
	if v.Type() == rateType {
		// A rate as the limiter runs it: 600/m is 10/s, one token every
		// 100ms, so two values written so are one run (sim's JSON of
		// sync-interval at --rate 10/s and 600/m is byte for byte the same
		// on token-bucket, gcra, fixed-window, sliding-window and
		// leaky-bucket).
		r := v.Interface().(algorithms.Rate)
		g := gcd(r.N, int64(r.Per))
		d.uint(uint64(r.N / g))
		d.uint(uint64(int64(r.Per) / g))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			d.uint(1)
		} else {
			d.uint(0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		d.uint(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		d.uint(v.Uint())
	case reflect.Float32, reflect.Float64:
		d.uint(math.Float64bits(v.Float()))
	case reflect.Complex64, reflect.Complex128:
		d.uint(math.Float64bits(real(v.Complex())))
		d.uint(math.Float64bits(imag(v.Complex())))
	case reflect.String:
		d.string(v.String())
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			d.uint(math.MaxUint64)
			return
		}
		d.uint(uint64(v.Len()))
		for i := range v.Len() {
			d.value(v.Index(i), depth+1)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			d.value(v.Field(i), depth+1)
		}
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			d.uint(0)
			return
		}
		d.uint(1)
		if v.Kind() == reflect.Interface {
			d.string(v.Elem().Type().String())
		}
		d.value(v.Elem(), depth+1)
	case reflect.Map:
		if v.IsNil() {
			d.uint(math.MaxUint64)
			return
		}
		d.uint(uint64(v.Len()))
		var pairs []digest
		for it := v.MapRange(); it.Next(); {
			pd := newDigester()
			pd.value(it.Key(), depth+1)
			pd.value(it.Value(), depth+1)
			pairs = append(pairs, pd.sum())
		}
		slices.SortFunc(pairs, func(a, b digest) int { return slices.Compare(a[:], b[:]) })
		for _, p := range pairs {
			d.uint(p[0])
			d.uint(p[1])
		}
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if v.IsNil() {
			d.uint(0)
		} else {
			d.uint(1)
		}
	}
}
