package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/fetch/render"
)

// TestScrape scrapes the simulated shop without and with rendering: the
// static crawl finds exactly the products in the pages' HTML, the
// rendering one every product, and every record matches the catalogue
// (run checks it, and fails otherwise).
func TestScrape(t *testing.T) {
	modes := []string{"off"}
	if render.FindBrowser() != "" && !testing.Short() {
		modes = append(modes, "adaptive")
	} else {
		t.Log("no Chromium or Chrome found (or -short): only the static scrape is tested")
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), []string{"-render", mode, "-min-delay", "1ms"}, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr.String())
			}
			n := 0
			sc := bufio.NewScanner(&stdout)
			for sc.Scan() {
				var p Product
				if err := json.Unmarshal(sc.Bytes(), &p); err != nil || p.Name == "" || p.Price <= 0 || p.URL == "" {
					t.Errorf("record %q: %+v, %v", sc.Text(), p, err)
				}
				n++
			}
			var found, all, scripted, scriptedAll int
			line := ""
			for _, l := range strings.Split(stderr.String(), "\n") {
				if strings.Contains(l, "products found") {
					line = l
				}
			}
			if _, err := fmt.Sscanf(line, "scrape: %d of the shop's %d products found (%d of the %d", &found, &all, &scripted, &scriptedAll); err != nil {
				t.Fatalf("check line %q: %v\n%s", line, err, stderr.String())
			}
			t.Logf("%d records; %d of %d products, %d of %d scripted", n, found, all, scripted, scriptedAll)
			if n != found {
				t.Errorf("%d records for %d products", n, found)
			}
			want, wantScripted := all-scriptedAll, 0
			if mode != "off" {
				want, wantScripted = all, scriptedAll
			}
			if found != want || scripted != wantScripted || all == 0 || scriptedAll == 0 {
				t.Errorf("render %s: %d of %d products (%d of %d scripted), want %d (%d scripted)", mode, found, all, scripted, scriptedAll, want, wantScripted)
			}
		})
	}
}

func TestScrapeFlags(t *testing.T) {
	for _, args := range [][]string{{"-render", "sometimes"}, {"-max-pages", "0"}, {"stray"}} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}
