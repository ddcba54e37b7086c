package redisstore

// The tests name peer models (which have no Lua twin, and must be refused
// by name), so they link in the package that registers them.
import _ "github.com/ratelim/ratelim/algorithms/peers"
