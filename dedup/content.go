package dedup

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/crawlkit/crawlkit/shingle"
)

// Doc is a fetched document as the "content seen?" test needs it.
type Doc struct {
	// URL is where the document was fetched (canonical form preferred).
	URL string
	// Text is the document's text as extracted by the parser. It is only
	// read during the call.
	Text []byte
}

// Match is the answer of ContentSeen.Seen.
type Match struct {
	// Seen reports whether the same or near-identical content was seen
	// before (at URL). If not, the document has been recorded.
	Seen bool
	// Near reports a near-duplicate (Seen, but the normalised texts
	// differ).
	Near bool
	// URL is the URL the matching content was first seen at ("" unless
	// Seen).
	URL string
	// Of is the fingerprint of the matching stored document (0 unless
	// Seen).
	Of uint64
	// Similarity is the estimated Jaccard similarity of the shingle sets
	// (1 for an exact duplicate, 0 unless Seen).
	Similarity float64
	// Fingerprint is the fingerprint of this document's normalised text
	// (TextFingerprint). When the document was recorded, keep it with the
	// URL (§20.2.1: "save the fingerprint/shingle of the document in the
	// URL frontier") so a re-crawl that finds the page changed can
	// Forget it.
	Fingerprint uint64
}

// ContentSeen is the "content seen?" test of the crawl loop (IIR
// §20.2.1): has a document with the same, or nearly the same, content
// been fetched before, and where? Seen is an atomic test-and-add: among
// concurrent calls with duplicate content exactly one records it.
// Implementations are safe for concurrent use.
//
// Implementations: Content (exact fingerprints and MinHash
// near-duplicates, the default) and ExactContent (exact fingerprints
// only).
type ContentSeen interface {
	// Seen reports whether doc's content was seen before; if not, it
	// records doc.
	Seen(ctx context.Context, doc Doc) (Match, error)
	// Forget removes the recorded document whose Match.Fingerprint was fp
	// (continuous crawling: the page changed). Forgetting an unknown
	// fingerprint is not an error.
	Forget(ctx context.Context, fp uint64) error
}

// TextFingerprint returns the exact-duplicate fingerprint of a text: XXH64
// (seed 0) of its words (shingle.Tokenizer: lowercase, punctuation
// dropped) joined by single spaces, which is what
// shingle.Sketcher.Normalized returns. Texts that differ only in case,
// punctuation and spacing have the same fingerprint. Cost: one pass over
// text; no allocation.
func TextFingerprint(text []byte) uint64 {
	var d xxhash.Digest
	d.Reset()
	var t shingle.Tokenizer
	t.Reset(text)
	for first := true; t.Next(); first = false {
		if !first {
			d.Write(space)
		}
		d.Write(t.Token())
	}
	return d.Sum64()
}

var space = []byte{' '}

// ContentOptions configures Content. The zero value means all defaults.
type ContentOptions struct {
	// Threshold is the estimated Jaccard similarity of shingle sets at or
	// above which a document is a near-duplicate. Default 0.8.
	Threshold float64
	// Sketch configures shingling and MinHash (default K=128, W=4). W=4
	// suits page-length texts; use smaller W for very short ones.
	Sketch shingle.Options
	// LSH overrides the banding (Bands, Rows, weights); K and Threshold
	// are taken from Sketch and Threshold. The default weights are 0.1
	// for false positives and 0.9 for false negatives (at K=128: 14 bands
	// of 9 rows, 99.5% of pairs at J = 0.88 become candidates) because
	// every candidate is confirmed by its estimated Jaccard similarity, so
	// a false candidate costs only a signature comparison while a missed
	// one is a missed duplicate.
	LSH shingle.LSHOptions
	// MaxHamming, if positive, also requires simhashes within that many
	// bits (Henzinger's combined filter). Default 0: Jaccard only.
	MaxHamming int
}

// Content is the default ContentSeen: an exact fingerprint table
// (TextFingerprint) plus a near-duplicate index (shingle.NearIndex: LSH
// candidates confirmed by estimated Jaccard ≥ Threshold). Memory per
// recorded document: the signature (8·K bytes), its band keys and LSH
// entries (16 bytes per band), map entries and the URL; about 1.9 KB
// at K=128. Seen costs one tokenizing pass (the fingerprint is taken from
// the sketcher's normalised text) and an LSH query, under a lock held
// only for the query and the insert. Safe for concurrent use.
type Content struct {
	sketchers sync.Pool
	near      *shingle.NearIndex
	simhash   bool // the near index confirms by simhash

	k int // MinHash values per signature

	mu     sync.Mutex
	docs   map[uint64]string // fingerprint → URL first seen at
	log    io.Writer         // see LogTo
	logBuf []byte
}

var _ ContentSeen = (*Content)(nil)

// NewContent returns an empty Content (nil opts means all defaults).
func NewContent(opts *ContentOptions) (*Content, error) {
	var o ContentOptions
	if opts != nil {
		o = *opts
	}
	if o.Threshold == 0 {
		o.Threshold = 0.8
	}
	sk, err := shingle.NewSketcher(&o.Sketch)
	if err != nil {
		return nil, &Error{Op: "NewContent", Err: err}
	}
	lsh := o.LSH
	lsh.K, lsh.Threshold = sk.Options().K, o.Threshold
	if lsh.FPWeight == 0 && lsh.FNWeight == 0 {
		lsh.FPWeight, lsh.FNWeight = 0.1, 0.9
	}
	near, err := shingle.NewNearIndex(&shingle.NearOptions{LSH: lsh, MinJaccard: o.Threshold, MaxHamming: o.MaxHamming})
	if err != nil {
		return nil, &Error{Op: "NewContent", Err: err}
	}
	skOpts := sk.Options()
	c := &Content{near: near, simhash: o.MaxHamming > 0, k: skOpts.K, docs: make(map[uint64]string)}
	c.sketchers.New = func() any {
		s, _ := shingle.NewSketcher(&skOpts) // validated above
		return s
	}
	c.sketchers.Put(sk)
	return c, nil
}

// Seen implements ContentSeen.
func (c *Content) Seen(ctx context.Context, doc Doc) (Match, error) {
	if err := ctx.Err(); err != nil {
		return Match{}, &Error{Op: "Seen", Subject: doc.URL, Err: err}
	}
	sk := c.sketchers.Get().(*shingle.Sketcher)
	var sig shingle.Signature
	var sh uint64
	if c.simhash {
		sig, sh = sk.AppendSketchSimhash(nil, doc.Text)
	} else {
		sig = sk.Sketch(doc.Text)
	}
	fp := xxhash.Sum64(sk.Normalized()) // = TextFingerprint(doc.Text)
	c.sketchers.Put(sk)

	c.mu.Lock()
	defer c.mu.Unlock()
	if url, ok := c.docs[fp]; ok {
		return Match{Seen: true, URL: url, Of: fp, Similarity: 1, Fingerprint: fp}, nil
	}
	near, err := c.near.Query(sig, sh)
	if err != nil {
		return Match{}, &Error{Op: "Seen", Subject: doc.URL, Err: err}
	}
	if len(near) > 0 {
		n := near[0]
		return Match{Seen: true, Near: true, URL: c.docs[n.ID], Of: n.ID, Similarity: n.Jaccard, Fingerprint: fp}, nil
	}
	if err := c.near.Insert(fp, sig, sh); err != nil {
		return Match{}, &Error{Op: "Seen", Subject: doc.URL, Err: err}
	}
	c.docs[fp] = doc.URL
	if c.log != nil {
		if err := writeRecord(c.log, &c.logBuf, &logRecord{add: true, fp: fp, url: doc.URL, sig: sig, simhash: sh}); err != nil {
			return Match{Fingerprint: fp}, err
		}
	}
	return Match{Fingerprint: fp}, nil
}

// Forget implements ContentSeen.
func (c *Content) Forget(ctx context.Context, fp uint64) error {
	if err := ctx.Err(); err != nil {
		return &Error{Op: "Forget", Subject: fmt.Sprintf("%016x", fp), Err: err}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.docs[fp]
	delete(c.docs, fp)
	c.near.Remove(fp)
	if ok && c.log != nil {
		return writeRecord(c.log, &c.logBuf, &logRecord{fp: fp})
	}
	return nil
}

// Len returns the number of recorded documents.
func (c *Content) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.docs)
}

// ExactContent is a ContentSeen that finds exact duplicates only (equal
// TextFingerprint), with a map from fingerprint to URL: the "simple
// fingerprint such as a checksum" of §20.2.1. About 40 bytes plus the URL
// per document; Seen costs one tokenizing pass. The zero value is ready to
// use; safe for concurrent use.
type ExactContent struct {
	mu     sync.Mutex
	docs   map[uint64]string
	log    io.Writer // see LogTo
	logBuf []byte
}

var _ ContentSeen = (*ExactContent)(nil)

// Seen implements ContentSeen.
func (c *ExactContent) Seen(ctx context.Context, doc Doc) (Match, error) {
	if err := ctx.Err(); err != nil {
		return Match{}, &Error{Op: "Seen", Subject: doc.URL, Err: err}
	}
	fp := TextFingerprint(doc.Text)
	first, known, err := c.Record(fp, doc.URL)
	if known {
		return Match{Seen: true, URL: first, Of: fp, Similarity: 1, Fingerprint: fp}, nil
	}
	return Match{Fingerprint: fp}, err
}

// Record is Seen for a document whose fingerprint is known already (a
// partition of a distributed set gets fingerprints, not texts): it records
// url under fp unless fp is there, and returns the URL fp was first
// recorded at and whether it was there. An error is one of writing the
// log (see LogTo); the record stands.
func (c *ExactContent) Record(fp uint64, url string) (first string, known bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if first, ok := c.docs[fp]; ok {
		return first, true, nil
	}
	if c.docs == nil {
		c.docs = make(map[uint64]string)
	}
	c.docs[fp] = url
	if c.log != nil {
		err = writeRecord(c.log, &c.logBuf, &logRecord{add: true, fp: fp, url: url})
	}
	return url, false, err
}

// Len returns the number of recorded documents.
func (c *ExactContent) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.docs)
}

// Forget implements ContentSeen.
func (c *ExactContent) Forget(ctx context.Context, fp uint64) error {
	if err := ctx.Err(); err != nil {
		return &Error{Op: "Forget", Subject: fmt.Sprintf("%016x", fp), Err: err}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.docs[fp]
	delete(c.docs, fp)
	if ok && c.log != nil {
		return writeRecord(c.log, &c.logBuf, &logRecord{fp: fp})
	}
	return nil
}
