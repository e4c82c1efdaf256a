// Package wire reads the varint-framed records that crawlkit writes to
// its own files: the frontier's URL records, the crawl state's commit
// log and the crawl's progress record.
//
// A Decoder's first failure sticks: a read the input cannot satisfy sets
// Bad and every later read returns a zero value, so a record's decoder
// reads every field and checks once, at the end, with Done. Lengths and
// counts are checked against what is left of the input before anything
// is allocated, so a corrupt or hostile record costs no more memory than
// its own size.
package wire
