package webgraph

import (
	"errors"
	"strings"
	"testing"
)

func TestParseProperties(t *testing.T) {
	tests := []struct {
		name, in string
		err      bool
		check    func(*Properties) bool
	}{
		{"java defaults", "#c\nnodes=3\narcs=2\ngraphclass=it.unimi.dsi.webgraph.BVGraph\nversion=0\n", false,
			func(p *Properties) bool {
				return p.WindowSize == 7 && p.MaxRefCount == 3 && p.MinIntervalLength == 4 && p.ZetaK == 3
			}},
		{"big class, colon, spaces", "nodes : 3\narcs 2\ngraphclass=it.unimi.dsi.big.webgraph.BVGraph\n", false,
			func(p *Properties) bool { return p.Nodes == 3 && p.Arcs == 2 }},
		{"flags", "nodes=1\narcs=0\ncompressionflags=OUTDEGREES_DELTA | RESIDUALS_NIBBLE|BLOCK_COUNT_UNARY\n", false,
			func(p *Properties) bool {
				return p.Flags.Outdegrees == CodeDelta && p.Flags.Residuals == CodeNibble && p.Flags.BlockCount == CodeUnary && p.Flags.Blocks == CodeDefault
			}},
		{"continuation and escapes", "nodes=1\\\n  0\narcs=0\nx\\:y=a\\u0041\n", false,
			func(p *Properties) bool { return p.Nodes == 10 && p.Extra["x:y"] == "aA" }},
		{"extra kept", "nodes=1\narcs=0\nbitsperlink=2.5\n", false, func(p *Properties) bool { return p.Extra["bitsperlink"] == "2.5" }},
		{"missing nodes", "arcs=0\n", true, nil},
		{"bad number", "nodes=x\narcs=0\n", true, nil},
		{"other class", "nodes=1\narcs=0\ngraphclass=it.unimi.dsi.webgraph.EFGraph\n", true, nil},
		{"unknown flag", "nodes=1\narcs=0\ncompressionflags=FOO_GAMMA\n", true, nil},
		{"unsupported code", "nodes=1\narcs=0\ncompressionflags=OUTDEGREES_ZETA\n", true, nil},
		{"little endian", "nodes=1\narcs=0\nendianness=little\n", true, nil},
		{"future version", "nodes=1\narcs=0\nversion=7\n", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParseProperties(strings.NewReader(tt.in))
			if tt.err {
				if !errors.Is(err, ErrFormat) {
					t.Fatalf("err = %v, want ErrFormat", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(p) {
				t.Fatalf("unexpected %+v", p)
			}
			var sb strings.Builder
			p.WriteTo(&sb)
			p2, err := ParseProperties(strings.NewReader(sb.String()))
			if err != nil || !tt.check(p2) || len(p2.Extra) != len(p.Extra) {
				t.Fatalf("write/parse cycle: %+v, %v\n%s", p2, err, sb.String())
			}
		})
	}
}

// FuzzParseProperties parses arbitrary properties files; whatever parses
// must survive a write/parse cycle unchanged.
func FuzzParseProperties(f *testing.F) {
	f.Add("nodes=3\narcs=2\nwindowsize=7\ncompressionflags=\n")
	f.Add("nodes=1\\\n0\narcs=0\nk\\ u=\\u00e9\\uD83D\\uDE00\n")
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ParseProperties(strings.NewReader(in))
		if err != nil {
			return
		}
		var sb strings.Builder
		p.WriteTo(&sb)
		p2, err := ParseProperties(strings.NewReader(sb.String()))
		if err != nil {
			t.Fatalf("reparse: %v\n%s", err, sb.String())
		}
		if p2.Nodes != p.Nodes || p2.Arcs != p.Arcs || p2.Flags != p.Flags || len(p2.Extra) != len(p.Extra) {
			t.Fatalf("changed: %+v → %+v", p, p2)
		}
		for k, v := range p.Extra {
			if p2.Extra[k] != v {
				t.Fatalf("extra %q: %q → %q", k, v, p2.Extra[k])
			}
		}
	})
}
