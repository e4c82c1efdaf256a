package lang_test

import (
	"fmt"

	"github.com/crawlkit/crawlkit/fetch/lang"
)

func ExampleDetect() {
	for _, text := range []string{
		"Der Rhein ist ein Strom in Mitteleuropa. Er entspringt in den Schweizer Alpen und mündet in die Nordsee.",
		"Le conseil municipal a voté mardi soir la création de pistes cyclables sur toute la rue du Port.",
		"12345",
	} {
		code, reliable := lang.Detect(text)
		fmt.Printf("%q %v\n", code, reliable)
	}
	// Output:
	// "de" true
	// "fr" true
	// "" false
}
