package dns

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns/dnstest"
	mdns "github.com/miekg/dns"
)

// TestLateReadIsNoTimeout holds the socket's reader back, as a machine
// whose cores are all busy does, while the answer sits in the socket:
// the attempt's wait ends, but the answer is not asked for again until
// the reader has had one more wait to read it. An answer the server
// never sent leaves the socket empty and is asked again on time.
func TestLateReadIsNoTimeout(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("answers unread in a socket are seen on Linux only (SIOCINQ)")
	}
	const wait = 200 * time.Millisecond // the first attempt's, before any answer
	tests := []struct {
		name     string
		drop     bool          // the server drops the first query
		held     time.Duration // the reader runs again this long after the query
		queries  uint64        // sent in all
		timeouts uint64
		late     uint64 // Stats.LateReads
	}{
		{"answer read after its wait", false, wait + wait/2, 1, 0, 1},
		{"answer read after one more wait", false, 3 * wait, 2, 1, 0},
		{"answer lost, reader running", true, 0, 2, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := dnstest.Start(t, dnstest.Config{})
			srv.AddAddr("a.test", 300, lo)
			if tc.drop {
				srv.SetFault("a.test", dnstest.Fault{Mode: dnstest.Drop, First: 1})
			}
			c, err := New(&Options{Nameservers: []string{srv.Addr()}, Timeout: wait, Attempts: 3})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			gate := make(chan struct{})
			open := sync.OnceFunc(func() { close(gate) })
			defer open() // before Close, which waits for the reader
			if tc.held == 0 {
				open()
			}
			u, err := c.opts.dialUDP(srv.Addr(), gate)
			if err != nil {
				t.Fatal(err)
			}
			c.udp[0].close()
			c.udp[0] = u
			if tc.held > 0 {
				time.AfterFunc(tc.held, open)
			}
			start := time.Now()
			m, _, e := c.exchange(context.Background(), "a.test", "a.test.", mdns.TypeA)
			took := time.Since(start)
			if e != nil || m == nil || len(m.Answer) != 1 {
				t.Fatalf("exchange: %v, %v", m, e)
			}
			st := c.Stats()
			t.Logf("answered after %v; %d queries, %d timeouts, %d read late", took.Round(time.Millisecond), st.Queries, st.Timeouts, st.LateReads)
			if st.Queries != tc.queries || st.Timeouts != tc.timeouts || st.LateReads != tc.late {
				t.Errorf("%d queries, %d timeouts and %d read late, want %d, %d and %d",
					st.Queries, st.Timeouts, st.LateReads, tc.queries, tc.timeouts, tc.late)
			}
			if tc.held > 0 && took < tc.held {
				t.Errorf("answered after %v, before the reader ran again (%v)", took, tc.held)
			}
			if tc.drop && took > wait+wait/2 {
				t.Errorf("a lost answer asked again after %v, want about %v", took, wait)
			}
		})
	}
}
