package warc

import "strings"

// Revisit records: a response whose payload was archived before, in the
// same series of files, is written as its HTTP headers and a reference to
// the record holding the payload (WARC 1.1 §6.7.2).

// Header fields of revisit records (WARC 1.1 §5.7, §5.9, §5.11).
const (
	FieldProfile             = "WARC-Profile"
	FieldRefersTo            = "WARC-Refers-To"
	FieldRefersToTargetURI   = "WARC-Refers-To-Target-URI"
	FieldRefersToDate        = "WARC-Refers-To-Date"
	ProfileIdenticalPayload  = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
	ProfileServerNotModified = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
)

// MinRevisitPayload is the smallest payload a Writer writes as a revisit:
// a smaller one is written in full, since the fields that refer to the
// original (about 250 bytes) would outweigh it, and remembering it would
// spend the digest table on payloads not worth it (empty bodies of
// redirects, short error pages).
const MinRevisitPayload = 256

// defaultMaxDigests is WriterOptions.MaxDigests' default.
const defaultMaxDigests = 200_000

// original is a response record whose payload revisits refer to.
type original struct {
	id, uri, date string
}

// digestTable maps payload digests to the first response record that held
// each payload: the first max distinct payloads of the series, in write
// order. Not safe for concurrent use: the Writer's lock guards it.
type digestTable struct {
	m   map[string]original
	max int
}

func newDigestTable(max int) *digestTable {
	return &digestTable{m: make(map[string]original), max: max}
}

func (t *digestTable) get(digest string) (original, bool) {
	o, ok := t.m[digest]
	return o, ok
}

// add remembers o as the original of digest, unless one is known or the
// table is full, and returns the entry it added. The strings are copied
// out of the record they came from, so that the table does not pin a
// record's header in memory.
func (t *digestTable) add(digest string, o original) (origEntry, bool) {
	if _, ok := t.m[digest]; ok || len(t.m) >= t.max {
		return origEntry{}, false
	}
	e := origEntry{strings.Clone(digest), original{strings.Clone(o.id), strings.Clone(o.uri), strings.Clone(o.date)}}
	t.m[e.digest] = e.original
	return e, true
}

func (t *digestTable) reset() { clear(t.m) }

// originalOf returns the digest and identity of rec as an original for
// revisits, and false if it cannot be one: only a whole (not truncated)
// response record with a payload digest and a payload of at least
// MinRevisitPayload bytes can. The Writer applies the same rule to what it
// writes and to what it reads back on Rewind, so that a resumed crawl
// refers to the originals the killed one would have.
func originalOf(rec *Record) (string, original, bool) {
	if rec.Type() != TypeResponse || rec.Header.Get(FieldTruncated) != "" {
		return "", original{}, false
	}
	d := rec.Header.Get(FieldPayloadDigest)
	if d == "" || len(HTTPPayload(rec.Block)) < MinRevisitPayload {
		return "", original{}, false
	}
	return d, original{id: rec.ID(), uri: rec.TargetURI(), date: rec.Header.Get(FieldDate)}, true
}

// revisitOf turns resp, a response record about to be encoded whose
// payload is that of o, into a revisit record: the same fields, the
// revisit's, and the HTTP headers as its block.
func revisitOf(resp *Record, o original, payloadLen int) {
	head := resp.Block[:len(resp.Block)-payloadLen]
	resp.Block = head
	resp.Header.Set(FieldType, TypeRevisit)
	resp.Header.Set(FieldBlockDigest, Digest(head))
	resp.Header.Set(FieldProfile, ProfileIdenticalPayload)
	resp.Header.Set(FieldRefersTo, o.id)
	resp.Header.Set(FieldRefersToTargetURI, o.uri)
	resp.Header.Set(FieldRefersToDate, o.date)
}
