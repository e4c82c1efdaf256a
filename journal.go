package crawlkit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/frontier"
)

// The checkpoint directory holds:
//
//	checkpoint.json   the current generation G and the statistics when it
//	                  began
//	frontier.G.ckpt   the frontier's checkpoint (queued, leased, scheduled)
//	                  at the start of generation G (none for G = 0)
//	journal.G         one line per event since: "+ depth url" when a URL was
//	                  queued, "- outcome url" when it reached its outcome
//	seen.fp           the fingerprint of every URL ever queued, 8 bytes each
//	content.log       the changes of the content-seen set, when it is a
//	                  dedup.Durable (the default is): documents recorded
//	                  and fingerprints forgotten, so a resumed crawl still
//	                  knows the content it fetched before
//	bodies.log        the same for the exact fingerprints of bodies
//	                  without text (images, PDFs); both logs are rewritten
//	                  as snapshots at a checkpoint once they have doubled
//
// Journal lines and fingerprints are written (not necessarily synced)
// before the frontier is changed, so a killed process loses nothing the
// operating system received: a restart replays the journal over the
// checkpoint. Leased URLs without an outcome are queued again, so at most
// the pages in flight at the kill are fetched twice. A compaction writes a
// new frontier checkpoint and journal for generation G+1; replacing
// checkpoint.json atomically is the commit point, after which the files
// of generation G are removed.

type checkpointMeta struct {
	Version    int       `json:"version"`
	Generation int       `json:"generation"`
	Written    time.Time `json:"written"`
	Stats      Stats     `json:"stats"`
}

const journalVersion = 1

// journal is the crawl's write-ahead log. A nil *journal does nothing, so
// the crawl loop calls it unconditionally.
type journal struct {
	dir string
	c   *Crawler

	mu   sync.Mutex
	gen  int
	jf   *os.File
	jw   *bufio.Writer
	sf   *os.File
	sw   *bufio.Writer
	logs []durableLog // content.log (if the set is durable), bodies.log
	line []byte
	fp   [8]byte
}

// openJournal restores the crawl state of c.cfg.CheckpointDir into c's
// URL-seen set, frontier and counters, and opens the journal for
// appending. It returns the number of URLs restored to the frontier.
func openJournal(ctx context.Context, c *Crawler) (*journal, int, error) {
	dir := c.cfg.CheckpointDir
	if _, ok := c.front.(frontier.Checkpointer); !ok {
		return nil, 0, fmt.Errorf("crawlkit: CheckpointDir needs a frontier that implements frontier.Checkpointer; %T does not", c.front)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, 0, fmt.Errorf("crawlkit: checkpoint directory: %w", err)
	}
	j := &journal{dir: dir, c: c}
	var meta checkpointMeta
	switch b, err := os.ReadFile(filepath.Join(dir, "checkpoint.json")); {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, 0, fmt.Errorf("crawlkit: checkpoint: %w", err)
	default:
		if err := json.Unmarshal(b, &meta); err != nil || meta.Version != journalVersion {
			return nil, 0, fmt.Errorf("crawlkit: checkpoint %s is damaged or of another version", filepath.Join(dir, "checkpoint.json"))
		}
		c.c.restore(meta.Stats)
	}
	j.gen = meta.Generation

	if err := j.loadSeen(ctx); err != nil {
		return nil, 0, err
	}
	opened := false
	defer func() {
		if !opened {
			j.closeLogs()
		}
	}()
	if d, ok := c.content.(dedup.Durable); ok {
		if err := j.openLog("content.log", d); err != nil {
			return nil, 0, err
		}
	}
	if err := j.openLog("bodies.log", c.bodySeen); err != nil {
		return nil, 0, err
	}
	pending, order, done, err := j.readJournal(ctx)
	if err != nil {
		return nil, 0, err
	}
	restored := 0
	if f, err := os.Open(j.ckptPath(j.gen)); err == nil {
		n, err := j.restoreFrontier(ctx, f, done)
		f.Close()
		if err != nil {
			return nil, 0, err
		}
		restored += n
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, 0, fmt.Errorf("crawlkit: frontier checkpoint: %w", err)
	}
	var batch []frontier.URL
	for _, u := range order {
		if p, ok := pending[u]; ok {
			batch = append(batch, p)
			c.noteHost(frontier.HostKey(u))
		}
	}
	if len(batch) > 0 {
		if err := c.front.Add(ctx, batch...); err != nil {
			return nil, 0, err
		}
		restored += len(batch)
	}

	if j.jf, err = os.OpenFile(j.journalPath(j.gen), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
		return nil, 0, fmt.Errorf("crawlkit: journal: %w", err)
	}
	if j.sf, err = os.OpenFile(filepath.Join(dir, "seen.fp"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
		j.jf.Close()
		return nil, 0, fmt.Errorf("crawlkit: seen set: %w", err)
	}
	// A torn last record (a kill in mid-write) must not glue onto the
	// next one.
	if err := truncateTorn(j.sf, 8); err != nil {
		return nil, 0, err
	}
	j.jw = bufio.NewWriterSize(j.jf, 64<<10)
	j.sw = bufio.NewWriterSize(j.sf, 16<<10)
	if st, _ := j.jf.Stat(); st != nil && st.Size() > 0 {
		j.jw.WriteByte('\n') // ends a torn line; empty lines are skipped
	}
	opened = true
	return j, restored, nil
}

// durableLog is a set that logs its changes and the file they go to.
type durableLog struct {
	name string
	f    *os.File
	d    dedup.Durable
	base int64 // the log's size when opened or last rewritten
}

// logCompactMin is the size below which a content log is never
// rewritten.
var logCompactMin int64 = 1 << 20

// openLog replays the log name into the durable set d and has d append
// its later changes to it. A torn last record (a kill in mid-write) is cut
// off; a damaged log is an error, since a crawl resumed without it would
// take copies for new pages.
func (j *journal) openLog(name string, d dedup.Durable) error {
	path := filepath.Join(j.dir, name)
	os.Remove(path + ".tmp") // a rewrite cut short; the log itself is whole
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("crawlkit: %s: %w", name, err)
	}
	n, err := d.Replay(f)
	if err == nil {
		err = f.Truncate(n)
	}
	if err == nil {
		_, err = f.Seek(n, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("crawlkit: %s: %w", path, err)
	}
	d.LogTo(f)
	j.logs = append(j.logs, durableLog{name, f, d, n})
	return nil
}

// compactLogs rewrites each content log that has grown to twice its size
// when opened or last rewritten (and to at least logCompactMin) as a
// snapshot of its set: a continuous crawl's revisits forget and record
// fingerprints, and the log would otherwise grow with every change. The
// snapshot goes to name.tmp, which the set logs to from then on, and
// replaces the log by a rename; a crash before the rename leaves the old
// log, whole.
func (j *journal) compactLogs() error {
	for i := range j.logs {
		l := &j.logs[i]
		st, err := l.f.Stat()
		if err != nil || st.Size() < logCompactMin || st.Size() < 2*l.base {
			continue
		}
		path := filepath.Join(j.dir, l.name)
		nf, err := os.Create(path + ".tmp")
		if err != nil {
			return fmt.Errorf("crawlkit: compacting %s: %w", l.name, err)
		}
		if err := l.d.Rewrite(nf); err != nil {
			nf.Close()
			os.Remove(nf.Name())
			return fmt.Errorf("crawlkit: compacting %s: %w", l.name, err)
		}
		err = nf.Sync()
		if err == nil {
			err = os.Rename(nf.Name(), path)
		}
		if err != nil {
			// Back to the old log; what was logged to the new one since
			// the rewrite is lost to it (the crawl is paused meanwhile, so
			// only a cluster partition's remote lookups can have written).
			l.d.LogTo(l.f)
			nf.Close()
			os.Remove(nf.Name())
			return fmt.Errorf("crawlkit: compacting %s: %w", l.name, err)
		}
		l.f.Close()
		l.f = nf
		if st, err := nf.Stat(); err == nil {
			l.base = st.Size()
		}
	}
	return nil
}

// closeLogs detaches the durable sets from their logs and closes them.
func (j *journal) closeLogs() error {
	var err error
	for _, l := range j.logs {
		l.d.LogTo(nil)
		if e := l.f.Close(); err == nil {
			err = e
		}
	}
	j.logs = nil
	return err
}

func (j *journal) ckptPath(gen int) string {
	return filepath.Join(j.dir, "frontier."+strconv.Itoa(gen)+".ckpt")
}

func (j *journal) journalPath(gen int) string {
	return filepath.Join(j.dir, "journal."+strconv.Itoa(gen))
}

func truncateTorn(f *os.File, rec int64) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if extra := st.Size() % rec; extra != 0 {
		return f.Truncate(st.Size() - extra)
	}
	return nil
}

func (j *journal) loadSeen(ctx context.Context) error {
	b, err := os.ReadFile(filepath.Join(j.dir, "seen.fp"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("crawlkit: seen set: %w", err)
	}
	b = b[:len(b)/8*8]
	fps := make([]uint64, 0, 4096)
	var dst []bool
	for len(b) > 0 {
		fps = append(fps, binary.LittleEndian.Uint64(b))
		b = b[8:]
		if len(fps) == cap(fps) || len(b) == 0 {
			if dst, err = j.c.urlSeen.TestAndAddBatch(ctx, dst[:0], fps); err != nil {
				return err
			}
			fps = fps[:0]
		}
	}
	return nil
}

// readJournal replays journal.G: URLs queued and not finished since the
// checkpoint (in order), and URLs finished since (which the frontier
// checkpoint may still hold).
func (j *journal) readJournal(ctx context.Context) (pending map[string]frontier.URL, order []string, done map[string]bool, err error) {
	pending, done = map[string]frontier.URL{}, map[string]bool{}
	f, err := os.Open(j.journalPath(j.gen))
	if errors.Is(err, os.ErrNotExist) {
		return pending, nil, done, nil
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("crawlkit: journal: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("crawlkit: journal: %w", err)
	}
	// The last line may be torn by a kill: only complete lines count.
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		data = data[:i+1]
	} else {
		data = nil
	}
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		line := data[:i]
		data = data[i+1:]
		op, rest, ok := bytes.Cut(line, []byte{' '})
		if !ok {
			continue
		}
		num, u, ok := bytes.Cut(rest, []byte{' '})
		if !ok || len(u) == 0 {
			continue
		}
		n, err := strconv.Atoi(string(num))
		if err != nil || n < 0 {
			continue
		}
		us := string(u)
		switch string(op) {
		case "+":
			if _, err := j.c.urlSeen.TestAndAdd(ctx, dedup.Fingerprint(us)); err != nil {
				return nil, nil, nil, err
			}
			if _, ok := pending[us]; !ok {
				order = append(order, us)
			}
			pending[us] = frontier.URL{URL: us, Depth: n}
			delete(done, us)
			j.c.c.outcomes[Queued].Add(1)
		case "-":
			if _, ok := pending[us]; ok {
				delete(pending, us)
			} else {
				done[us] = true
			}
			if n < int(numOutcomes) {
				j.c.c.outcomes[n].Add(1)
			}
		}
	}
	return pending, order, done, nil
}

func (j *journal) restoreFrontier(ctx context.Context, r io.Reader, done map[string]bool) (int, error) {
	cr := frontier.NewCheckpointReader(bufio.NewReaderSize(r, 256<<10))
	var batch []frontier.URL
	n := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := j.c.front.Add(ctx, batch...)
		n += len(batch)
		batch = batch[:0]
		return err
	}
	for {
		u, err := cr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("crawlkit: frontier checkpoint: %w", err)
		}
		if done[u.URL] {
			continue
		}
		j.c.noteHost(frontier.HostKey(u.URL))
		batch = append(batch, u)
		if len(batch) == 4096 {
			if err := flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, flush()
}

// added journals URLs about to be queued.
func (j *journal) added(batch []frontier.URL) error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := range batch {
		b := append(j.line[:0], '+', ' ')
		b = strconv.AppendInt(b, int64(batch[i].Depth), 10)
		b = append(b, ' ')
		b = append(b, batch[i].URL...)
		b = append(b, '\n')
		j.line = b
		j.jw.Write(b)
		binary.LittleEndian.PutUint64(j.fp[:], dedup.Fingerprint(batch[i].URL))
		j.sw.Write(j.fp[:])
	}
	if err := j.sw.Flush(); err != nil {
		return fmt.Errorf("crawlkit: journal: %w", err)
	}
	if err := j.jw.Flush(); err != nil {
		return fmt.Errorf("crawlkit: journal: %w", err)
	}
	return nil
}

// done journals a URL's outcome.
func (j *journal) done(u string, o Outcome) error {
	if j == nil {
		return nil
	}
	if j.c.cfg.Continuous {
		// The frontier keeps the URL for its revisit: it stays pending.
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	b := append(j.line[:0], '-', ' ')
	b = strconv.AppendInt(b, int64(o), 10)
	b = append(b, ' ')
	b = append(b, u...)
	b = append(b, '\n')
	j.line = b
	j.jw.Write(b)
	if err := j.jw.Flush(); err != nil {
		return fmt.Errorf("crawlkit: journal: %w", err)
	}
	return nil
}

// checkpoint compacts the journal: with the workers paused, the frontier
// is written to a new checkpoint and the next journal generation begins.
func (c *Crawler) checkpoint() error {
	j := c.journal
	c.pause.Lock()
	defer c.pause.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()

	next := j.gen + 1
	ckpt := j.ckptPath(next)
	f, err := os.Create(ckpt)
	if err != nil {
		return fmt.Errorf("crawlkit: checkpoint: %w", err)
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	err = c.front.(frontier.Checkpointer).Checkpoint(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(ckpt)
		return fmt.Errorf("crawlkit: checkpoint: %w", err)
	}
	nj, err := os.OpenFile(j.journalPath(next), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("crawlkit: checkpoint: %w", err)
	}
	if err := j.sw.Flush(); err == nil {
		j.sf.Sync()
	}
	if err := j.compactLogs(); err != nil {
		c.cfg.Logger.Error("crawlkit: checkpoint", "err", err)
	}
	for _, l := range j.logs {
		l.f.Sync()
	}
	meta := checkpointMeta{Version: journalVersion, Generation: next, Written: time.Now().UTC(), Stats: c.Stats()}
	mb, _ := json.MarshalIndent(meta, "", "  ")
	if err := writeFileAtomic(filepath.Join(j.dir, "checkpoint.json"), mb); err != nil {
		nj.Close()
		os.Remove(ckpt)
		return err
	}
	// Committed: generation next is the state; drop generation j.gen.
	j.jw.Flush()
	j.jf.Close()
	os.Remove(j.journalPath(j.gen))
	os.Remove(j.ckptPath(j.gen))
	j.gen, j.jf = next, nj
	j.jw.Reset(nj)
	return nil
}

func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("crawlkit: checkpoint: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("crawlkit: checkpoint: %w", err)
	}
	return nil
}

// Close flushes and closes the journal files.
func (j *journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	err := j.jw.Flush()
	if e := j.sw.Flush(); err == nil {
		err = e
	}
	if e := j.jf.Close(); err == nil {
		err = e
	}
	if e := j.sf.Close(); err == nil {
		err = e
	}
	if e := j.closeLogs(); err == nil {
		err = e
	}
	return err
}
