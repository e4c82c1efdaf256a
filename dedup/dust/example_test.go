package dust_test

import (
	"fmt"

	"github.com/crawlkit/crawlkit/dedup/dust"
)

// A crawl fetched alias.sim.test, then found www.alias.sim.test serving
// the same pages: the content-seen test reported each as an exact
// duplicate of the page first seen. After MinSupport such pairs the
// learner rewrites the www links before they are fetched, and a page
// that differs withdraws the rule and gives back the parked links.
func Example() {
	l, _ := dust.New(&dust.Options{Probation: -1, MinSupport: 3})
	for i := range 3 {
		page := fmt.Sprintf("http://alias.sim.test/p%d", i)
		l.Observe(page, uint64(i), "")
		l.Observe(fmt.Sprintf("http://www.alias.sim.test/p%d", i), uint64(i), page)
	}
	fmt.Println(l.Rules()[0])

	// Link admission: rewrite, park what is dropped.
	link := "http://www.alias.sim.test/news?id=8"
	if res, ok := l.Rewrite(link); ok && !res.Validate {
		fmt.Println(res.URL, l.Park(link, res.URL))
	}

	// A counterexample: the crawler re-queues what is released.
	l.Observe("http://alias.sim.test/about", 10, "")
	fmt.Println(l.Observe("http://www.alias.sim.test/about", 11, ""))
	fmt.Println(l.Rules()[0])
	// Output:
	// host www.alias.sim.test -> alias.sim.test (support 3)
	// http://alias.sim.test/news?id=8 true
	// [http://www.alias.sim.test/news?id=8]
	// host www.alias.sim.test -> alias.sim.test (support 3, counterexamples 1) [withdrawn]
}
