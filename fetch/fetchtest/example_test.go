package fetchtest_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

func Example() {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 9})
	defer w.Close()

	// Fetch a page the way a crawler would, through the web's client.
	resp, err := w.Client().Get(w.URL("h001.sim.test", "/robots.txt"))
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, strings.Contains(string(body), "Disallow: /private/"))

	// Ground truth to compare a crawl against.
	fmt.Println("seeds:", strings.ReplaceAll(strings.Join(w.Seeds(), " "), w.Port(), "PORT"))
	fmt.Println("robots:", w.RobotsVariant("h001.sim.test"), w.RobotsVariant("h006.sim.test"))
	fmt.Println("allowed:", w.Allowed("crawlkit", w.URL("h001.sim.test", "/private/a.html")))

	// The request log shows what the client did.
	for _, r := range w.Log() {
		fmt.Println(r.Host, r.Path, r.Status)
	}
	fmt.Println(fetchtest.MaxConcurrency(w.Log()))
	// Output:
	// 200 true
	// seeds: http://h000.sim.test:PORT/
	// robots: prefix 5xx
	// allowed: false
	// h001.sim.test /robots.txt 200
	// map[h001.sim.test:1]
}
