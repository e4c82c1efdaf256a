package shingle_test

import (
	"fmt"

	"github.com/crawlkit/crawlkit/shingle"
)

func Example() {
	sk, err := shingle.NewSketcher(&shingle.Options{K: 256, W: 3})
	if err != nil {
		panic(err)
	}
	a := []byte("The quick brown fox jumps over the lazy dog near the river bank, " +
		"while the farmer watches the sheep graze on the green hill at dawn.")
	b := []byte("the quick brown fox jumps over the lazy dog near the river bank; " +
		"while the farmer watches the sheep graze on the green hill at dusk!")
	c := []byte("Stock markets fell sharply on Monday as investors weighed new data.")

	sa, sb, sc := sk.Sketch(a), sk.Sketch(b), sk.Sketch(c)
	fmt.Println("a, b near-duplicates:", shingle.Jaccard(sa, sb) >= 0.8)
	fmt.Println("a, c near-duplicates:", shingle.Jaccard(sa, sc) >= 0.8)
	// Output:
	// a, b near-duplicates: true
	// a, c near-duplicates: false
}

func ExampleTokenizer() {
	var t shingle.Tokenizer
	t.Reset([]byte("Ünïcödé, STRASSE & déjà-vu: 42!"))
	for t.Next() {
		fmt.Printf("%q ", t.Token())
	}
	fmt.Println()
	// Output:
	// "ünïcödé" "strasse" "déjà" "vu" "42"
}

func ExampleNearIndex() {
	sk, _ := shingle.NewSketcher(nil)
	idx, _ := shingle.NewNearIndex(&shingle.NearOptions{MaxHamming: 16})
	pages := []string{
		"crawlers fetch pages, parse them, and add the links they find to the frontier unless the url was seen before",
		"crawlers fetch pages, parse them, and add the links they find to the frontier unless the url was seen already",
		"the frontier keeps one back queue per host so that no host is contacted by two threads at the same time",
	}
	for id, p := range pages {
		sig, sh := sk.AppendSketchSimhash(nil, []byte(p))
		near, _ := idx.Query(sig, sh)
		if len(near) > 0 {
			fmt.Printf("page %d is a near-duplicate of page %d\n", id, near[0].ID)
			continue
		}
		_ = idx.Insert(uint64(id), sig, sh)
	}
	fmt.Println(idx.Len(), "distinct pages")
	// Output:
	// page 1 is a near-duplicate of page 0
	// 2 distinct pages
}
