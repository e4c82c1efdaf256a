package bench

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nlnwa/gowarc/v3"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/warc"
)

// TestWARCValidGowarc crawls a simulated web with crawlkit's WARC sink and
// reads every file and record back with an independent library, the
// National Library of Norway's gowarc, in its strict mode (the first
// syntax error or WARC 1.1 violation fails the read): block and payload
// digests are recomputed, every revisit record's WARC-Refers-To names a
// response of the archive with the same target URI, date and payload
// digest, and merging the two (gowarc's own revisit resolution) yields a
// record whose digests validate. The CDXJ indexes beside the files are
// checked against gowarc's offsets and sizes.
//
// It runs in CI (.ci/run): cd bench && go test -run TestWARCValidGowarc
func TestWARCValidGowarc(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 3, Hosts: 12, MeanPages: 12, ChangePeriods: []time.Duration{0}, CrawlDelay: 5 * time.Millisecond})
	defer web.Close()
	dir := t.TempDir()
	sink, err := crawlkit.NewWARCSink(&warc.WriterOptions{Dir: dir, MaxFileSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	var traps []string
	for _, h := range web.Hosts() {
		if strings.HasPrefix(h, "trap-") {
			traps = append(traps, h)
		}
	}
	c, err := crawlkit.New(crawlkit.Config{
		Seeds: web.Seeds(),
		Resolver: dns.ResolverFunc(func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}),
		AllowPrivate:    true,
		PrivateSuffixes: []string{web.Domain()},
		Workers:         8,
		DelayFactor:     -1,
		MaxDuration:     30 * time.Second,
		Filters:         append(frontier.DefaultFilters(), frontier.Domains(nil, traps)),
		Sinks:           []crawlkit.Sink{sink},
		Logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	stats, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	var all []rec
	byID := map[string]rec{}
	counts := map[string]int{}
	files := sink.Files()
	if len(files) < 2 {
		t.Fatalf("want the archive rotated over several files, got %d", len(files))
	}
	for _, path := range files {
		rd, err := gowarc.NewWarcFileReader(path, 0, gowarc.WithStrictValidation())
		if err != nil {
			t.Fatal(err)
		}
		first := true
		for r, err := range rd.Records() {
			if err != nil {
				t.Fatalf("%s: record at %d: %v", filepath.Base(path), r.Offset, err)
			}
			wr := r.WarcRecord
			if first && wr.Type() != gowarc.Warcinfo {
				t.Fatalf("%s starts with a %s record", filepath.Base(path), wr.Type())
			}
			first = false
			if wr.Version().String() != warc.Version {
				t.Fatalf("%s: version %s", filepath.Base(path), wr.Version())
			}
			if v, err := wr.ValidateDigest(); err != nil || len(v) > 0 {
				t.Fatalf("%s: %s record at %d: digests: %v %v", filepath.Base(path), wr.Type(), r.Offset, v, err)
			}
			h := wr.WarcHeader()
			x := rec{
				typ: wr.Type().String(), id: wr.RecordId(), uri: h.Get(gowarc.WarcTargetURI),
				date: h.Get(gowarc.WarcDate), payload: h.Get(gowarc.WarcPayloadDigest),
				file: path, offset: r.Offset, size: r.Size,
			}
			if wr.Type() == gowarc.Revisit {
				if x.refersTo, err = wr.RevisitRef(); err != nil {
					t.Fatalf("%s: revisit at %d: %v", filepath.Base(path), r.Offset, err)
				}
			}
			counts[x.typ]++
			all = append(all, x)
			byID[x.id] = x
			r.Close()
		}
	}

	// Every exchange has its request record; every page (not a
	// duplicate, a redirect or an error) its metadata record.
	exchanges := counts["response"] + counts["revisit"]
	if counts["warcinfo"] != len(files) || counts["request"] != exchanges || uint64(counts["metadata"]) != stats.Outcomes[crawlkit.Fetched] || counts["revisit"] == 0 {
		t.Fatalf("records %v for %d files and %d pages kept: want a warcinfo per file, a request per response or revisit, a metadata per page kept, some revisits", counts, len(files), stats.Outcomes[crawlkit.Fetched])
	}
	for _, x := range all {
		if x.typ != "revisit" {
			continue
		}
		ref := x.refersTo
		orig, ok := byID[ref.TargetRecordId]
		if ref.Profile != warc.ProfileIdenticalPayload || !ok || orig.typ != "response" || orig.uri != ref.TargetUri || orig.date != ref.TargetDate || orig.payload != x.payload {
			t.Fatalf("revisit of %s: refers to %+v, which is %+v", x.uri, ref, orig)
		}
		merged := merge(t, x, orig)
		if v, err := merged.ValidateDigest(); err != nil || len(v) > 0 {
			t.Fatalf("revisit of %s merged with its original: digests: %v %v", x.uri, v, err)
		}
		merged.Close()
	}

	// The CDXJ index of each file names the records gowarc found, at the
	// offsets and sizes gowarc measured.
	lines := 0
	for _, path := range files {
		data, err := os.ReadFile(warc.IndexPath(path))
		if err != nil {
			t.Fatal(err)
		}
		at := map[int64]rec{}
		for _, x := range all {
			if x.file == path {
				at[x.offset] = x
			}
		}
		for l := range strings.Lines(string(data)) {
			e, err := warc.ParseIndexLine([]byte(l))
			if err != nil {
				t.Fatal(err)
			}
			x, ok := at[e.Offset]
			if !ok || e.Length != x.size || e.URL != x.uri || e.Digest != x.payload || (e.Mime == "warc/revisit") != (x.typ == "revisit") {
				t.Fatalf("%s: line %q: gowarc read %+v", filepath.Base(path), l, x)
			}
			lines++
		}
	}
	if lines != exchanges {
		t.Fatalf("%d index lines for %d responses and revisits", lines, exchanges)
	}
	t.Logf("%d files, records %v, %d pages kept", len(files), counts, stats.Outcomes[crawlkit.Fetched])
}

// rec is a record as gowarc read it.
type rec struct {
	typ, id, uri, date, payload string
	file                        string
	offset, size                int64
	refersTo                    *gowarc.RevisitRef
}

// merge reads the revisit x and its original orig again with gowarc and
// merges them.
func merge(t *testing.T, x, orig rec) gowarc.WarcRecord {
	t.Helper()
	read := func(file string, off int64) gowarc.WarcRecord {
		rd, err := gowarc.NewWarcFileReader(file, off, gowarc.WithStrictValidation())
		if err != nil {
			t.Fatal(err)
		}
		r, err := rd.Next()
		if err != nil {
			t.Fatal(err)
		}
		return r.WarcRecord
	}
	rev, o := read(x.file, x.offset), read(orig.file, orig.offset)
	defer o.Close()
	m, err := rev.Merge(o)
	if err != nil {
		t.Fatal(errors.Join(errors.New("gowarc Merge"), err))
	}
	return m
}
