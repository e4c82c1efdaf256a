package urlnorm

import (
	"slices"
	"testing"
)

func TestHostKeys(t *testing.T) {
	tests := []struct{ url, host, domain, key string }{
		{"http://www.stanford.edu/alchemy", "www.stanford.edu", "stanford.edu", "edu.stanford.www/alchemy"},
		{"http://WWW.CS.Stanford.EDU./a?b=1", "www.cs.stanford.edu", "stanford.edu", "edu.stanford.cs.www/a?b=1"},
		{"https://a.b.example.co.uk:443/", "a.b.example.co.uk", "example.co.uk", "uk.co.example.b.a/"},
		{"http://example.com:8080", "example.com", "example.com", "com.example:8080/"},
		{"http://h003.sim.test:41234/p/1", "h003.sim.test", "sim.test", "test.sim.h003:41234/p/1"},
		{"http://co.uk/", "co.uk", "co.uk", "uk.co/"},
		{"http://localhost/", "localhost", "localhost", "localhost/"},
		{"http://192.168.1.10/x", "192.168.1.10", "192.168.1.10", "192.168.1.10/x"},
		{"http://[2001:db8::1]:8080/x", "2001:db8::1", "2001:db8::1", "[2001:db8::1]:8080/x"},
		{"http://xn--bcher-kva.example/%2F", "xn--bcher-kva.example", "xn--bcher-kva.example", "example.xn--bcher-kva/%2F"},
	}
	for _, tt := range tests {
		u := mustParse(t, tt.url)
		if got := Host(u); got != tt.host {
			t.Errorf("Host(%q) = %q, want %q", tt.url, got, tt.host)
		}
		if got := Domain(Host(u)); got != tt.domain {
			t.Errorf("Domain(%q) = %q, want %q", Host(u), got, tt.domain)
		}
		if got := SortKey(u); got != tt.key {
			t.Errorf("SortKey(%q) = %q, want %q", tt.url, got, tt.key)
		}
	}
	if got := ReverseHost("www.stanford.edu"); got != "edu.stanford.www" {
		t.Errorf("ReverseHost = %q", got)
	}
	if got := ReverseHost("10.0.0.1"); got != "10.0.0.1" {
		t.Errorf("ReverseHost(IP) = %q", got)
	}
}

// TestSortKeyOrder checks what the key is for: hosts of one domain and pages
// of one host end up next to each other.
func TestSortKeyOrder(t *testing.T) {
	urls := []string{
		"http://www.stanford.edu/b", "http://cs.stanford.edu/x", "http://www.mit.edu/",
		"http://www.stanford.edu/a", "http://example.com/", "http://cs.stanford.edu/",
	}
	var keys []string
	for _, s := range urls {
		keys = append(keys, SortKey(mustParse(t, s)))
	}
	slices.Sort(keys)
	want := []string{
		"com.example/", "edu.mit.www/", "edu.stanford.cs/", "edu.stanford.cs/x",
		"edu.stanford.www/a", "edu.stanford.www/b",
	}
	if !slices.Equal(keys, want) {
		t.Errorf("sorted keys = %q, want %q", keys, want)
	}
}

func BenchmarkSortKey(b *testing.B) {
	u := mustParse(b, "http://www.stanford.edu/class/cs276/handouts/lecture14-crawling.pdf")
	b.ReportAllocs()
	for b.Loop() {
		_ = SortKey(u)
	}
}

func BenchmarkDomain(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = Domain("a.b.example.co.uk")
	}
}
