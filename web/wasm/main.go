//go:build js && wasm

// Command wasm is the playground's simulator for the browser: built with
// GOOS=js GOARCH=wasm, it puts package web's functions on the page as
//
//	globalThis.ratelim = {version, builtins(), run(stateJSON), frame(t),
//	                      choices(stateJSON, name[, forB]), written(stateJSON),
//	                      encode(stateJSON), decode(fragment)}
//
// each taking and returning strings of JSON (frame takes a number of
// seconds, or its text): run → a web.Response; frame → a web.FrameView;
// choices → a web.ChoicesView (the values of a choice control that run,
// run A's or, with forB true, run B's, asked when its list opens); written → a web.WrittenView (Download
// YAML's text); encode → {"fragment"}; decode → {"state"}; builtins →
// [web.BuiltinInfo].
// A call never throws for bad input: what cannot be used comes back as
// {"error": {"text": ...}}, and so does a panic, recovered, as "internal
// error: ...". Once they are in place it calls globalThis.ratelimReady()
// if the page defined it, and then waits for calls for as long as the
// page lives.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall/js"

	"github.com/ratelim/ratelim/web"
)

// maxStateJSON bounds the JSON run and encode read: a State's YAML is at
// most web.MaxYAML, which JSON's escapes can make up to six times longer
// at worst.
const maxStateJSON = 8 * web.MaxYAML

// memoryLimit is the Go runtime's soft memory limit in the tab:
// web.MaxMemory, which the simulator's estimate of a run is held to, and
// a margin for what is not the run's (the program, the response's SVG
// and JSON, a frame's). sim's estimate counts on the limit (sim/budget.go:
// the collector works harder near it rather than let the heap grow to
// twice what is live, as GOGC=100 alone does); without it a run
// estimated within 256 MiB could take about 500 MiB of a 32-bit heap,
// which never shrinks, and running out of it kills the program for
// every later call, not just this one.
const memoryLimit = web.MaxMemory + 128<<20

func main() {
	debug.SetMemoryLimit(memoryLimit)
	var playground web.Playground
	api := map[string]any{
		"version":  version(),
		"builtins": bridge(func([]js.Value) any { return web.Builtins() }),
		"run": bridge(func(args []js.Value) any {
			s, err := state(args)
			if err != nil {
				// Frame answers for the run the page shows: none now.
				playground.Forget()
				return errorOf(err)
			}
			return playground.Run(context.Background(), s)
		}),
		"frame": bridge(func(args []js.Value) any {
			t, err := seconds(args)
			if err != nil {
				return errorOf(err)
			}
			f, err := playground.Frame(t)
			if err != nil {
				return errorOf(err)
			}
			return f
		}),
		"choices": bridge(func(args []js.Value) any {
			s, err := state(args)
			if err != nil {
				return errorOf(err)
			}
			if len(args) < 2 || args[1].Type() != js.TypeString {
				return errorOf(errors.New("choices: want a control's name after the state, e.g. \"algorithm\""))
			}
			// A third argument, true, asks for run B's.
			forB := len(args) > 2 && args[2].Type() == js.TypeBoolean && args[2].Bool()
			return playground.Choices(s, args[1].String(), forB)
		}),
		"written": bridge(func(args []js.Value) any {
			s, err := state(args)
			if err != nil {
				return errorOf(err)
			}
			return playground.Written(s)
		}),
		"encode": bridge(func(args []js.Value) any {
			s, err := state(args)
			if err != nil {
				return errorOf(err)
			}
			fragment, err := web.Encode(s)
			if err != nil {
				return errorOf(err)
			}
			return map[string]string{"fragment": fragment}
		}),
		"decode": bridge(func(args []js.Value) any {
			s, err := web.Decode(text(args))
			if err != nil {
				return errorOf(err)
			}
			return map[string]web.State{"state": s}
		}),
	}
	js.Global().Set("ratelim", js.ValueOf(api))
	if ready := js.Global().Get("ratelimReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	select {}
}

// bridge is f as a JavaScript function returning its value as a string
// of JSON; a panic in f is recovered into an error, so a call never
// throws.
func bridge(f func(args []js.Value) any) js.Func {
	return js.FuncOf(func(_ js.Value, args []js.Value) (out any) {
		defer func() {
			if v := recover(); v != nil {
				out = encoded(errorOf(fmt.Errorf("internal error: %v", v)))
			}
		}()
		return encoded(f(args))
	})
}

// encoded is v as JSON text, with <, > and & as they are (the page puts
// text in with textContent, and SVG is ours).
func encoded(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		text, _ := json.Marshal("internal error: " + err.Error()) // a string always encodes
		return `{"error":{"text":` + string(text) + `}}`
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// errorView is what a call that failed returns.
type errorView struct {
	Error web.ErrorView `json:"error"`
}

func errorOf(err error) errorView { return errorView{Error: web.ErrorView{Text: err.Error()}} }

// text is the first argument as a string, "" when it is none.
func text(args []js.Value) string {
	if len(args) == 0 || args[0].Type() != js.TypeString {
		return ""
	}
	return args[0].String()
}

// state reads the first argument, a State as JSON: every field known,
// nothing after it.
func state(args []js.Value) (web.State, error) {
	if len(args) == 0 || args[0].Type() != js.TypeString {
		return web.State{}, errors.New("state: want a string of JSON, e.g. {\"builtin\": \"partition\"}")
	}
	data := args[0].String()
	if len(data) > maxStateJSON {
		return web.State{}, fmt.Errorf("state: %d bytes of JSON (want at most %d)", len(data), maxStateJSON)
	}
	var s web.State
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return web.State{}, fmt.Errorf("state: %v (want JSON with builtin or yaml, set, vs, predict)", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return web.State{}, errors.New("state: more than one JSON value (want one object)")
	}
	return s, nil
}

// seconds reads frame's argument: a number, or its text.
func seconds(args []js.Value) (float64, error) {
	if len(args) > 0 {
		switch args[0].Type() {
		case js.TypeNumber:
			return args[0].Float(), nil
		case js.TypeString:
			if t, err := strconv.ParseFloat(strings.TrimSpace(args[0].String()), 64); err == nil {
				return t, nil
			}
		}
	}
	return 0, errors.New("frame: want a number of seconds, e.g. 12.5")
}

// version is the module's version and the commit it was built from, as
// far as the build recorded them: what the page's footer names.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			v += "+dirty"
		}
	}
	return v
}
