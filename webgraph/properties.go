package webgraph

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Code names an instantaneous code for one component of a BV graph stream.
type Code int

// The codes a BV graph may use. CodeDefault selects the component's
// default (see Flags).
const (
	CodeDefault Code = iota
	CodeGamma
	CodeDelta
	CodeUnary
	CodeZeta
	CodeNibble
	CodeGolomb
)

var codeNames = [...]string{"DEFAULT", "GAMMA", "DELTA", "UNARY", "ZETA", "NIBBLE", "GOLOMB"}

// String returns the name Java uses in compressionflags (GAMMA, ZETA, ...).
func (c Code) String() string {
	if c >= 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "Code(" + strconv.Itoa(int(c)) + ")"
}

// Flags chooses the code of each stream component, as Java WebGraph's
// compressionflags property. A zero field means the default: outdegrees γ,
// references unary, block counts γ, blocks γ, residuals ζ_k, offsets γ.
// Intervals are always γ.
type Flags struct {
	Outdegrees Code
	References Code
	BlockCount Code
	Blocks     Code
	Residuals  Code
	Offsets    Code
}

func (f Flags) resolved() Flags {
	def := func(c *Code, d Code) {
		if *c == CodeDefault {
			*c = d
		}
	}
	def(&f.Outdegrees, CodeGamma)
	def(&f.References, CodeUnary)
	def(&f.BlockCount, CodeGamma)
	def(&f.Blocks, CodeGamma)
	def(&f.Residuals, CodeZeta)
	def(&f.Offsets, CodeGamma)
	return f
}

var flagComponents = []struct {
	name string
	get  func(*Flags) *Code
	def  Code
	ok   []Code // codes Java WebGraph supports for the component
}{
	{"OUTDEGREES", func(f *Flags) *Code { return &f.Outdegrees }, CodeGamma, []Code{CodeGamma, CodeDelta}},
	{"BLOCKS", func(f *Flags) *Code { return &f.Blocks }, CodeGamma, []Code{CodeGamma, CodeDelta, CodeUnary}},
	{"RESIDUALS", func(f *Flags) *Code { return &f.Residuals }, CodeZeta, []Code{CodeGamma, CodeDelta, CodeZeta, CodeNibble, CodeGolomb}},
	{"REFERENCES", func(f *Flags) *Code { return &f.References }, CodeUnary, []Code{CodeGamma, CodeDelta, CodeUnary}},
	{"BLOCK_COUNT", func(f *Flags) *Code { return &f.BlockCount }, CodeGamma, []Code{CodeGamma, CodeDelta, CodeUnary}},
	{"OFFSETS", func(f *Flags) *Code { return &f.Offsets }, CodeGamma, []Code{CodeGamma, CodeDelta}},
}

// String renders the flags in Java's compressionflags syntax; default
// components are omitted, so the defaults render as "".
func (f Flags) String() string {
	r := f.resolved()
	var parts []string
	for _, c := range flagComponents {
		if v := *c.get(&r); v != c.def {
			parts = append(parts, c.name+"_"+v.String())
		}
	}
	return strings.Join(parts, " | ")
}

func (f Flags) validate() error {
	r := f.resolved()
	for _, c := range flagComponents {
		v := *c.get(&r)
		ok := false
		for _, a := range c.ok {
			ok = ok || a == v
		}
		if !ok {
			return fmt.Errorf("%w: %s cannot use %v", ErrFormat, strings.ToLower(c.name), v)
		}
	}
	return nil
}

// ParseFlags parses Java's compressionflags syntax ("OUTDEGREES_DELTA |
// RESIDUALS_GAMMA"; empty means all defaults).
func ParseFlags(s string) (Flags, error) {
	var f Flags
	for _, item := range strings.Split(s, "|") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		found := false
		for _, c := range flagComponents {
			rest, ok := strings.CutPrefix(item, c.name+"_")
			if !ok {
				continue
			}
			// BLOCKS_ is a prefix of nothing else, but BLOCK_COUNT_ must not
			// be taken for BLOCKS: CutPrefix with the underscore handles it.
			code := CodeDefault
			for i, n := range codeNames[1:] {
				if n == rest {
					code = Code(i + 1)
				}
			}
			if code == CodeDefault {
				return Flags{}, fmt.Errorf("%w: unknown code in compression flag %q", ErrFormat, item)
			}
			*c.get(&f) = code
			found = true
			break
		}
		if !found {
			return Flags{}, fmt.Errorf("%w: unknown compression flag %q", ErrFormat, item)
		}
	}
	return f, f.validate()
}

// Unlimited is the MaxRefCount value written for unlimited reference chains
// (Java's Integer.MAX_VALUE).
const Unlimited = math.MaxInt32

// Properties is the content of a BVGraph .properties file: the parameters
// needed to decode the stream, the counts, and every other key verbatim.
type Properties struct {
	GraphClass        string // "it.unimi.dsi.webgraph.BVGraph"
	Version           int    // 0 for Java's big-endian format
	Nodes             int
	Arcs              int64
	WindowSize        int // 0: no references
	MaxRefCount       int // Unlimited: no bound
	MinIntervalLength int // 0: no intervals
	ZetaK             int
	Flags             Flags
	// Extra holds every other key (statistics such as bitsperlink).
	Extra map[string]string
}

// GraphClass is the Java class name written to .properties files.
const GraphClass = "it.unimi.dsi.webgraph.BVGraph"

// ParseProperties reads a BVGraph .properties file (Java properties
// syntax: key=value or key:value lines, # and ! comments, backslash escapes
// and line continuations).
func ParseProperties(rd io.Reader) (*Properties, error) {
	kv, err := readJavaProperties(rd)
	if err != nil {
		return nil, err
	}
	p := &Properties{Extra: map[string]string{}, ZetaK: 3}
	getInt := func(key string, dst *int, required bool) error {
		v, ok := kv[key]
		if !ok {
			if required {
				return fmt.Errorf("%w: missing property %q", ErrFormat, key)
			}
			return nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 || n > math.MaxInt32 {
			return fmt.Errorf("%w: property %s=%q", ErrFormat, key, v)
		}
		*dst = int(n)
		return nil
	}
	p.GraphClass = kv["graphclass"]
	if p.GraphClass != "" && strings.Replace(p.GraphClass, "it.unimi.dsi.big.webgraph", "it.unimi.dsi.webgraph", 1) != GraphClass {
		return nil, fmt.Errorf("%w: graph class %q is not a BVGraph", ErrFormat, p.GraphClass)
	}
	if err := getInt("version", &p.Version, false); err != nil {
		return nil, err
	}
	if p.Version > 1 {
		return nil, fmt.Errorf("%w: format version %d", ErrFormat, p.Version)
	}
	if e := kv["endianness"]; e != "" && e != "big" {
		return nil, fmt.Errorf("%w: endianness %q (only Java's big-endian streams are supported)", ErrFormat, e)
	}
	if err := getInt("nodes", &p.Nodes, true); err != nil {
		return nil, err
	}
	arcs, ok := kv["arcs"]
	if !ok {
		return nil, fmt.Errorf("%w: missing property \"arcs\"", ErrFormat)
	}
	if p.Arcs, err = strconv.ParseInt(strings.TrimSpace(arcs), 10, 64); err != nil || p.Arcs < 0 {
		return nil, fmt.Errorf("%w: property arcs=%q", ErrFormat, arcs)
	}
	p.WindowSize, p.MaxRefCount, p.MinIntervalLength = 7, 3, 4
	for _, k := range []struct {
		key string
		dst *int
	}{{"windowsize", &p.WindowSize}, {"maxrefcount", &p.MaxRefCount}, {"minintervallength", &p.MinIntervalLength}, {"zetak", &p.ZetaK}} {
		if err := getInt(k.key, k.dst, false); err != nil {
			return nil, err
		}
	}
	if p.WindowSize > 1<<16 {
		return nil, fmt.Errorf("%w: window size %d", ErrFormat, p.WindowSize)
	}
	if p.ZetaK < 1 || p.ZetaK > 63 {
		return nil, fmt.Errorf("%w: zetak %d", ErrFormat, p.ZetaK)
	}
	if p.Flags, err = ParseFlags(kv["compressionflags"]); err != nil {
		return nil, err
	}
	for k, v := range kv {
		switch k {
		case "graphclass", "version", "nodes", "arcs", "windowsize", "maxrefcount", "minintervallength", "zetak", "compressionflags":
		default:
			p.Extra[k] = v
		}
	}
	return p, nil
}

// WriteTo writes p in Java properties syntax, keys sorted.
func (p *Properties) WriteTo(w io.Writer) (int64, error) {
	kv := map[string]string{}
	for k, v := range p.Extra {
		kv[k] = v
	}
	gc := p.GraphClass
	if gc == "" {
		gc = GraphClass
	}
	kv["graphclass"] = gc
	kv["version"] = strconv.Itoa(p.Version)
	kv["nodes"] = strconv.Itoa(p.Nodes)
	kv["arcs"] = strconv.FormatInt(p.Arcs, 10)
	kv["windowsize"] = strconv.Itoa(p.WindowSize)
	kv["maxrefcount"] = strconv.Itoa(p.MaxRefCount)
	kv["minintervallength"] = strconv.Itoa(p.MinIntervalLength)
	kv["zetak"] = strconv.Itoa(p.ZetaK)
	kv["compressionflags"] = p.Flags.String()
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	sb.WriteString("#BVGraph properties\n")
	for _, k := range keys {
		sb.WriteString(escapeJava(k, true) + "=" + escapeJava(kv[k], false) + "\n")
	}
	n, err := io.WriteString(w, sb.String())
	return int64(n), err
}

func escapeJava(s string, key bool) string {
	var sb strings.Builder
	for i, r := range s {
		if r == utf8.RuneError {
			if _, w := utf8.DecodeRuneInString(s[i:]); w == 1 {
				sb.WriteByte(s[i]) // not UTF-8: keep the byte as it is
				continue
			}
		}
		switch {
		case r == '\\' || r == '=' || r == ':' || r == '#' || r == '!':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case r == ' ' && (key || i == 0):
			sb.WriteString("\\ ")
		case r == '\n':
			sb.WriteString("\\n")
		case r == '\r':
			sb.WriteString("\\r")
		case r == '\t':
			sb.WriteString("\\t")
		case r < 0x20 || r > 0x7e:
			if r > 0xffff {
				r1, r2 := utf16Surrogates(r)
				fmt.Fprintf(&sb, "\\u%04x\\u%04x", r1, r2)
			} else {
				fmt.Fprintf(&sb, "\\u%04x", r)
			}
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

func utf16Surrogates(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

// readJavaProperties parses the java.util.Properties text format.
func readJavaProperties(rd io.Reader) (map[string]string, error) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	kv := map[string]string{}
	var logical strings.Builder
	cont := false
	for sc.Scan() {
		line := sc.Text()
		if !cont {
			line = strings.TrimLeft(line, " \t\f")
			if line == "" || line[0] == '#' || line[0] == '!' {
				continue
			}
		} else {
			line = strings.TrimLeft(line, " \t\f")
		}
		// An odd number of trailing backslashes continues the line.
		bs := 0
		for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
			bs++
		}
		if bs%2 == 1 {
			logical.WriteString(line[:len(line)-1])
			cont = true
			continue
		}
		logical.WriteString(line)
		cont = false
		k, v, err := splitProperty(logical.String())
		logical.Reset()
		if err != nil {
			return nil, err
		}
		kv[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if cont {
		k, v, err := splitProperty(logical.String())
		if err != nil {
			return nil, err
		}
		kv[k] = v
	}
	return kv, nil
}

func splitProperty(s string) (string, string, error) {
	// The key ends at the first unescaped '=', ':' or whitespace.
	end := len(s)
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == '=' || s[i] == ':' || s[i] == ' ' || s[i] == '\t' || s[i] == '\f' {
			end = i
			break
		}
	}
	key := s[:end]
	rest := strings.TrimLeft(s[end:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	k, err := unescapeJava(key)
	if err != nil {
		return "", "", err
	}
	v, err := unescapeJava(rest)
	if err != nil {
		return "", "", err
	}
	return k, v, nil
}

func unescapeJava(s string) (string, error) {
	if !strings.Contains(s, "\\") {
		return s, nil
	}
	var sb strings.Builder
	var pend rune // pending high surrogate
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			sb.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			sb.WriteByte('\t')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 'f':
			sb.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf("%w: malformed \\u escape in %q", ErrFormat, s)
			}
			v, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf("%w: malformed \\u escape in %q", ErrFormat, s)
			}
			i += 4
			r := rune(v)
			switch {
			case r >= 0xd800 && r < 0xdc00:
				pend = r
				continue
			case r >= 0xdc00 && r < 0xe000 && pend != 0:
				r = 0x10000 + (pend-0xd800)<<10 + (r - 0xdc00)
			}
			pend = 0
			sb.WriteRune(r)
		default:
			sb.WriteByte(s[i])
		}
	}
	return sb.String(), nil
}
