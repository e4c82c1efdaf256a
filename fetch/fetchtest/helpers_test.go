package fetchtest_test

import (
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

func decode(label string, b []byte) (string, error) {
	d := charmap.ISO8859_1.NewDecoder()
	if label == fetchtest.Windows1252 {
		d = charmap.Windows1252.NewDecoder()
	}
	out, err := d.Bytes(b)
	return string(out), err
}

func utf8Invalid(b []byte) bool { return !utf8.Valid(b) }
