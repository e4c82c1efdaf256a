package fetch

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/crawlkit/crawlkit/internal/cputime"
)

func loadDOM(t testing.TB, name, page string) *DOM {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "extract", name))
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParseDOM(b, mustURL(t, page), false)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestElementQueries(t *testing.T) {
	product := loadDOM(t, "product.html", "https://shop.example.com/shop/p/trailhead-28")
	listing := loadDOM(t, "listing.html", "https://shop.example.com/shop/c/daypacks?page=2")
	article := loadDOM(t, "article.html", "https://courier.example/news/2026/rivers")
	for _, tc := range []struct {
		name string
		got  func() any
		want any
	}{
		{"title collapsed", func() any { return product.Root().ChildText("h1.product-title") }, "Trailhead 28L Daypack"},
		{"text skips script", func() any { return product.Root().ChildText(".description") },
			"A light pack for long days on the trail. Padded laptop sleeve, side pockets & a rain cover."},
		{"block cells separate words", func() any { return product.Root().ChildText("table.specs tr") }, "Weight 0.9 kg"},
		{"attr of first match", func() any { return product.Root().ChildAttr("img.main", "src") }, "img/th28-green.jpg"},
		{"attr skips matches without it", func() any { return product.Root().ChildAttr("p", "data-count") }, "17"},
		{"attr case-insensitive", func() any { return product.Root().Find(".product")[0].Attr("DATA-SKU") }, "NW-TH28-GRN"},
		{"attr missing", func() any { return product.Root().ChildAttr("h1", "href") }, ""},
		{"no match", func() any { return product.Root().ChildText("div.nothing") }, ""},
		{"texts", func() any { return product.Root().ChildTexts("ul.tags li") }, []string{"hiking", "water-resistant", "laptop sleeve"}},
		{"group selector in document order", func() any { return product.Root().ChildTexts("h2, h1") }, []string{"Trailhead 28L Daypack", "You may also like"}},
		{"attrs", func() any { return listing.Root().ChildAttrs("ol.results li.item:not(.sold-out) a", "href") },
			[]string{"/shop/p/ridge-18", "/shop/p/trailhead-28", "/shop/p/city-15?ref=list"}},
		{"has", func() any { return listing.Root().ChildTexts("li:has(a[href*=city]) .price") }, []string{"39.99"}},
		{"base from <base href>", func() any { return product.Base().String() }, "https://shop.example.com/shop/"},
		{"base defaults to URL", func() any { return listing.Base().String() }, listing.URL().String()},
		{"noscript is markup", func() any { return article.Root().ChildAttr("noscript a", "href") }, "/gallery/flood-2026"},
		{"name", func() any { return article.Root().Find("[itemprop=headline]")[0].Name() }, "h1"},
		{"root", func() any { return article.Root().Name() }, "html"},
		{"meta attr", func() any { return article.Root().ChildAttr(`meta[name="author"]`, "content") }, "Priya Raman"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.got(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
	for _, d := range []*DOM{product, listing, article} {
		if err := d.Err(); err != nil {
			t.Errorf("%s: %v", d.URL(), err)
		}
	}
}

func TestElementBadSelector(t *testing.T) {
	d := loadDOM(t, "article.html", "https://courier.example/a")
	if got := d.Root().ChildText("p[[["); got != "" {
		t.Errorf("ChildText of a bad selector = %q", got)
	}
	var se *SelectorError
	if err := d.Err(); !errors.As(err, &se) || se.Selector != "p[[[" {
		t.Fatalf("Err() = %v, want a *SelectorError for p[[[", err)
	}
	err := d.Root().ForEach("a:nonsense(", func(*Element) error { return nil })
	if !errors.As(err, &se) {
		t.Fatalf("ForEach = %v, want a *SelectorError", err)
	}
	if _, err := ParseDOM(nil, nil, false); !errors.Is(err, ErrNoURL) {
		t.Errorf("ParseDOM without URL = %v", err)
	}
}

func TestForEachAndFollow(t *testing.T) {
	d := loadDOM(t, "listing.html", "https://shop.example.com/shop/c/daypacks?page=2")
	stop := errors.New("stop")
	var names []string
	err := d.Root().ForEach("li.item", func(e *Element) error {
		names = append(names, e.ChildText(".name"))
		if len(names) == 2 {
			return stop
		}
		return nil
	})
	if err != stop || !slices.Equal(names, []string{"Ridge 18L Daypack", "Trailhead 28L Daypack"}) {
		t.Fatalf("ForEach = %v, %q; want stop after two", err, names)
	}
	if err := d.Root().ForEach("a[rel=next], li.item a", func(e *Element) error { return e.Follow(e.Attr("href")) }); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range d.Followed() {
		got = append(got, l.URL.String()+" "+l.Tag+" "+l.Text)
	}
	want := []string{
		"https://shop.example.com/shop/p/ridge-18 follow Ridge 18L Daypack",
		"https://shop.example.com/shop/p/trailhead-28 follow Trailhead 28L Daypack",
		"https://shop.example.com/shop/p/canyon-22 follow Canyon 22L Daypack",
		"https://shop.example.com/shop/p/city-15?ref=list follow City 15L Daypack",
		"https://shop.example.com/shop/c/daypacks?page=3 follow Next ›",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Followed:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, ref := range []string{"javascript:void(0)", "mailto:a@b", "http://[::1", ""} {
		err := d.Root().Follow(ref)
		var fe *Error
		if ref == "" {
			// The empty reference is the page itself: a valid link.
			if err != nil {
				t.Errorf("Follow(%q) = %v", ref, err)
			}
			continue
		}
		if !errors.As(err, &fe) || fe.Kind != KindBadURL {
			t.Errorf("Follow(%q) = %v, want a KindBadURL *Error", ref, err)
		}
	}
}

type seller struct {
	Name  string `selector:".seller-name"`
	Page  url.URL
	Since int    `selector:".since"`
	Link  string `selector:"a" attr:"href"`
}

type product struct {
	SKU      string   `selector:"." attr:"data-sku"`
	Name     string   `selector:"h1"`
	Price    float64  `selector:"meta[itemprop=price]" attr:"content"`
	Currency string   `selector:".currency"`
	Stock    uint16   `selector:".stock" attr:"data-count"`
	Rating   float32  `selector:".rating .value"`
	Reviews  int      `selector:".rating .count"`
	Image    *url.URL `selector:"img.main" attr:"src"`
	Tags     []string `selector:"ul.tags li"`
	Specs    []spec   `selector:"table.specs tr"`
	Seller   *seller  `selector:".seller"`
	Missing  *seller  `selector:".no-such-thing"`
	Untagged string
	private  string `selector:"h1"`
}

type spec struct {
	Key   string `selector:"th"`
	Value string `selector:"td"`
}

type listingPage struct {
	Items []struct {
		Name    string   `selector:".name"`
		Price   float64  `selector:".price"`
		URL     url.URL  `selector:"a" attr:"href"`
		SoldOut bool     `selector:"." attr:"data-sold-out"`
		Classes []string `selector:"." attr:"class"`
	} `selector:"li.item"`
	Next  *url.URL `selector:"a[rel=next]" attr:"href"`
	Pages []int    `selector:".pagination a:not([rel])"`
}

type articlePage struct {
	Headline  string    `selector:"article h1"`
	Author    string    `selector:"article [rel=author]"`
	Published string    `selector:"time" attr:"datetime"`
	Body      []string  `selector:"article > p"`
	Tags      []string  `selector:"a[rel=tag]"`
	Comments  int       `selector:"aside.comments" attr:"data-count"`
	TagLinks  []url.URL `selector:"a[rel=tag]" attr:"href"`
}

func TestUnmarshalPages(t *testing.T) {
	t.Run("product", func(t *testing.T) {
		d := loadDOM(t, "product.html", "https://shop.example.com/shop/p/trailhead-28")
		p := product{Untagged: "kept", private: "kept"}
		if err := Unmarshal(d.Root().Find(".product")[0], &p); err != nil {
			t.Fatal(err)
		}
		want := product{
			SKU: "NW-TH28-GRN", Name: "Trailhead 28L Daypack", Price: 89.5, Currency: "USD", Stock: 17,
			Rating: 4.6, Reviews: 212, Image: mustURL(t, "https://shop.example.com/shop/img/th28-green.jpg"),
			Tags:     []string{"hiking", "water-resistant", "laptop sleeve"},
			Specs:    []spec{{"Weight", "0.9 kg"}, {"Volume", "28 l"}, {"Fabric", "Recycled nylon"}},
			Seller:   &seller{Name: "Northwind Outfitters", Since: 2011, Link: "/sellers/northwind"},
			Untagged: "kept", private: "kept",
		}
		if !reflect.DeepEqual(p, want) {
			t.Errorf("got  %+v\nwant %+v", p, want)
		}
	})
	t.Run("listing", func(t *testing.T) {
		d := loadDOM(t, "listing.html", "https://shop.example.com/shop/c/daypacks?page=2")
		var l listingPage
		if err := Unmarshal(d.Root(), &l); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range l.Items {
			got = append(got, it.Name+" "+strconv.FormatFloat(it.Price, 'f', 2, 64)+" "+it.URL.String()+" "+strings.Join(it.Classes, "|"))
		}
		want := []string{
			"Ridge 18L Daypack 49.00 https://shop.example.com/shop/p/ridge-18 item",
			"Trailhead 28L Daypack 89.50 https://shop.example.com/shop/p/trailhead-28 item",
			"Canyon 22L Daypack 64.00 https://shop.example.com/shop/p/canyon-22 item sold-out",
			"City 15L Daypack 39.99 https://shop.example.com/shop/p/city-15?ref=list item",
		}
		if !slices.Equal(got, want) {
			t.Errorf("items:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if l.Next == nil || l.Next.String() != "https://shop.example.com/shop/c/daypacks?page=3" {
			t.Errorf("Next = %v", l.Next)
		}
		if !slices.Equal(l.Pages, []int{1, 3}) {
			t.Errorf("Pages = %v", l.Pages)
		}
	})
	t.Run("article", func(t *testing.T) {
		d := loadDOM(t, "article.html", "https://courier.example/news/2026/rivers")
		var a articlePage
		if err := Unmarshal(d.Root(), &a); err != nil {
			t.Fatal(err)
		}
		if a.Headline != "Rivers return to the valley after record rain" || a.Author != "Priya Raman" ||
			a.Published != "2026-03-14" || a.Comments != 3 || !slices.Equal(a.Tags, []string{"weather", "rivers"}) ||
			len(a.Body) != 2 || !strings.HasPrefix(a.Body[0], "The Afon Lledr ran at three times its usual height on Friday, the first") ||
			a.Body[1] != "Farmers in the lower valley moved livestock to higher ground, and the council closed two bridges." ||
			len(a.TagLinks) != 2 || a.TagLinks[1].String() != "https://courier.example/tags/rivers" {
			t.Errorf("got %+v", a)
		}
	})
}

func TestUnmarshalErrors(t *testing.T) {
	d := loadDOM(t, "product.html", "https://shop.example.com/shop/p/trailhead-28")
	root := d.Root()
	for _, tc := range []struct {
		name  string
		v     any
		is    error
		field string
	}{
		{"nil", nil, ErrUnmarshalTarget, ""},
		{"not a pointer", product{}, ErrUnmarshalTarget, ""},
		{"pointer to non-struct", new(string), ErrUnmarshalTarget, ""},
		{"nil pointer", (*product)(nil), ErrUnmarshalTarget, ""},
		{"bad selector", &struct {
			A string `selector:"h1[["`
		}{}, nil, "A"},
		{"empty attr", &struct {
			A string `selector:"h1" attr:""`
		}{}, ErrBadTag, "A"},
		{"attr on struct", &struct {
			A spec `selector:"tr" attr:"class"`
		}{}, ErrBadTag, "A"},
		{"map", &struct {
			A map[string]string `selector:"h1"`
		}{}, ErrFieldType, "A"},
		{"slice of slices", &struct {
			A [][]string `selector:"li"`
		}{}, ErrFieldType, "A"},
		{"bytes", &struct {
			A []byte `selector:"h1"`
		}{}, ErrFieldType, "A"},
		{"not a number", &struct {
			A int `selector:"h1"`
		}{}, strconv.ErrSyntax, "A"},
		{"out of range", &struct {
			A int8 `selector:".rating .count"`
		}{}, strconv.ErrRange, "A"},
		{"nested error names its path", &struct {
			S struct {
				Bad float64 `selector:".seller-name"`
			} `selector:".seller"`
		}{}, strconv.ErrSyntax, "S.Bad"},
		{"in a slice", &struct {
			S []struct {
				N int `selector:"td"`
			} `selector:"table.specs tr"`
		}{}, strconv.ErrSyntax, "S[].N"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Unmarshal(root, tc.v)
			var ue *UnmarshalError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v, want an *UnmarshalError", err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want one wrapping %v", err, tc.is)
			}
			var se *SelectorError
			if tc.is == nil && !errors.As(err, &se) {
				t.Errorf("err = %v, want a *SelectorError", err)
			}
			if ue.Field != tc.field {
				t.Errorf("Field = %q, want %q (%v)", ue.Field, tc.field, err)
			}
		})
	}
}

// recursive is a type that refers to itself: Unmarshal follows it as deep
// as the page nests matching elements, up to maxNesting.
type recursive struct {
	Text  string     `selector:"b"`
	Child *recursive `selector:"div"`
}

func TestUnmarshalDeepNesting(t *testing.T) {
	body := strings.Repeat("<div><b>x</b>", 100)
	d, err := ParseDOM([]byte(body), mustURL(t, "http://h.example/"), false)
	if err != nil {
		t.Fatal(err)
	}
	var r recursive
	err = Unmarshal(d.Root(), &r)
	if !errors.Is(err, ErrFieldType) {
		t.Fatalf("err = %v, want the nesting bound", err)
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, name := range []string{"product.html", "listing.html", "article.html"} {
		b, err := os.ReadFile(filepath.Join("testdata", "extract", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "li.item")
	}
	f.Add([]byte(`<div class=product data-sku=1><h1>x</h1><p class=price>NaN</p></div>`), ".product")
	f.Add([]byte("<table><tr><th>\x00</th><td>1e999</td></table><a href='http://[::1'>x</a>"), "tr, a")
	f.Add([]byte(`<base href="javascript:x"><a rel=next href=//h/y>n</a><template><li class=item>t</li></template>`), "a[rel=next]")
	page := mustURL(f, "http://page.example/a/b.html")
	f.Fuzz(func(t *testing.T, body []byte, sel string) {
		d, err := ParseDOM(body, page, false)
		if err != nil {
			t.Fatal(err)
		}
		if b := d.Base(); b.Scheme != "http" && b.Scheme != "https" {
			t.Fatalf("base %v", b)
		}
		root := d.Root()
		var p product
		if err := Unmarshal(root, &p); err != nil {
			var ue *UnmarshalError
			if !errors.As(err, &ue) || ue.Field == "" {
				t.Fatalf("untyped error %v", err)
			}
		}
		var l listingPage
		_ = Unmarshal(root, &l)
		err = root.ForEach(sel, func(e *Element) error {
			s := e.Text()
			if utf8.Valid(body) && !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8 text %q", s)
			}
			if strings.Contains(s, "  ") || strings.TrimSpace(s) != s {
				t.Fatalf("whitespace not collapsed: %q", s)
			}
			if err := e.Follow(e.Attr("href")); err == nil {
				return nil
			}
			return nil
		})
		var se *SelectorError
		if err != nil && !errors.As(err, &se) {
			t.Fatalf("ForEach: %v", err)
		}
		for _, l := range d.Followed() {
			if !l.URL.IsAbs() || l.URL.Scheme != "http" && l.URL.Scheme != "https" {
				t.Fatalf("followed %v", l.URL)
			}
		}
	})
}

// BenchmarkDOM measures what a page costs when a selector handler is
// registered: the element tree (ParseDOM) and one query, against the
// tokenizer parse every page gets (HTML.ParseBytes), over the testdata
// pages of BenchmarkHTML.
func BenchmarkDOM(b *testing.B) {
	pages, n := loadBenchPages(b)
	base := mustURL(b, "http://docs.example/doc/page.html")
	sel, err := CompileSelector("a[href]")
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		run  func(page []byte) int
	}{
		{"tokenizer", func(page []byte) int {
			var p HTML
			return len(p.ParseBytes(page, base).Links)
		}},
		{"tree", func(page []byte) int {
			d, err := ParseDOM(page, base, false)
			if err != nil {
				b.Fatal(err)
			}
			return len(d.Root().Select(sel))
		}},
		{"tokenizer+tree", func(page []byte) int {
			var p HTML
			n := len(p.ParseBytes(page, base).Links)
			d, err := ParseDOM(page, base, false)
			if err != nil {
				b.Fatal(err)
			}
			return n + len(d.Root().Select(sel))
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(n)
			cpu := cputime.Now()
			for b.Loop() {
				for _, page := range pages {
					bc.run(page)
				}
			}
			reportCPU(b, n, cpu)
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(pages)), "µs/page")
		})
	}
}

// BenchmarkUnmarshal measures structured extraction of a listing page.
func BenchmarkUnmarshal(b *testing.B) {
	d := loadDOM(b, "listing.html", "https://shop.example.com/shop/c/daypacks?page=2")
	b.ReportAllocs()
	for b.Loop() {
		var l listingPage
		if err := Unmarshal(d.Root(), &l); err != nil {
			b.Fatal(err)
		}
	}
}
