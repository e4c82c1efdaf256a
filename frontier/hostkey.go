package frontier

import "strings"

// HostKey returns the host of an absolute URL in lower case, without
// userinfo and port: the default politeness key. When the host is already
// in lower case the result is a substring of rawURL and costs no memory of
// its own. It never fails: a string without "://" is its own key. One
// pass over the authority, no allocation for lower-case hosts.
func HostKey(rawURL string) string {
	i := strings.Index(rawURL, "://")
	if i < 0 {
		return rawURL
	}
	rest := rawURL[i+3:]
	start, end, colon := 0, len(rest), -1
	upper, bracket := false, false
	for k := 0; k < len(rest); k++ {
		switch c := rest[k]; {
		case c == '/' || c == '?' || c == '#':
			end = k
			k = len(rest)
		case c == '@':
			start, colon, upper, bracket = k+1, -1, false, false
		case c == ':':
			if !bracket {
				colon = k
			}
		case c == '[':
			bracket = true
		case c == ']':
			bracket = false
			colon = -1
		case 'A' <= c && c <= 'Z':
			upper = true
		}
	}
	if colon >= start {
		end = colon
	}
	host := rest[start:end]
	if len(host) > 1 && host[0] == '[' {
		if j := strings.IndexByte(host, ']'); j > 0 {
			host = host[1:j]
		}
	}
	if upper {
		return strings.ToLower(host)
	}
	return host
}
