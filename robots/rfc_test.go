package robots

import "testing"

type check struct {
	agent, target string
	want          bool
}

func runChecks(t *testing.T, file string, checks []check) {
	t.Helper()
	r := Parse(200, []byte(file))
	for _, c := range checks {
		if got := r.Allowed(c.agent, c.target); got != c.want {
			t.Errorf("Allowed(%q, %q) = %v, want %v\nfile:\n%s", c.agent, c.target, got, c.want, file)
		}
	}
}

// The examples of RFC 9309 §5, with the outcomes its prose states.
func TestRFC9309Section5(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		checks []check
	}{
		{
			name: "5.1 simple example",
			file: "User-Agent: *\n" +
				"Disallow: *.gif$\n" +
				"Disallow: /example/\n" +
				"Allow: /publications/\n" +
				"\n" +
				"User-Agent: foobot\n" +
				"Disallow:/\n" +
				"Allow:/example/page.html\n" +
				"Allow:/example/allowed.gif\n" +
				"\n" +
				"User-Agent: barbot\n" +
				"User-Agent: bazbot\n" +
				"Disallow: /example/page.html\n" +
				"\n" +
				"User-Agent: quxbot\n" +
				"\n" +
				"EOF\n",
			checks: []check{
				// "*": /publications/ allowed, /example/ and *.gif disallowed,
				// '*' matching any character including '/'.
				{"otherbot", "/publications/", true},
				{"otherbot", "/publications/a.html", true},
				{"otherbot", "/example/", false},
				{"otherbot", "/example/x.html", false},
				{"otherbot", "/a/b/c.gif", false},
				{"otherbot", "/a.gif?x", true}, // '$' anchors at the end
				{"otherbot", "/other.html", true},
				// foobot: only the two allowed URLs.
				{"foobot", "/example/page.html", true},
				{"foobot", "/example/allowed.gif", true},
				{"foobot", "/example/other.html", false},
				{"foobot", "/", false},
				{"foobot", "/publications/", false},
				// barbot and bazbot share one group.
				{"barbot", "/example/page.html", false},
				{"barbot", "/example/other.html", true},
				{"bazbot", "/example/page.html", false},
				{"bazbot", "/a.gif", true},
				// quxbot: empty group, everything allowed, no "*" fallback.
				{"quxbot", "/example/", true},
				{"quxbot", "/a.gif", true},
			},
		},
		{
			name: "5.2 longest match",
			file: "User-Agent: foobot\n" +
				"Allow: /example/page/\n" +
				"Disallow: /example/page/disallowed.gif\n",
			checks: []check{
				{"foobot", "/example/page/", true},
				{"foobot", "/example/page/allowed.gif", true},
				{"foobot", "/example/page/disallowed.gif", false},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runChecks(t, tt.file, tt.checks) })
	}
}

// The table of RFC 9309 §2.2.2: a rule written in any column's form matches
// a URL written in any column's form of the same row ("Path", "Encoded Path"
// and "Path to Match" are the same resource), and nothing else.
func TestRFC9309PathEncodingTable(t *testing.T) {
	rows := []struct{ path, encoded, match string }{
		{"/foo/bar?baz=quz", "/foo/bar?baz=quz", "/foo/bar?baz=quz"},
		{"/foo/bar?baz=https://foo.bar", "/foo/bar?baz=https%3A%2F%2Ffoo.bar", "/foo/bar?baz=https%3A%2F%2Ffoo.bar"},
		{"/foo/bar/\u30c4", "/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84"},
		{"/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84"},
		{"/foo/bar/%62%61%7A", "/foo/bar/%62%61%7A", "/foo/bar/baz"},
	}
	for _, row := range rows {
		forms := []string{row.path, row.encoded, row.match}
		for _, rule := range forms {
			file := "User-agent: *\nDisallow: " + rule + "$\n"
			for _, url := range forms {
				runChecks(t, file, []check{
					{"bot", url, false},
					{"bot", "https://example.com" + url, false},
					{"bot", url + "x", true},
				})
			}
		}
	}
	// Reserved characters in the path are not decoded: "%2F" is not "/",
	// "%3F" is not the '?' that starts the query.
	runChecks(t, "User-agent: *\nDisallow: /a/b\nDisallow: /c?d\n", []check{
		{"bot", "/a%2Fb", true}, {"bot", "/a/b", false},
		{"bot", "/c%3Fd", true}, {"bot", "/c?d", false},
	})
	// In the query, sub-delimiters stay distinct from their escapes.
	runChecks(t, "User-agent: *\nDisallow: /s?a=1&b=2\n", []check{
		{"bot", "/s?a=1&b=2", false}, {"bot", "/s?a=1%26b=2", true}, {"bot", "/s?a%3D1&b=2", true},
	})
}

// The tables of RFC 9309 §2.2.3: special characters and their encoded
// literal forms.
func TestRFC9309SpecialCharacters(t *testing.T) {
	t.Run("# comment", func(t *testing.T) {
		runChecks(t, "User-agent: *\nDisallow: /\nallow: / # comment in line\n\n# comment on its own line\n", []check{
			{"bot", "/anything", true},
		})
	})
	t.Run("$ end of pattern", func(t *testing.T) {
		runChecks(t, "User-agent: *\nDisallow: /\nallow: /this/path/exactly$\n", []check{
			{"bot", "/this/path/exactly", true},
			{"bot", "/this/path/exactly/", false},
			{"bot", "/this/path/exactlyx", false},
			{"bot", "/this/path/exactly?q", false},
		})
	})
	t.Run("* any characters", func(t *testing.T) {
		runChecks(t, "User-agent: *\nDisallow: /\nallow: /this/*/exactly\n", []check{
			{"bot", "/this/a/exactly", true},
			{"bot", "/this/a/b/c/exactly", true},
			{"bot", "/this//exactly", true},
			{"bot", "/this/exactly", false},
			{"bot", "/that/a/exactly", false},
		})
	})
	t.Run("%2A matches a literal *", func(t *testing.T) {
		runChecks(t, "User-agent: *\nDisallow: /path/file-with-a-%2A.html\n", []check{
			{"bot", "https://www.example.com/path/file-with-a-*.html", false},
			{"bot", "https://www.example.com/path/file-with-a-%2a.html", false},
			{"bot", "https://www.example.com/path/file-with-a-x.html", true},
		})
	})
	t.Run("%24 matches a literal $", func(t *testing.T) {
		runChecks(t, "User-agent: *\nDisallow: /path/foo-%24\n", []check{
			{"bot", "https://www.example.com/path/foo-$", false},
			{"bot", "https://www.example.com/path/foo-$/bar", false},
			{"bot", "https://www.example.com/path/foo-", true},
		})
	})
}

// The group examples of RFC 9309 §2.2.1.
func TestRFC9309Section221(t *testing.T) {
	t.Run("product token in a User-Agent", func(t *testing.T) {
		runChecks(t, "user-agent: ExampleBot\ndisallow: /\n", []check{
			{"ExampleBot", "/x", false},
			{"ExampleBot/0.1", "/x", false},
			{"examplebot", "/x", false},
			{"OtherBot", "/x", true},
		})
	})
	t.Run("groups merged", func(t *testing.T) {
		runChecks(t, "user-agent: ExampleBot\ndisallow: /foo\ndisallow: /bar\n\nuser-agent: ExampleBot\ndisallow: /baz\n", []check{
			{"ExampleBot", "/foo", false},
			{"ExampleBot", "/bar", false},
			{"ExampleBot", "/baz", false},
			{"ExampleBot", "/qux", true},
		})
	})
}
