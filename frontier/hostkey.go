package frontier

import "strings"

// HostKey returns the host of an absolute URL in lower case, without
// userinfo and port: the default politeness key. When the host is already
// in lower case the result is a substring of rawURL and costs no memory of
// its own. It never fails: a string without "://" is its own key.
func HostKey(rawURL string) string {
	i := strings.Index(rawURL, "://")
	if i < 0 {
		return rawURL
	}
	rest := rawURL[i+3:]
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		rest = rest[:j]
	}
	if j := strings.LastIndexByte(rest, '@'); j >= 0 {
		rest = rest[j+1:]
	}
	if strings.HasPrefix(rest, "[") {
		if j := strings.IndexByte(rest, ']'); j >= 0 {
			rest = rest[1:j]
		}
	} else if j := strings.LastIndexByte(rest, ':'); j >= 0 {
		rest = rest[:j]
	}
	for k := 0; k < len(rest); k++ {
		if c := rest[k]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(rest)
		}
	}
	return rest
}
