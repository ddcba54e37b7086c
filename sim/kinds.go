package sim

// The simulator builds limiters by name (a scenario's algorithm:, the
// --algorithm flag, compare's list), so it links in every package that
// registers kinds in algorithms' catalog: the peer models register
// themselves from their init. Everything that runs a scenario imports sim,
// and so knows every name `ratelim algorithms` lists.
import _ "github.com/ratelim/ratelim/algorithms/peers"
