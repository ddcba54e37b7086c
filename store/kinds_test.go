package store

// The tests build every kind in algorithms' catalog by name, the peer
// models included (a peer has no Lua twin; the memory store steps them
// like any other), so they link in the package that registers them.
import _ "github.com/ratelim/ratelim/algorithms/peers"
