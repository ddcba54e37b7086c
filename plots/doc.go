// Package plots draws what a simulated run did, from its sim.Result alone
// (never from the simulator's internals), with gonum.org/v1/plot, as PNG
// or SVG written to an io.Writer.
//
// [Timeline] is the figure of one run. Time runs left to right in seconds,
// shared by a stack of panels: first the faults, each a labelled bar whose
// window is shaded down through every panel; then one panel per client
// (or per limiter key) showing, step by step, how many requests were
// allowed and rejected, how many of those the fail policy decided while
// the store was failing, the retries, and the configured limit per step
// (rate × step) as a dashed line; then the limiter's state — how many
// requests each key could still make, in each copy of the store, so that
// per-server jars or the two sides of a split brain show as lines that
// part; and last, when anything waited, the latency per step. Reading
// down one shaded window tells you what every client saw during that
// fault. Where what was sent dwarfs what was admitted, the counts are on
// a log scale, so the admitted line still reads against the limit.
//
// [CompareGrid] is the figure of `ratelim compare`: a heat map of
// algorithms by topologies, each cell what was admitted as a multiple of
// the limit.
//
// The colours are the Okabe–Ito palette, which stays distinct under the
// common colour blindnesses, and a meaning keeps its colour everywhere:
// allowed is always bluish green. Legends sit above the panels or beside
// them, never on the data. [WriteFile] writes a figure to a file all or
// nothing.
package plots
