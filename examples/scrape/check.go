package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// check compares the records with the simulated shop's catalogue and
// says how many of its products were found, how many of them only a
// script writes, and any record that differs from the catalogue.
func check(w io.Writer, web *fetchtest.Web, records []Product) error {
	byURL := map[string]Product{}
	for _, r := range records {
		byURL[r.URL] = r
	}
	found, scripted, scriptedFound := 0, 0, 0
	var wrong []string
	for _, want := range web.Products() {
		if want.Scripted {
			scripted++
		}
		got, ok := byURL[want.URL]
		if !ok {
			continue
		}
		found++
		if want.Scripted {
			scriptedFound++
		}
		price, err := strconv.ParseFloat(want.Price, 64)
		if got.Name != want.Name || err != nil || got.Price != price || got.Currency != want.Currency || !slices.Equal(got.Tags, want.Tags) {
			wrong = append(wrong, fmt.Sprintf("%s: got %+v, want %+v", want.URL, got, want))
		}
	}
	fmt.Fprintf(w, "scrape: %d of the shop's %d products found (%d of the %d only a script writes)\n",
		found, len(web.Products()), scriptedFound, scripted)
	if len(wrong) > 0 {
		return fmt.Errorf("%d records differ from the catalogue, first %s", len(wrong), wrong[0])
	}
	return nil
}
