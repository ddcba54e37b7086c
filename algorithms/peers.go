package algorithms

// peerCatalog lists the models of limiter libraries people deploy, after
// the six exact algorithms in [Catalog]. Each is one file, peer_NAME.go,
// whose doc comment says what it models and where from, with its tests
// beside it: a differential test against the real library where it is a Go
// module, a table built from the source's own arithmetic where it is not.
var peerCatalog = []Info{}
