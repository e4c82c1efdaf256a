package shingle_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/crawlkit/crawlkit/shingle"
)

func tokens(s string) []string {
	var out []string
	for w := range shingle.Words([]byte(s)) {
		out = append(out, string(w))
	}
	return out
}

func TestTokenizer(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   ,.;!  ", nil},
		{"a rose is a rose", []string{"a", "rose", "is", "a", "rose"}},
		{"Hello, World!", []string{"hello", "world"}},
		{"abcDEF ghi", []string{"abcdef", "ghi"}},
		{"don't stop", []string{"don", "t", "stop"}},
		{"e-mail: x@y.org", []string{"e", "mail", "x", "y", "org"}},
		{"ÉCOLE Straße İstanbul", []string{"école", "straße", "istanbul"}},
		{"ΑΘΗΝΑ Москва", []string{"αθηνα", "москва"}},
		{"e\u0301te\u0301", []string{"e\u0301te\u0301"}},
		{"東京 タワー", []string{"東京", "タワー"}},
		{"42 3.14 ½", []string{"42", "3", "14", "½"}},
		{"tab\there\nnew\u00a0nbsp", []string{"tab", "here", "new", "nbsp"}},
		{"bad\xffutf8\xc3", []string{"bad", "utf8"}},
		{"emoji😀ok", []string{"emoji", "ok"}},
		{"x\ufffdy", []string{"x", "y"}},
		{"MiXeD123cAsE", []string{"mixed123case"}},
	}
	for _, tt := range tests {
		if got := tokens(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("tokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTokenizerEarlyStop(t *testing.T) {
	n := 0
	for range shingle.Words([]byte("a b c d")) {
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Fatalf("n = %d", n)
	}
}

func TestTokenizerNoAllocs(t *testing.T) {
	text := []byte(strings.Repeat("The Ünïcödé quick brown fox, jumps! ", 50))
	var tk shingle.Tokenizer
	tk.Reset(text)
	for tk.Next() { // warm up the buffer
	}
	allocs := testing.AllocsPerRun(20, func() {
		tk.Reset(text)
		for tk.Next() {
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per run, want 0", allocs)
	}
}

// refTokens is an independent, allocating implementation of the
// tokenizer's specification.
func refTokens(s string) []string {
	f := strings.FieldsFunc(s, func(r rune) bool {
		return r == utf8.RuneError || !(unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r))
	})
	for i := range f {
		f[i] = strings.Map(unicode.ToLower, f[i])
	}
	return f
}

func FuzzTokenizer(f *testing.F) {
	for _, s := range []string{"", "Hello, World!", "ÉCOLE Straße", "bad\xffutf8", "e\u0301", "東京 タワー", "a\u00a0b"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got []string
		var tk shingle.Tokenizer
		tk.Reset(data)
		for tk.Next() {
			tok := tk.Token()
			if len(tok) == 0 || !utf8.Valid(tok) {
				t.Fatalf("bad token %q", tok)
			}
			if !bytes.Equal(tok, bytes.Map(unicode.ToLower, tok)) {
				t.Fatalf("token %q not lowercase", tok)
			}
			got = append(got, string(tok))
		}
		if want := refTokens(string(data)); !slices.Equal(got, want) {
			t.Fatalf("tokens(%q) = %q, want %q", data, got, want)
		}
	})
}
