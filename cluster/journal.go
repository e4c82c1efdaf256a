package cluster

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/internal/wire"
)

// A shard's journal is the sequence of records on its subject of the
// shards stream (PREFIX.shard.N). Every record names the node (and its
// incarnation) that wrote it, and every write expects the subject's last
// sequence to be the writer's last one, so a writer that lost the shard
// fails instead of writing behind the new owner's back.
const (
	recClaim   = 'C' // the writer owns the shard from here
	recRelease = 'R' // the writer gave the shard up: nobody owns it
	recData    = 'D' // a change of the shard's state (part of a Txn)
	// recSnapshot is one chunk of a snapshot of the shard's state: the
	// first chunk starts a new image, the final one replaces the image
	// replayed so far with it. The records before the first chunk are
	// purged once the final one is stored; a snapshot cut short by a
	// kill has no final chunk and changes nothing.
	recSnapshot = 'S'
)

// Snapshot chunk flags.
const (
	snapFirst = 1 << iota
	snapFinal
)

// maxJournalItem bounds one length-prefixed item of a journal record.
const maxJournalItem = 1 << 22

// shardRecord is one decoded journal record.
type shardRecord struct {
	kind  byte
	owner string
	inc   uint64
	flags byte         // recSnapshot: snapFirst, snapFinal
	txn   crawlkit.Txn // recData and recSnapshot: Add, Put, Done and Keys (host keys)
	// fps are content fingerprints of the shard's partition (Content)
	// first seen at the given URLs: recData and recSnapshot.
	fps []fpEntry
	// out is the outbox of recData: the URLs the record's pages sent to
	// other nodes through the host splitter, which a new owner sends
	// again in case the writer died before the splitter stored them.
	out []frontier.URL
	// folded, in a recData record, is the sequence of the last entry of
	// the writer's log the record holds (0: none).
	folded uint64
}

// Trailing sections of recData and recSnapshot records, each a tag, a
// count and its entries, after a byte that counts them. A recData record
// with sections is written with the kind recDataExt (a record without
// them is what earlier versions wrote, ending after its keys), so that a
// cut record never reads as a whole one.
const (
	recDataExt      = 'E'
	secFingerprints = 'F'
	secOutbox       = 'O'
	// secFolded ends a recData record that folds the writer's log
	// entries for the shard (shards.fold): the log sequence of the last
	// one it holds.
	secFolded = 'U'
)

// A node's log (PREFIX.log.NAME.INC) holds its group records: each the
// parts of a group of Txns for every shard they touched, written in one
// publish. Their owner folds them into each shard's journal from time to
// time (a recData record that names the last log entry it holds) and
// purges its log of what every shard has folded. A node that claims a
// shard another node owned first writes a revoke record on that node's
// subject PREFIX.own.NAME: every group record expects that subject's last
// sequence to be the one its writer knows, so the old owner's log takes
// no entry for the shard after the revoke.
const (
	recGroup  = 'G' // a group record of a node's log
	recRevoke = 'V' // a revoke record: shard, the revoked incarnation
)

// maxGroupEntries bounds the entries of one group record.
const maxGroupEntries = 1 << 16

// fpEntry is a content fingerprint and the URL it was first seen at.
type fpEntry struct {
	fp  uint64
	url string
}

// appendShardRecord appends the encoding of r to b.
func appendShardRecord(b []byte, r *shardRecord) ([]byte, error) {
	sections := 0
	if len(r.fps) > 0 {
		sections++
	}
	if len(r.out) > 0 {
		sections++
	}
	if r.folded > 0 && r.kind == recData {
		sections++
	}
	if r.kind == recData && sections > 0 {
		b = append(b, recDataExt)
	} else {
		b = append(b, r.kind)
	}
	b = binary.AppendUvarint(b, r.inc)
	b = appendString(b, r.owner)
	switch r.kind {
	case recData:
	case recSnapshot:
		b = append(b, r.flags)
	default:
		return b, nil
	}
	var err error
	for _, list := range [][]crawlkit.Pending{r.txn.Add, r.txn.Put} {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for i := range list {
			p := &list[i]
			b = binary.AppendUvarint(b, uint64(min(max(p.Retries, 0), math.MaxInt32)))
			b = appendString(b, p.Parked)
			if b, err = appendJournalURL(b, p.URL); err != nil {
				return b, err
			}
		}
	}
	b = binary.AppendUvarint(b, uint64(len(r.txn.Done)))
	for _, u := range r.txn.Done {
		b = appendString(b, u)
	}
	b = binary.AppendUvarint(b, uint64(len(r.txn.Keys)))
	for _, d := range r.txn.Keys {
		b = appendString(b, d.Key)
		b = binary.AppendVarint(b, d.Admitted)
		b = binary.AppendVarint(b, unixNano(d.Next))
		b = binary.AppendVarint(b, int64(d.Gap))
		b = binary.AppendVarint(b, d.Pages)
		b = binary.AppendVarint(b, d.Alike)
		if d.Backoff == nil {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		b = binary.AppendVarint(b, int64(d.Backoff.Level))
		b = binary.AppendVarint(b, int64(d.Backoff.Failures))
		b = binary.AppendVarint(b, unixNano(d.Backoff.Last))
	}
	if r.kind == recSnapshot || sections > 0 {
		b = append(b, byte(sections))
	}
	if len(r.fps) > 0 {
		b = append(b, secFingerprints)
		b = binary.AppendUvarint(b, uint64(len(r.fps)))
		for _, e := range r.fps {
			b = binary.LittleEndian.AppendUint64(b, e.fp)
			b = appendString(b, e.url)
		}
	}
	if len(r.out) > 0 {
		b = append(b, secOutbox)
		b = binary.AppendUvarint(b, uint64(len(r.out)))
		for _, u := range r.out {
			if b, err = appendJournalURL(b, u); err != nil {
				return b, err
			}
		}
	}
	if r.folded > 0 && r.kind == recData {
		b = append(b, secFolded)
		b = binary.AppendUvarint(b, r.folded)
	}
	return b, nil
}

// decodeShardRecord decodes what appendShardRecord wrote. Malformed
// input is an *Error wrapping ErrCorrupt, never a panic.
func decodeShardRecord(data []byte) (*shardRecord, error) {
	corrupt := &Error{Op: "decode journal record", Err: ErrCorrupt}
	d := wire.Decoder{B: data}
	r := &shardRecord{kind: d.Byte()}
	ext := false
	r.inc = d.Uvarint()
	r.owner = string(d.Bytes(maxJournalItem))
	switch r.kind {
	case recClaim, recRelease:
		if !d.Done() || r.owner == "" {
			return nil, corrupt
		}
		return r, nil
	case recData:
	case recDataExt:
		r.kind, ext = recData, true
	case recSnapshot:
		ext = true
		r.flags = d.Byte()
		if r.flags&^(snapFirst|snapFinal) != 0 {
			return nil, corrupt
		}
	default:
		return nil, corrupt
	}
	for _, list := range []*[]crawlkit.Pending{&r.txn.Add, &r.txn.Put} {
		n := d.Count(3)
		for range n {
			retries := d.Uvarint()
			parked := string(d.Bytes(maxJournalItem))
			var u frontier.URL
			enc := d.Bytes(maxJournalItem)
			if d.Bad || retries > math.MaxInt32 || u.UnmarshalBinary(enc) != nil {
				return nil, corrupt
			}
			*list = append(*list, crawlkit.Pending{URL: u, Retries: int(retries), Parked: parked})
		}
	}
	for range d.Count(1) {
		r.txn.Done = append(r.txn.Done, string(d.Bytes(maxJournalItem)))
	}
	for range d.Count(7) {
		k := crawlkit.KeyDelta{Key: string(d.Bytes(maxJournalItem))}
		k.Admitted = d.Varint()
		k.Next = fromUnixNano(d.Varint())
		k.Gap = time.Duration(d.Varint())
		k.Pages = d.Varint()
		k.Alike = d.Varint()
		if d.Byte() == 1 {
			lvl, fails := d.Varint(), d.Varint()
			if lvl < math.MinInt32 || lvl > math.MaxInt32 || fails < math.MinInt32 || fails > math.MaxInt32 {
				return nil, corrupt
			}
			k.Backoff = &crawlkit.Backoff{Level: int32(lvl), Failures: int32(fails), Last: fromUnixNano(d.Varint())}
		}
		if d.Bad {
			return nil, corrupt
		}
		r.txn.Keys = append(r.txn.Keys, k)
	}
	sections := 0
	if ext {
		sections = int(d.Byte())
		if sections > 3 || sections == 0 && r.kind == recData {
			return nil, corrupt
		}
	}
	var last byte
	for range sections {
		tag := d.Byte()
		if tag <= last {
			return nil, corrupt // sections come once each, in order
		}
		last = tag
		switch tag {
		case secFingerprints:
			n := d.Count(9)
			if n == 0 {
				return nil, corrupt // an empty section is never written
			}
			for range n {
				fp := d.Uint64()
				u := string(d.Bytes(maxJournalItem))
				if d.Bad {
					return nil, corrupt
				}
				r.fps = append(r.fps, fpEntry{fp, u})
			}
		case secOutbox:
			n := d.Count(2)
			if n == 0 {
				return nil, corrupt
			}
			for range n {
				var u frontier.URL
				if enc := d.Bytes(maxJournalItem); d.Bad || u.UnmarshalBinary(enc) != nil {
					return nil, corrupt
				}
				r.out = append(r.out, u)
			}
		case secFolded:
			if r.folded = d.Uvarint(); r.folded == 0 || r.kind != recData {
				return nil, corrupt
			}
		default:
			return nil, corrupt
		}
	}
	if !d.Done() || r.owner == "" {
		return nil, corrupt
	}
	return r, nil
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// appendJournalURL appends u's encoding, without its anchor text and
// source (a journal keeps what fetching the URL needs), prefixed with its
// length as appendString prefixes a string. The encoding is written in
// place and moved up by the prefix's size, so no copy is allocated.
func appendJournalURL(b []byte, u frontier.URL) ([]byte, error) {
	u.Anchor, u.Source = "", ""
	mark := len(b)
	b, err := u.AppendBinary(b)
	if err != nil {
		return b[:mark], err
	}
	n := len(b) - mark
	var pre [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(pre[:], uint64(n))
	b = append(b, pre[:k]...) // room for the prefix
	copy(b[mark+k:], b[mark:mark+n])
	copy(b[mark:], pre[:k])
	return b, nil
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// shardImage is a shard's state rebuilt from its journal: every URL ever
// added (the URL-seen set), those still pending, and the host records.
type shardImage struct {
	seen    []string
	pending map[string]crawlkit.Pending
	keys    map[string]crawlkit.KeyRecord
	fps     map[uint64]string // the shard's content fingerprints
	out     []frontier.URL    // the outboxes of the records since the last snapshot
	// owner and inc are the writer of the last record, released whether
	// that record gave the shard up.
	owner    string
	inc      uint64
	released bool
	// snap is a snapshot being read, until its final chunk.
	snap *shardImage
	// records counts the records replayed since the last snapshot.
	records int
	// applied counts every record replayed; snapStart is the stream
	// sequence of the first chunk of the snapshot being read, and
	// snapAfter whether records came before it.
	applied   int
	snapStart uint64
	snapAfter bool
	// stale is the first sequence of the last whole snapshot when
	// records before it are still in the journal: its writer died
	// between writing it and purging them (shards.compact).
	stale uint64
	// held are the shard's entries of node logs not applied yet, in
	// stream order. A fold of its writer's entries (a recData record
	// naming the last it holds) drops those it holds; the journal's next
	// claim, release or snapshot, or the end of the replay, applies the
	// others written by the shard's owner and drops the rest (written by
	// a node that did not own the shard then, a fenced writer).
	held []heldEntry
	// logged counts the log entries applied.
	logged int
}

// heldEntry is a shard's entry of a group record, with its writer and
// stream sequence.
type heldEntry struct {
	owner string
	inc   uint64
	seq   uint64
	part  *shardRecord
}

// applyEntry takes the shard's entry of a group record written by owner
// (incarnation inc) at stream sequence seq.
func (im *shardImage) applyEntry(owner string, inc, seq uint64, part *shardRecord) {
	im.held = append(im.held, heldEntry{owner, inc, seq, part})
}

// settle applies the held entries written by the shard's owner and drops
// the others.
func (im *shardImage) settle() {
	for _, e := range im.held {
		if im.released || e.owner != im.owner || e.inc != im.inc {
			continue
		}
		im.applyPart(e.part)
		im.logged++
	}
	clear(im.held)
	im.held = im.held[:0]
}

// applyPart applies a recData record's changes.
func (im *shardImage) applyPart(r *shardRecord) {
	im.applyTxn(&r.txn)
	im.applyFps(r.fps)
	im.out = append(im.out, r.out...)
}

func newShardImage() *shardImage {
	return &shardImage{pending: map[string]crawlkit.Pending{}, keys: map[string]crawlkit.KeyRecord{}, fps: map[uint64]string{}}
}

// apply replays the record at stream sequence seq, as crawlkit.MemState
// applies a Txn.
func (im *shardImage) apply(r *shardRecord, seq uint64) {
	if r.kind == recData && r.folded > 0 {
		// A fold: the entries it holds are dropped, those after it
		// stay held (they come after it).
		keep := im.held[:0]
		for _, e := range im.held {
			if e.owner != r.owner || e.inc != r.inc || e.seq > r.folded {
				keep = append(keep, e)
			}
		}
		clear(im.held[len(keep):])
		im.held = keep
	} else {
		im.settle()
	}
	im.owner, im.inc, im.released = r.owner, r.inc, r.kind == recRelease
	im.records++
	im.applied++
	if r.kind != recSnapshot {
		im.snap = nil // a snapshot cut short: the image stands
	}
	switch r.kind {
	case recData:
		im.applyPart(r)
	case recSnapshot:
		if r.flags&snapFirst != 0 {
			im.snap = newShardImage()
			im.snapStart, im.snapAfter = seq, im.applied > 1
		}
		if im.snap == nil {
			return // chunks of a snapshot whose start was purged or lost
		}
		im.snap.applyTxn(&r.txn)
		im.snap.applyFps(r.fps)
		im.snap.out = append(im.snap.out, r.out...)
		if r.flags&snapFinal != 0 {
			im.seen, im.pending, im.keys, im.fps = im.snap.seen, im.snap.pending, im.snap.keys, im.snap.fps
			// The outboxes before the snapshot were stored, or carried
			// into it (shards.compact).
			im.stale = 0
			if im.snapAfter {
				im.stale = im.snapStart
			}
			im.out, im.snap, im.records = im.snap.out, nil, 0
		}
	}
}

// applyFps records fingerprints: the first URL of each stands.
func (im *shardImage) applyFps(fps []fpEntry) {
	for _, e := range fps {
		if _, ok := im.fps[e.fp]; !ok {
			im.fps[e.fp] = e.url
		}
	}
}

func (im *shardImage) applyTxn(t *crawlkit.Txn) {
	for _, p := range t.Add {
		if _, ok := im.pending[p.URL.URL]; !ok {
			im.seen = append(im.seen, p.URL.URL)
		}
		im.pending[p.URL.URL] = p
	}
	for _, p := range t.Put {
		im.pending[p.URL.URL] = p
	}
	for _, u := range t.Done {
		delete(im.pending, u)
	}
	for _, d := range t.Keys {
		k := im.keys[d.Key]
		k.Apply(d)
		im.keys[d.Key] = k
	}
}

// snapshot returns the image as snapshot records of about chunk bytes
// each: every URL seen added (the pending ones with their state), the
// done ones marked done in the same chunk, the host records whole, the
// fingerprints and, with keepOut, the outboxes replayed.
func (im *shardImage) snapshot(chunk int, keepOut bool) []*shardRecord {
	var out []*shardRecord
	cur, size := &shardRecord{kind: recSnapshot}, 0
	flush := func() {
		out = append(out, cur)
		cur, size = &shardRecord{kind: recSnapshot}, 0
	}
	for _, u := range im.seen {
		if p, ok := im.pending[u]; ok {
			cur.txn.Add = append(cur.txn.Add, p)
		} else {
			cur.txn.Add = append(cur.txn.Add, crawlkit.Pending{URL: frontier.URL{URL: u}})
			cur.txn.Done = append(cur.txn.Done, u)
		}
		if size += len(u) + 32; size >= chunk {
			flush()
		}
	}
	for k, r := range im.keys {
		b := r.Backoff
		cur.txn.Keys = append(cur.txn.Keys, crawlkit.KeyDelta{Key: k, Admitted: r.Admitted, Next: r.Next, Gap: r.Gap,
			Pages: r.Pages, Alike: r.Alike, Backoff: &b})
		if size += len(k) + 48; size >= chunk {
			flush()
		}
	}
	for fp, u := range im.fps {
		cur.fps = append(cur.fps, fpEntry{fp, u})
		if size += len(u) + 16; size >= chunk {
			flush()
		}
	}
	if keepOut {
		for _, u := range im.out {
			cur.out = append(cur.out, u)
			if size += len(u.URL) + 16; size >= chunk {
				flush()
			}
		}
	}
	if size > 0 || len(out) == 0 {
		flush()
	}
	out[0].flags |= snapFirst
	out[len(out)-1].flags |= snapFinal
	return out
}
