package index

import (
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
)

// docTable is the document table a Shard and a TermIndex keep beside their
// postings: each document's stored fields and length by id, the id of each
// live URL, the deleted ids (whose postings stay, masked, until compact) and
// the live totals BM25 needs. Ids are dense and given in order of addition.
// The caller locks.
type docTable struct {
	docs    []docEntry
	byURL   map[string]uint32
	deleted *roaring.Bitmap
	live    int64 // live documents
	liveLen int64 // sum of lengths of live documents
}

func newDocTable() docTable {
	return docTable{byURL: make(map[string]uint32), deleted: roaring.New()}
}

// full reports whether the table has run out of 32-bit ids.
func (t *docTable) full() bool { return uint64(len(t.docs)) >= uint64(^uint32(0)) }

// nextID is the id the next add takes.
func (t *docTable) nextID() uint32 { return uint32(len(t.docs)) }

// delete marks the live document with the given URL deleted and reports
// whether there was one.
func (t *docTable) delete(url string) bool {
	id, ok := t.byURL[url]
	if !ok {
		return false
	}
	delete(t.byURL, url)
	t.deleted.Add(id)
	t.live--
	t.liveLen -= int64(t.docs[id].len)
	return true
}

// add appends a live document of dl terms under nextID; the caller has
// deleted any earlier document with the same URL. The strings are cloned,
// so the table never keeps a caller's text alive.
func (t *docTable) add(url, title string, dl uint32) {
	url = strings.Clone(url)
	t.byURL[url] = t.nextID()
	t.docs = append(t.docs, docEntry{url: url, title: strings.Clone(title), len: dl})
	t.live++
	t.liveLen += int64(dl)
}

// load sets document id of a table being decoded (docs already sized),
// refusing a second live document with the same URL.
func (t *docTable) load(id int, de docEntry, deleted bool) bool {
	t.docs[id] = de
	if deleted {
		t.deleted.Add(uint32(id))
		return true
	}
	if _, dup := t.byURL[de.url]; dup {
		return false
	}
	t.byURL[de.url] = uint32(id)
	t.live++
	t.liveLen += int64(de.len)
	return true
}

// compact drops the deleted documents and renumbers the live ones densely,
// in their order. It returns the old-to-new id map, ^0 for a dropped id, for
// the caller to rewrite its postings (see rewrite), or nil when nothing was
// deleted.
func (t *docTable) compact() []uint32 {
	if t.deleted.IsEmpty() {
		return nil
	}
	remap := make([]uint32, len(t.docs))
	docs := make([]docEntry, 0, t.live)
	for id := range t.docs {
		if t.deleted.Contains(uint32(id)) {
			remap[id] = ^uint32(0)
			continue
		}
		remap[id] = uint32(len(docs))
		t.byURL[t.docs[id].url] = uint32(len(docs))
		docs = append(docs, t.docs[id])
	}
	t.docs = docs
	t.deleted = roaring.New()
	return remap
}
