package pebblecontent_test

import "github.com/crawlkit/crawlkit/shingle"

func shingleOpts(k int) shingle.Options { return shingle.Options{K: k} }

func lshOpts(bands, rows int) shingle.LSHOptions { return shingle.LSHOptions{Bands: bands, Rows: rows} }

func lshSeed(seed uint64) shingle.LSHOptions { return shingle.LSHOptions{Seed: seed} }
