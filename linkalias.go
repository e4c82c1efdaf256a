package crawlkit

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
)

// aliasMark starts an alias record of a link log: "=\talias\tcanonical".
// A source is an absolute URL, so it cannot be "=".
const aliasMark = "="

func appendAlias(b []byte, alias, canonical string) []byte {
	b = append(b, aliasMark...)
	b = append(b, '\t')
	b = append(b, alias...)
	b = append(b, '\t')
	b = append(b, canonical...)
	return append(b, '\n')
}

// Alias implements AliasSink: an alias record.
func (l *LinkLog) Alias(_ context.Context, alias, canonical string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = appendAlias(l.buf[:0], alias, canonical)
	_, err := l.w.Write(l.buf)
	return err
}

// Alias implements AliasSink: an alias record, in one write like a
// page's lines.
func (l *LinkLogFile) Alias(_ context.Context, alias, canonical string) error {
	return l.write(func(b []byte) ([]byte, error) { return appendAlias(b, alias, canonical), nil })
}

var (
	_ AliasSink = (*LinkLog)(nil)
	_ AliasSink = (*LinkLogFile)(nil)
)

// maxAliasHops bounds the chain of aliases ReadLinkLogCanonical follows
// (a page whose canonical URL names another canonical URL).
const maxAliasHops = 8

// ReadLinkLogCanonical is ReadLinkLog with every alias collapsed into its
// canonical URL: it reads r twice, first for the alias records, then for
// the links, each end of which it replaces by the URL its alias chain
// ends at (up to 8 hops; a cycle leaves the URL as it is). So an alias
// is no node: its out-links are its canonical URL's, and links to it
// point to its canonical URL. A link that collapsing makes a self-loop
// (an alias's rel=canonical link itself) is dropped; a page's link to
// itself is kept. It holds the aliases in memory, about 100 bytes plus
// the URLs each. The source of a line whose source is an alias is
// reported to node again when it differs from the line before's.
func ReadLinkLogCanonical(r io.ReadSeeker, node func(src string) error, link func(src, dst string) error) error {
	aliases := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), aliasMark+"\t")
		if !ok {
			continue
		}
		if a, c, ok := strings.Cut(rest, "\t"); ok && a != "" && c != "" && a != c {
			aliases[a] = c
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("crawlkit: link log: %w", err)
	}
	resolve := func(u string) string {
		v := u
		for range maxAliasHops {
			c, ok := aliases[v]
			if !ok {
				return v
			}
			if c == u {
				return u // a cycle
			}
			v = c
		}
		return v
	}
	last := ""
	return ReadLinkLog(r, func(src string) error {
		if s := resolve(src); s != last {
			last = s
			return node(s)
		}
		return nil
	}, func(src, dst string) error {
		s, d := resolve(src), resolve(dst)
		if s == d && src != dst {
			return nil
		}
		return link(s, d)
	})
}
