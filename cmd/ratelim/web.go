package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/internal/outfile"
	"github.com/ratelim/ratelim/internal/words"
	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/web"
	"github.com/ratelim/ratelim/web/site"
)

// webOptions are `ratelim web`'s flags.
type webOptions struct {
	streams
	// Scenario is the built-in or file the page opens with; "" the page's
	// default.
	Scenario string
	// Export is the directory to write the site into instead of serving
	// it.
	Export string
	// Addr is the loopback address to serve on.
	Addr string
	// NoOpen leaves the browser alone: the URL is printed only.
	NoOpen bool
	// Sets are the --set PATH=VALUE flags, the page's settings.
	Sets []string
	// Predict opens the page in predict-then-see mode: the scenario's
	// question asked, its result hidden until revealed.
	Predict bool
}

func newCmdWeb(s streams, runF func(*webOptions) error) *cobra.Command {
	opts := &webOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "web [SCENARIO|FILE]",
		Short: "Open the playground: the simulator in a browser tab",
		Long: `Serve the browser playground on loopback and open it: the simulator compiled
to WebAssembly, with a page to pick a built-in or edit a scenario's YAML,
move the limit, topology and faults with controls, play the run over time,
set two runs side by side, and ask a class to predict a result before it is
shown. Every run is the one 'ratelim sim' makes: the same code, the same
numbers. The page's URL carries the scenario and its settings, so a link
opens the same run; "download YAML" takes it back to the command line.

SCENARIO (a built-in name or a YAML file) and --set PATH=VALUE open the page
on that scenario with those settings; --predict opens it asking the
scenario's question, its result hidden until the class has guessed. The
server listens on loopback only and serves nothing but the page's files;
stop it with ctrl-c. --export DIR writes the page's five files instead, for
file:// or any static host: the page loads nothing from anywhere else.

The simulator is built from ratelim's source with the Go toolchain (20-40 s
the first time), unless this ratelim was built with it inside:
  go generate ./web/site && go build -tags playground ./cmd/ratelim`,
		Example: `  ratelim web
  ratelim web runaway-healthcheck --set limit.burst=20
  ratelim web nat --predict
  ratelim web my-scenario.yaml --no-open
  ratelim web --export /tmp/playground`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return badInput("want at most one scenario name or file, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Scenario = args[0]
			}
			if cmd.Flags().Changed("export") && opts.Export == "" {
				// "" is how an unset shell variable arrives: export nowhere,
				// rather than serve and block a script that meant to export.
				return badInput("--export: empty (want a directory)")
			}
			if cmd.Flags().Changed("addr") && opts.Export != "" {
				return badInput("--addr: --export writes the site and serves nothing (want one of --export, --addr)")
			}
			if cmd.Flags().Changed("no-open") && opts.Export != "" {
				return badInput("--no-open: --export opens nothing (want one of --export, --no-open)")
			}
			if runF != nil {
				return runF(opts)
			}
			return webRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Export, "export", "", "write the site into this directory (created if missing) instead of serving it")
	f.StringVar(&opts.Addr, "addr", "127.0.0.1:0", "the loopback address to serve on (port 0: a free one)")
	f.BoolVar(&opts.NoOpen, "no-open", false, "print the URL without opening a browser")
	f.StringArrayVar(&opts.Sets, "set", nil, "PATH=VALUE: a setting the page opens with (repeatable), e.g. limit.burst=20")
	f.BoolVar(&opts.Predict, "predict", false, "open in predict-then-see mode: the scenario's question first, its result hidden until revealed")
	cmd.MarkFlagDirname("export")
	return cmd
}

// webPlan is what `ratelim web` does, checked before the site is built:
// the URL's fragment (the scenario and its settings, "" for the page's
// default), and where the site goes.
type webPlan struct {
	Fragment string
	Export   string // a directory, or "" to serve
	Addr     string
	Open     bool
}

// planWeb checks opts and opens the scenario, building nothing.
func planWeb(o *webOptions) (*webPlan, error) {
	p := &webPlan{Export: o.Export, Addr: o.Addr, Open: !o.NoOpen}
	if o.Export == "" {
		if err := checkLoopback(o.Addr); err != nil {
			return nil, err
		}
	} else if err := site.CheckExport(o.Export); err != nil {
		// Before the build: a mistake here costs no 20–40 s.
		var unusable *outfile.UnusableError
		if errors.As(err, &unusable) && unusable.Path == o.Export {
			return nil, badInput("--export %s: %v", escape.Text(o.Export), unusable.Err)
		}
		return nil, usageError{err}
	}
	frag, err := webFragment(o.Scenario, o.Sets, o.Predict)
	if err != nil {
		return nil, err
	}
	p.Fragment = frag
	return p, nil
}

// checkLoopback refuses an address other machines could reach: the
// playground is for this machine's browser (to share it, --export it).
func checkLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return badInput("--addr %s: %v (want 127.0.0.1:PORT, [::1]:PORT or localhost:PORT)", escape.Text(addr), addrCause(err))
	}
	if _, err := net.LookupPort("tcp", port); err != nil || strings.HasPrefix(port, "-") {
		return badInput("--addr %s: port %q is not a port (want a number from 0 to 65535; 0 picks a free one)", escape.Text(addr), escape.Text(port))
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	why := "other machines could reach it"
	if host == "" {
		why = "no host listens on every interface, where other machines could reach it"
	}
	return badInput("--addr %s: the playground is served on loopback only: %s (want 127.0.0.1:PORT, [::1]:PORT or localhost:PORT; to share the page, --export DIR and put the files on a static host)", escape.Text(addr), why)
}

// addrCause is net.SplitHostPort's error without the address, which the
// message already names.
func addrCause(err error) string {
	var ae *net.AddrError
	if errors.As(err, &ae) {
		return ae.Err
	}
	return err.Error()
}

// opener is the command that opens a URL in the desktop's browser on
// goos, and its arguments before the URL.
func opener(goos string) (string, []string) {
	switch goos {
	case "darwin":
		return "open", nil
	case "windows":
		// start is cmd.exe's, and would read & in a URL as its own.
		return "rundll32", []string{"url.dll,FileProtocolHandler"}
	}
	return "xdg-open", nil
}

// webFragment is the URL fragment that opens the page on name (a
// built-in by name, a file by its text) with sets, predicting or not: ""
// when there is nothing to say (the page's default). The scenario is
// opened and the settings applied here, so that a mistake is the command
// line's, with the file's line, before anything is built.
func webFragment(name string, sets []string, predict bool) (string, error) {
	if name == "" {
		if len(sets) > 0 {
			return "", badInput("--set: no scenario to set it on (want ratelim web SCENARIO --set PATH=VALUE)")
		}
		if !predict {
			return "", nil
		}
		frag, err := web.Encode(web.State{Predict: true})
		if err != nil {
			return "", err
		}
		return frag, nil
	}
	over := overrides{paths: sets}
	settings, err := over.settings()
	if err != nil {
		return "", err
	}
	if name == "-" {
		return "", badInput("-: the playground opens a built-in or a file, not standard input (want a name or a path)")
	}
	file, err := scenarios.Open(name)
	if err != nil {
		return "", usageError{err}
	}
	if _, err := scenarios.Apply(file, settings); err != nil {
		return "", usageError{err}
	}
	state := web.State{Predict: predict}
	if file.Path == "" && slices.Contains(scenarios.Builtin(), name) {
		state.Builtin = name
	} else {
		state.YAML = string(file.Source)
		// The file's name, not its path: the link may leave this machine.
		state.FileName = filepath.Base(name)
	}
	for _, s := range settings {
		state.Settings = append(state.Settings, web.Setting{Name: s.Name, Value: s.Value})
	}
	// The page's bounds are a tab's, tighter than ratelim sim's (10,000
	// clients, 2,000,000 requests): a scenario it would refuse is refused
	// here, before the build.
	if err := web.Check(state); err != nil {
		return "", usageError{fmt.Errorf("the playground would not run this: %w", err)}
	}
	frag, err := web.Encode(state)
	if err != nil {
		return "", badInput("%s: %v", escape.Text(name), err)
	}
	return frag, nil
}

// webRun builds the site and exports or serves it.
func webRun(ctx context.Context, o *webOptions) error {
	plan, err := planWeb(o)
	if err != nil {
		return err
	}
	var ln net.Listener
	if plan.Export == "" {
		// Listen before the build: a port in use is found at once, not
		// after 20–40 s of compiling.
		if ln, err = listen(plan.Addr); err != nil {
			return err
		}
		defer ln.Close()
	}
	s, err := site.Build(ctx, site.Options{Progress: o.ErrOut})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	fmt.Fprintf(o.ErrOut, "the simulator and page: %s\n", s.Origin)
	if plan.Export != "" {
		return exportSite(o, s, plan)
	}
	return serveSite(ctx, o, s, ln, plan, openBrowser)
}

// exportSite writes the site and says how to open it.
func exportSite(o *webOptions, s *site.Site, plan *webPlan) error {
	paths, err := s.Export(plan.Export)
	for _, p := range paths {
		b, _ := s.File(filepath.Base(p))
		fmt.Fprintf(o.Out, "wrote %s (%s)\n", escape.Text(p), words.Bytes(int64(len(b))))
	}
	var unusable *outfile.UnusableError
	if errors.As(err, &unusable) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(filepath.Join(plan.Export, site.IndexFile))
	if err != nil {
		return err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), Fragment: plan.Fragment}
	fmt.Fprintf(o.Out, "open %s\nin a browser, or put the %d files on any static host: the page loads nothing else.\n", u.String(), len(site.Files))
	return nil
}

// listen opens the loopback address the playground is served on.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		// The *net.OpError repeats the address the message names.
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			err = op.Err
		}
		return nil, badInput("--addr %s: %v (want a free port, or port 0 for any)", escape.Text(addr), err)
	}
	return ln, nil
}

// serveSite serves s on ln (plan.Addr, opened by listen) until ctx is
// done (ctrl-c), printing the URL and, unless told not to, opening it
// with open.
func serveSite(ctx context.Context, o *webOptions, s *site.Site, ln net.Listener, plan *webPlan, open func(string) error) error {
	u := url.URL{Scheme: "http", Host: ln.Addr().String(), Path: "/", Fragment: plan.Fragment}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(o.Out, "the playground is at %s\n(ctrl-c stops it)\n", u.String())
	if plan.Open {
		if err := open(u.String()); err != nil {
			fmt.Fprintf(o.ErrOut, "ratelim: could not open a browser (%v): open the URL above yourself\n", err)
		}
	}
	select {
	case err := <-served:
		return fmt.Errorf("the playground's server stopped: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(shutdown)
	return ctx.Err()
}

// openBrowser opens url with the desktop's opener (xdg-open; open on
// macOS; rundll32's URL handler on Windows), without waiting for the
// browser; no opener is an error the caller reports and goes on from.
func openBrowser(url string) error {
	name, args := opener(runtime.GOOS)
	path, err := exec.LookPath(name)
	if err != nil {
		return fmt.Errorf("no %s here", name)
	}
	cmd := exec.Command(path, append(args, url)...)
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() // reaped whenever the opener exits; ratelim does not wait for it
	return nil
}
