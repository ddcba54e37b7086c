package main

// A digest of a scenario, so that a sweep's planning can tell two runs'
// scenarios apart without keeping them: 256 runs of 20,000 clients each
// held at once for reflect.DeepEqual took 4 GB.

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"math"
	"reflect"
	"slices"
)

// scenarioDigest is a SHA-256 of v's contents as reflect.DeepEqual sees
// them (unexported fields included, pointers followed, maps in key order
// of their own digests): two values DeepEqual calls equal have one
// digest, and two that differ another but for a collision. A function
// is only nil or not.
func scenarioDigest(v any) [32]byte {
	h := sha256.New()
	digestValue(h, reflect.ValueOf(v), 0)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// maxDigestDepth bounds the walk: a scenario is a tree a few levels
// deep, and a cycle (none is expected) ends here instead of never.
const maxDigestDepth = 64

func digestValue(h hash.Hash, v reflect.Value, depth int) {
	var buf [8]byte
	putUint := func(u uint64) {
		binary.LittleEndian.PutUint64(buf[:], u)
		h.Write(buf[:])
	}
	if depth > maxDigestDepth || !v.IsValid() {
		h.Write([]byte{0})
		return
	}
	h.Write([]byte{byte(v.Kind())})
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			putUint(1)
		} else {
			putUint(0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		putUint(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		putUint(v.Uint())
	case reflect.Float32, reflect.Float64:
		putUint(math.Float64bits(v.Float()))
	case reflect.Complex64, reflect.Complex128:
		putUint(math.Float64bits(real(v.Complex())))
		putUint(math.Float64bits(imag(v.Complex())))
	case reflect.String:
		putUint(uint64(v.Len()))
		h.Write([]byte(v.String()))
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			putUint(math.MaxUint64)
			return
		}
		putUint(uint64(v.Len()))
		for i := range v.Len() {
			digestValue(h, v.Index(i), depth+1)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			digestValue(h, v.Field(i), depth+1)
		}
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			putUint(0)
			return
		}
		putUint(1)
		if v.Kind() == reflect.Interface {
			h.Write([]byte(v.Elem().Type().String()))
		}
		digestValue(h, v.Elem(), depth+1)
	case reflect.Map:
		if v.IsNil() {
			putUint(math.MaxUint64)
			return
		}
		putUint(uint64(v.Len()))
		var pairs [][32]byte
		for it := v.MapRange(); it.Next(); {
			ph := sha256.New()
			digestValue(ph, it.Key(), depth+1)
			digestValue(ph, it.Value(), depth+1)
			var d [32]byte
			ph.Sum(d[:0])
			pairs = append(pairs, d)
		}
		slices.SortFunc(pairs, func(a, b [32]byte) int { return slices.Compare(a[:], b[:]) })
		for _, d := range pairs {
			h.Write(d[:])
		}
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if v.IsNil() {
			putUint(0)
		} else {
			putUint(1)
		}
	}
}
