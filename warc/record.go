package warc

import (
	"crypto/rand"
	"crypto/sha1"
	"encoding/base32"
	"fmt"
	"strings"
	"time"
)

// Version is the WARC version this package writes.
const Version = "WARC/1.1"

// Record types of WARC 1.1 §6.
const (
	TypeWarcinfo     = "warcinfo"
	TypeResponse     = "response"
	TypeResource     = "resource"
	TypeRequest      = "request"
	TypeMetadata     = "metadata"
	TypeRevisit      = "revisit"
	TypeConversion   = "conversion"
	TypeContinuation = "continuation"
)

// Names of the header fields this package sets.
const (
	FieldType          = "WARC-Type"
	FieldRecordID      = "WARC-Record-ID"
	FieldDate          = "WARC-Date"
	FieldContentLength = "Content-Length"
	FieldContentType   = "Content-Type"
	FieldTargetURI     = "WARC-Target-URI"
	FieldIPAddress     = "WARC-IP-Address"
	FieldConcurrentTo  = "WARC-Concurrent-To"
	FieldWarcinfoID    = "WARC-Warcinfo-ID"
	FieldBlockDigest   = "WARC-Block-Digest"
	FieldPayloadDigest = "WARC-Payload-Digest"
	FieldFilename      = "WARC-Filename"
	FieldTruncated     = "WARC-Truncated"
)

// Reasons for WARC-Truncated (WARC 1.1 §5.13): the block is shorter than
// what was received because of a length limit, a time limit, a broken
// connection, or another cause.
const (
	TruncatedLength      = "length"
	TruncatedTime        = "time"
	TruncatedDisconnect  = "disconnect"
	TruncatedUnspecified = "unspecified"
)

// Header is the ordered list of a record's named fields. Names compare
// case-insensitively, as WARC 1.1 §4 requires; order is kept as written.
// The zero value is an empty header.
type Header struct {
	fields []field
}

type field struct{ name, value string }

// Get returns the value of the first field called name, or "".
func (h *Header) Get(name string) string {
	for _, f := range h.fields {
		if strings.EqualFold(f.name, name) {
			return f.value
		}
	}
	return ""
}

// Set replaces the value of the first field called name, or appends one.
func (h *Header) Set(name, value string) {
	for i, f := range h.fields {
		if strings.EqualFold(f.name, name) {
			h.fields[i].value = value
			return
		}
	}
	h.fields = append(h.fields, field{name, value})
}

// Add appends a field even if one with the same name exists
// (WARC-Concurrent-To may repeat).
func (h *Header) Add(name, value string) { h.fields = append(h.fields, field{name, value}) }

// Len returns the number of fields.
func (h *Header) Len() int { return len(h.fields) }

// Field returns the i-th field's name and value, 0 ≤ i < Len().
func (h *Header) Field(i int) (name, value string) { return h.fields[i].name, h.fields[i].value }

// Record is one WARC record: its header and its content block.
type Record struct {
	Header Header
	// Block is the record's content block: for a response record, the
	// HTTP status line, headers and body exactly as received.
	Block []byte
	// Offset is where the record starts in its file (for a gzip file, the
	// offset of its gzip member), set by Reader and by Writer.
	Offset int64
}

// Type returns the record's WARC-Type.
func (r *Record) Type() string { return r.Header.Get(FieldType) }

// ID returns the record's WARC-Record-ID.
func (r *Record) ID() string { return r.Header.Get(FieldRecordID) }

// TargetURI returns the record's WARC-Target-URI.
func (r *Record) TargetURI() string { return r.Header.Get(FieldTargetURI) }

// Date returns the record's WARC-Date; the zero time if absent or malformed.
func (r *Record) Date() time.Time {
	t, err := time.Parse(time.RFC3339Nano, r.Header.Get(FieldDate))
	if err != nil {
		return time.Time{}
	}
	return t
}

// NewRecordID returns a fresh "<urn:uuid:...>" record identifier (random,
// version 4).
func NewRecordID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails since Go 1.24
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("<urn:uuid:%x-%x-%x-%x-%x>", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Digest returns the "sha1:BASE32" digest WARC tools (wget, Heritrix,
// warcio) write in WARC-Block-Digest and WARC-Payload-Digest.
func Digest(p []byte) string {
	sum := sha1.Sum(p)
	return "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
}

// HTTPPayload returns the entity body of an HTTP message block (the bytes
// after the first empty line), or nil if the block has no header end.
func HTTPPayload(block []byte) []byte {
	for i := 0; i+3 < len(block); i++ {
		if block[i] == '\r' && block[i+1] == '\n' && block[i+2] == '\r' && block[i+3] == '\n' {
			return block[i+4:]
		}
	}
	return nil
}
