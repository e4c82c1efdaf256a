package warc

import (
	"errors"
	"io"
	"os"
)

// Repair cuts the torn tail off the WARC file at path, a record that a
// process killed while writing left incomplete, and returns the number of
// bytes kept: the file up to the end of its last complete record (0 when
// none is), or all of it when nothing is torn. A record is complete when
// this package's Reader reads it, its gzip member whole for a ".warc.gz"
// file of one member per record, its closing line breaks all there for a
// ".warc" file.
//
// Only a record cut short by the end of the file is cut: any other damage
// (a bad checksum, bytes that are not a record) fails with an *Error
// wrapping ErrFormat and leaves the file as it was, since cutting there
// would drop the records after the damage. So does a file compressed as
// one gzip member and torn after its first record, which holds no boundary
// to cut at, and a record over ReaderOptions' default block limit.
//
// A Writer resuming a crawl does not need Repair: Rewind cuts the files
// back to a position, torn tails included. Repair is for the files a
// killed writer left without positions, before they are read or archived.
// It must not run on a file a Writer is writing; on different files,
// Repairs may run concurrently. Cost: one sequential read of the file.
func Repair(path string) (kept int64, err error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, &Error{Op: "repair", Err: err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, &Error{Op: "repair", Err: err}
	}
	kept, err = completeRecords(io.NewSectionReader(f, 0, st.Size()), st.Size())
	if err != nil {
		var we *Error
		if errors.As(err, &we) {
			return 0, &Error{Op: "repair " + path, Offset: we.Offset, Err: we.Err}
		}
		return 0, &Error{Op: "repair " + path, Err: err}
	}
	if kept == st.Size() {
		return kept, nil
	}
	if err := f.Truncate(kept); err != nil {
		return 0, &Error{Op: "repair", Err: err}
	}
	if err := f.Sync(); err != nil {
		return 0, &Error{Op: "repair", Err: err}
	}
	return kept, nil
}

// completeRecords returns the length of the prefix of r, size bytes long,
// that holds its complete records, or an error if r is damaged other than
// by a torn tail.
func completeRecords(r io.Reader, size int64) (int64, error) {
	rd, err := NewReader(r, nil)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, nil // a torn first gzip header
		}
		return 0, err
	}
	var last *Record
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		var we *Error
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) && !rd.single && errors.As(err, &we) {
				return we.Offset, nil
			}
			return 0, err
		}
		last = rec
	}
	// The Reader forgives a plain file's last record its closing line
	// breaks; a record this package wrote without them is torn.
	if last != nil && !rd.zip && rd.breaks < 2 {
		return last.Offset, nil
	}
	return size, nil
}
