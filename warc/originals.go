package warc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// OriginalsSuffix ends the name of the file a Writer writes beside each
// WARC file it completes (name + OriginalsSuffix), unless revisits are
// off: the payloads first archived in that file, which revisit records
// may refer to, as JSON lines. Rewind reads these lists instead of the
// WARC files, so resuming a crawl costs a few hundred bytes per page
// archived rather than a read of the whole series. A file whose list is
// missing or does not match it is read back in full, and its list
// written again.
const OriginalsSuffix = ".originals"

// origEntry is an original of the digest table: a payload digest and the
// response record that first held it.
type origEntry struct {
	digest string
	original
}

// originalsHead is the first line of an originals file: the series and
// size of the WARC file it describes, and how many lines follow.
type originalsHead struct {
	Series    string `json:"series"`
	Size      int64  `json:"size"`
	Originals int    `json:"originals"`
}

// originalsLine is one original of an originals file.
type originalsLine struct {
	Digest string `json:"digest"`
	ID     string `json:"id"`
	URI    string `json:"uri"`
	Date   string `json:"date"`
}

// writeOriginals writes the originals file of the WARC file at warcPath,
// of series and size bytes: whole, as writeIndex writes an index.
func writeOriginals(warcPath, series string, size int64, entries []origEntry) error {
	return writeWhole(warcPath+OriginalsSuffix, "originals", 64*(len(entries)+1), func(bw *bufio.Writer) error {
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(originalsHead{Series: series, Size: size, Originals: len(entries)}); err != nil {
			return err
		}
		for _, e := range entries {
			if err := enc.Encode(originalsLine{e.digest, e.id, e.uri, e.date}); err != nil {
				return err
			}
		}
		return nil
	})
}

// errOriginals reports an originals file that does not describe its WARC
// file: the file is read back instead.
var errOriginals = errors.New("warc: originals file does not match its WARC file")

// readOriginals reads the originals file of the WARC file at warcPath and
// returns its head and originals, or an error if it is missing, malformed
// or cut short.
func readOriginals(warcPath string) (originalsHead, []origEntry, error) {
	var head originalsHead
	data, err := os.ReadFile(warcPath + OriginalsSuffix)
	if err != nil {
		return head, nil, err
	}
	first, rest, _ := bytes.Cut(data, []byte{'\n'})
	if err := json.Unmarshal(first, &head); err != nil || head.Series == "" || head.Originals < 0 {
		return head, nil, fmt.Errorf("%w: head %q", errOriginals, truncate(string(first)))
	}
	entries := make([]origEntry, 0, min(head.Originals, len(rest)/64+1))
	for line := range bytes.Lines(rest) {
		var l originalsLine
		if err := json.Unmarshal(line, &l); err != nil || l.Digest == "" {
			return head, nil, fmt.Errorf("%w: line %q", errOriginals, truncate(string(line)))
		}
		entries = append(entries, origEntry{l.Digest, original{id: l.ID, uri: l.URI, date: l.Date}})
	}
	if len(entries) != head.Originals {
		return head, nil, fmt.Errorf("%w: %d originals, the head says %d", errOriginals, len(entries), head.Originals)
	}
	return head, entries, nil
}
