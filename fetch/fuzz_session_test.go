package fetch

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// FuzzParseProxy: a proxy URL either fails with ErrOption or parses to
// one that parses again to itself, with a scheme the fetcher speaks and a
// port.
func FuzzParseProxy(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:3128", "SOCKS5://u:p@[::1]", "socks5h://x", "http://h/p?q",
		"http://u:%zz@h", "http://[fe80::1%25eth0]:8080", "http://h:99999", "https://h", "http://:80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := ParseProxy(raw)
		if err != nil {
			if !errors.Is(err, ErrOption) {
				t.Fatalf("ParseProxy(%q): %v does not wrap ErrOption", raw, err)
			}
			return
		}
		if (u.Scheme != "http" && u.Scheme != "socks5") || u.Port() == "" || u.Hostname() == "" {
			t.Fatalf("ParseProxy(%q) = %v", raw, u)
		}
		again, err := ParseProxy(u.String())
		if err != nil || again.String() != u.String() {
			t.Fatalf("ParseProxy(%q) = %v, which parses to %v, %v", raw, u, again, err)
		}
	})
}

// FuzzParseHeader: a header line either fails with ErrOption or gives a
// canonical name and a value that are valid on the wire, and Validate
// judges the result without panicking.
func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{"X-A: b", "user-agent: x", "a:b:c", ":", "X: a\r\nB: c", "X-\x00: y", " X : y "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		name, value, err := ParseHeader(line)
		if err != nil {
			if !errors.Is(err, ErrOption) {
				t.Fatalf("ParseHeader(%q): %v does not wrap ErrOption", line, err)
			}
			return
		}
		if name != http.CanonicalHeaderKey(name) || strings.ContainsAny(value, "\r\n\x00") || value != strings.TrimSpace(value) {
			t.Fatalf("ParseHeader(%q) = %q, %q", line, name, value)
		}
		o := Options{Header: http.Header{name: {value}}}
		if err := o.Validate(); err != nil && !errors.Is(err, ErrOption) {
			t.Fatalf("Validate: %v", err)
		}
	})
}

// FuzzConnectAnswer: whatever an HTTP proxy answers to CONNECT, the
// fetcher returns a tunnel (on a 2xx, reading first whatever followed
// the answer) or a *Error, and never reads past MaxHeaderSize.
func FuzzConnectAnswer(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 Connection established\r\n\r\n",
		"HTTP/1.1 200 OK\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.0 502\r\n\r\n",
		"SSH-2.0-OpenSSH_9.6\r\n",
		"HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", 3000) + "\r\n\r\n",
		"\x05\x00",
	} {
		f.Add([]byte(s))
	}
	fh := &HTTP{opts: Options{MaxHeaderSize: 1024, UserAgent: "fuzz"}}
	pu := &url.URL{Scheme: "http", Host: "proxy.test:3128", User: url.UserPassword("u", "p")}
	target := netip.MustParseAddrPort("192.88.99.7:80")
	f.Fuzz(func(t *testing.T, answer []byte) {
		client, proxy := net.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer proxy.Close()
			var req bytes.Buffer
			buf := make([]byte, 512)
			for !bytes.Contains(req.Bytes(), []byte("\r\n\r\n")) {
				n, err := proxy.Read(buf)
				if err != nil {
					return
				}
				req.Write(buf[:n])
			}
			_, _ = proxy.Write(answer)
		}()
		conn, err := fh.connect(client, pu, target, "h.test:80")
		var fe *Error
		switch {
		case err != nil && !errors.As(err, &fe) && !isNetErr(err):
			t.Fatalf("error %v (%T) is neither a *Error nor a net error", err, err)
		case err == nil:
			// What followed the answer comes first out of the tunnel.
			rest, _ := io.ReadAll(conn)
			if !bytes.HasSuffix(answer, rest) {
				t.Fatalf("tunnel read %q, not the end of the answer", rest)
			}
		}
		client.Close()
		<-done
	})
}

func isNetErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe)
}
