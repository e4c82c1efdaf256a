package shingle_test

import (
	"math/rand/v2"
	"strings"
)

var vocabulary = func() []string {
	r := rand.New(rand.NewPCG(11, 12))
	const letters = "abcdefghijklmnopqrstuvwxyz"
	v := []string{"über", "café", "naïve", "straße", "déjà", "москва", "αθηνα"}
	for len(v) < 5000 {
		n := 2 + r.IntN(8)
		var b strings.Builder
		for range n {
			b.WriteByte(letters[r.IntN(len(letters))])
		}
		v = append(v, b.String())
	}
	return v
}()

func randomWord(r *rand.Rand) string { return vocabulary[r.IntN(len(vocabulary))] }

func randomWords(r *rand.Rand, n int) []string {
	w := make([]string, n)
	for i := range w {
		w[i] = randomWord(r)
	}
	return w
}

func joinWords(w []string) string { return strings.Join(w, " ") }

// benchText returns about n bytes of web-page-like text: mostly ASCII
// words, some capitalised, some non-ASCII, with punctuation.
func benchText(n int) []byte {
	r := rand.New(rand.NewPCG(1, 1))
	var b strings.Builder
	for b.Len() < n {
		w := randomWord(r)
		if r.IntN(10) == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
		switch r.IntN(12) {
		case 0:
			b.WriteString(", ")
		case 1:
			b.WriteString(". ")
		default:
			b.WriteByte(' ')
		}
	}
	return []byte(b.String())
}
