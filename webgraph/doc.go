// Package webgraph is the storage of a connectivity server (book §20.4): it
// answers "which URLs does u link to?" and "which URLs link to u?" from
// memory, with the web graph compressed to a few bits per link by the
// Boldi–Vigna method, in files compatible with Java WebGraph's BVGraph (and
// so with webgraph-rs).
//
// # The BV format
//
// URLs are numbered in host-reversed lexicographic order (SortKey), so the
// pages of a site are neighbours and link to each other with small gaps.
// Each successor list is then coded against one of the previous WindowSize
// lists (the book's "encode each row in terms of the seven preceding rows"):
// blocks copied from the reference list, intervals of consecutive ids, and
// residual gaps in ζ_k code. Encoder chooses references exactly as Java
// WebGraph does, so for the same graph and parameters it writes the same
// bits: re-encoding the shared cnr-2000 files reproduces them byte for byte.
//
// BVGraph reads the files (Open, or Load from memory), sequentially with a
// NodeIterator or at random with Successors; the offsets are held in an
// Elias–Fano list and rebuilt by one sequential pass when the .offsets file
// is missing. Reference chains are followed iteratively, so graphs
// compressed with unlimited reference counts (chains thousands of lists
// long) are read without deep recursion. Every value read from a stream is
// checked: corrupt files give errors wrapping ErrFormat, never panics or
// unbounded work. Bit-level codes live in the bitio sub-package.
//
// # Connectivity store
//
// GraphStore is the query interface (out-links, in-links, degrees, URL ↔
// id). Store is the compressed implementation: the graph, its transpose
// (Transpose, computed with bounded memory by sorting spilled batches) and
// a front-coded URLMap. MemStore is the plain in-memory one. A Builder
// streams a link log of any size into the files a Store opens:
//
//	b, _ := webgraph.NewBuilder(nil)
//	defer b.Close()
//	b.AddLink("http://www.stanford.edu/alchemy", "http://www.stanford.edu/biology")
//	// ... one call per link of the crawl
//	b.Finish("/data/crawl") // crawl.urls, crawl.{graph,offsets,properties}, crawl-t.*
//	s, _ := webgraph.OpenStore("/data/crawl")
//	in, _ := webgraph.InURLs(s, "http://www.stanford.edu/biology")
//
// The examples/connectivity command serves a Store over HTTP.
//
// # Costs
//
// Sequential decoding costs a few ns per arc (about 35 instructions per arc
// on cnr-2000), and NodeIteratorRange and SplitNodeIterators let several
// goroutines scan parts of a graph at once. Successors costs decoding the
// node's list and the lists of its reference chain (at most MaxRefCount
// deep with the default compressor), plus one Elias–Fano lookup per list.
// Graphs with the default codes (γ, unary and ζ_k, as Java WebGraph writes
// unless told otherwise) take a specialised decoder that keeps the bit
// position and a 64-bit window of the stream in local variables; other
// codes take the generic one, and tests check that both agree, also on
// corrupt streams. URLMap.ID costs a binary search over bucket heads,
// URLMap.URL the decoding of one bucket of 16 URLs.
package webgraph
