// Command ratelim replays rate-limiter scenarios against every algorithm and
// store topology, and shows what each client experienced.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}))
}
