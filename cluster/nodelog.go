package cluster

import (
	"encoding/binary"
	"math"

	"github.com/crawlkit/crawlkit/internal/wire"
)

// groupRecord is one record of a node's log: for each shard a group of
// Txns touched, its part (a recData record without a folded section).
type groupRecord struct {
	owner   string
	inc     uint64
	entries []groupEntry
}

// groupEntry is one shard's part of a group record.
type groupEntry struct {
	shard int
	part  *shardRecord
}

// appendGroupRecord appends the encoding of g to b: its header, then each
// entry's shard and its part, encoded as a journal record and length
// prefixed.
func appendGroupRecord(b []byte, g *groupRecord) ([]byte, error) {
	b = append(b, recGroup)
	b = binary.AppendUvarint(b, g.inc)
	b = appendString(b, g.owner)
	b = binary.AppendUvarint(b, uint64(len(g.entries)))
	var part []byte
	for _, e := range g.entries {
		r := *e.part
		r.kind, r.owner, r.inc, r.folded = recData, g.owner, g.inc, 0
		var err error
		if part, err = appendShardRecord(part[:0], &r); err != nil {
			return b, err
		}
		b = binary.AppendUvarint(b, uint64(e.shard))
		b = binary.AppendUvarint(b, uint64(len(part)))
		b = append(b, part...)
	}
	return b, nil
}

// decodeGroupRecord decodes what appendGroupRecord wrote. Malformed input
// is an *Error wrapping ErrCorrupt, never a panic.
func decodeGroupRecord(data []byte) (*groupRecord, error) {
	corrupt := &Error{Op: "decode log record", Err: ErrCorrupt}
	d := wire.Decoder{B: data}
	if d.Byte() != recGroup {
		return nil, corrupt
	}
	g := &groupRecord{inc: d.Uvarint(), owner: string(d.Bytes(maxJournalItem))}
	n := d.Count(3)
	if d.Bad || g.owner == "" || n > maxGroupEntries {
		return nil, corrupt
	}
	g.entries = make([]groupEntry, 0, n)
	for range n {
		shard := d.Uvarint()
		enc := d.Bytes(maxJournalItem)
		if d.Bad || shard > math.MaxInt32 {
			return nil, corrupt
		}
		r, err := decodeShardRecord(enc)
		if err != nil || r.kind != recData || r.folded != 0 || r.owner != g.owner || r.inc != g.inc {
			return nil, corrupt
		}
		g.entries = append(g.entries, groupEntry{int(shard), r})
	}
	if !d.Done() {
		return nil, corrupt
	}
	return g, nil
}

// revokeRecord is a claimer's notice, on the subject of the node that
// owned a shard, that the node's incarnation target owns it no more.
type revokeRecord struct {
	owner  string // the claimer
	inc    uint64 // its incarnation
	target uint64 // the revoked incarnation
	shard  int
}

func appendRevokeRecord(b []byte, r *revokeRecord) []byte {
	b = append(b, recRevoke)
	b = binary.AppendUvarint(b, r.inc)
	b = appendString(b, r.owner)
	b = binary.AppendUvarint(b, r.target)
	return binary.AppendUvarint(b, uint64(r.shard))
}

func decodeRevokeRecord(data []byte) (*revokeRecord, error) {
	d := wire.Decoder{B: data}
	if d.Byte() != recRevoke {
		return nil, &Error{Op: "decode revoke record", Err: ErrCorrupt}
	}
	r := &revokeRecord{inc: d.Uvarint(), owner: string(d.Bytes(maxJournalItem)), target: d.Uvarint()}
	shard := d.Uvarint()
	if !d.Done() || r.owner == "" || shard > math.MaxInt32 {
		return nil, &Error{Op: "decode revoke record", Err: ErrCorrupt}
	}
	r.shard = int(shard)
	return r, nil
}
