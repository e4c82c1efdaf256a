package cluster

import (
	"bytes"
	"slices"
	"testing"

	"github.com/crawlkit/crawlkit/frontier"
)

// Every decoder of a message from the network is fuzzed: it must never
// panic, and what it accepts must encode back to the same bytes (the
// encodings are canonical).

func FuzzDecodeURLs(f *testing.F) {
	f.Add(AppendURLs(nil, nil))
	f.Add(AppendURLs(nil, []frontier.URL{{URL: "http://a.test/", Depth: 1, Priority: 2, Source: "http://b.test/", Anchor: "x"}}))
	f.Add([]byte{kindURLs, 0xff, 0xff})
	f.Add(AppendURLs(nil, []frontier.URL{{URL: "http://a.test/sitemap.xml", Sitemap: 1, ChangeFreq: frontier.FreqWeekly}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		urls, err := DecodeURLs(data)
		if err != nil {
			return
		}
		again := AppendURLs(nil, urls)
		if data[0] == kindURLs {
			// The older kind is read, never written: its URLs must
			// come back the same through the current one.
			back, err := DecodeURLs(again)
			if err != nil || !slices.Equal(back, urls) {
				t.Fatalf("an old batch of %d URLs re-encoded to %x decodes to %+v, %v", len(urls), again, back, err)
			}
			return
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("decoded %d URLs that encode to %x, not %x", len(urls), again, data)
		}
	})
}

func FuzzDecodeSeen(f *testing.F) {
	f.Add(appendSeen(nil, nil))
	f.Add(appendSeen(nil, []seenItem{{fp: 1, url: "http://a.test/"}, {fp: 1 << 63, url: ""}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		items, err := decodeSeen(data)
		if err != nil {
			return
		}
		if again := appendSeen(nil, items); !bytes.Equal(again, data) {
			t.Fatalf("re-encoded %x, not %x", again, data)
		}
	})
}

func FuzzDecodeSeenAnswer(f *testing.F) {
	f.Add(appendSeenAnswer(nil, nil, nil))
	f.Add(appendSeenAnswer(nil, []bool{true, false, false, true, false, false, false, false, true}, []string{"a", "", "", "b", "", "", "", "", "c"}))
	f.Fuzz(func(t *testing.T, data []byte) {
		seen, urls, err := decodeSeenAnswer(data)
		if err != nil {
			return
		}
		if len(seen) != len(urls) {
			t.Fatalf("%d bits, %d URLs", len(seen), len(urls))
		}
		if again := appendSeenAnswer(nil, seen, urls); !bytes.Equal(again, data) {
			t.Fatalf("re-encoded %x, not %x", again, data)
		}
	})
}

func FuzzDecodeStatus(f *testing.F) {
	f.Add(appendStatus(nil, Status{}))
	f.Add(appendStatus(nil, Status{Busy: 300, Received: 1 << 40}))
	f.Add(appendStatus(nil, Status{Busy: 1, Leaving: true}))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := decodeStatus(data)
		if err != nil {
			return
		}
		if again := appendStatus(nil, s); !bytes.Equal(again, data) {
			t.Fatalf("re-encoded %x, not %x", again, data)
		}
	})
}

func FuzzDecodeLeave(f *testing.F) {
	f.Add(appendLeave(nil, "n0", Status{Busy: 3, Received: 9, Leaving: true}))
	f.Add(appendLeave(nil, "node-b", Status{}))
	f.Fuzz(func(t *testing.T, data []byte) {
		node, s, err := decodeLeave(data)
		if err != nil {
			return
		}
		if !validToken(node) {
			t.Fatalf("decoded node name %q", node)
		}
		if again := appendLeave(nil, node, s); !bytes.Equal(again, data) {
			t.Fatalf("re-encoded %x, not %x", again, data)
		}
	})
}

func FuzzDecodeForget(f *testing.F) {
	f.Add(appendForget(nil, 0xdeadbeef))
	f.Fuzz(func(t *testing.T, data []byte) {
		fp, err := decodeForget(data)
		if err != nil {
			return
		}
		if again := appendForget(nil, fp); !bytes.Equal(again, data) {
			t.Fatalf("re-encoded %x, not %x", again, data)
		}
	})
}

func FuzzUnframe(f *testing.F) {
	f.Add(frame([]byte("body"), nil))
	f.Add(frame(nil, ErrCorrupt))
	f.Add([]byte{7})
	f.Fuzz(func(t *testing.T, data []byte) {
		body, err := unframe("s", data)
		if err != nil {
			return
		}
		if again := frame(body, nil); !bytes.Equal(again, data) {
			t.Fatalf("re-framed %x, not %x", again, data)
		}
	})
}
