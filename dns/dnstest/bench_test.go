package dnstest

import (
	"testing"

	mdns "github.com/miekg/dns"
)

// BenchmarkServeUDP measures the server's answer rate for wildcard A queries
// over one UDP connection per goroutine (client cost included).
func BenchmarkServeUDP(b *testing.B) {
	s := Start(b, Config{})
	s.AddWildcard("sim.test", 60, lo)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		c := &mdns.Client{Net: "udp"}
		conn, err := c.Dial(s.Addr())
		if err != nil {
			b.Error(err)
			return
		}
		defer conn.Close()
		m := new(mdns.Msg).SetQuestion("h1.sim.test.", mdns.TypeA)
		for pb.Next() {
			r, _, err := c.ExchangeWithConn(m, conn)
			if err != nil || len(r.Answer) != 1 {
				b.Errorf("%v %v", r, err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
}
