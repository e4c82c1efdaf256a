package webgraph

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/crawlkit/crawlkit/webgraph/bitio"
)

// Options are the compression parameters of an Encoder. The zero value
// gives Java WebGraph's defaults.
type Options struct {
	// WindowSize is how many previous lists are tried as references.
	// 0 means the default, 7; a negative value disables references.
	WindowSize int
	// MaxRefCount bounds the length of reference chains, which bounds the
	// cost of random access. 0 means the default, 3; a negative value means
	// unlimited (written as Unlimited). Java's maxrefcount=0 (a reference
	// field that is always 0) cannot be requested; use WindowSize < 0.
	MaxRefCount int
	// MinIntervalLength is the shortest run of consecutive successors coded
	// as an interval. 0 means the default, 4; a negative value disables
	// intervals.
	MinIntervalLength int
	// ZetaK is the ζ code parameter for residuals. 0 means the default, 3.
	ZetaK int
	// Flags chooses the codes; the zero value is the default set.
	Flags Flags
}

// DefaultOptions are Java WebGraph's defaults: window 7, maximum reference
// count 3, minimum interval length 4, ζ_3 residuals.
var DefaultOptions = Options{WindowSize: 7, MaxRefCount: 3, MinIntervalLength: 4, ZetaK: 3}

// resolved returns the parameters as they are written to .properties.
func (o *Options) resolved() (window, maxRef, minInt, zk int, err error) {
	var z Options
	if o == nil {
		o = &z
	}
	window, maxRef, minInt, zk = o.WindowSize, o.MaxRefCount, o.MinIntervalLength, o.ZetaK
	switch {
	case window == 0:
		window = 7
	case window < 0:
		window = 0
	}
	switch {
	case maxRef == 0:
		maxRef = 3
	case maxRef < 0:
		maxRef = Unlimited
	}
	switch {
	case minInt == 0:
		minInt = 4
	case minInt < 0:
		minInt = 0
	}
	if zk == 0 {
		zk = 3
	}
	if window > 1<<16 || zk < 1 || zk > 63 {
		return 0, 0, 0, 0, fmt.Errorf("%w: windowsize %d, zetak %d", ErrInput, window, zk)
	}
	return window, maxRef, minInt, zk, o.Flags.validate()
}

// Encoder compresses a graph, one successor list per node in node order,
// into a BV graph stream and its offsets, bit for bit as Java WebGraph's
// BVGraph.store does with one thread: for each node, every list in the
// window whose reference chain is shorter than MaxRefCount is tried, and
// the one giving the fewest bits wins (ties go to the nearest, and no
// reference beats any reference of equal cost).
//
// Cost: for each node, O(window × (outdegree + candidate outdegree)). Memory:
// the last WindowSize+1 lists.
//
// An Encoder is not safe for concurrent use.
type Encoder struct {
	gw, ow                       *bitio.Writer
	window, maxRef, minInt       int
	zk                           uint
	flags                        Flags
	cb                           int
	list                         [][]int
	refCount                     []int
	x                            int
	arcs                         int64
	maxSucc                      int
	lastOff                      uint64
	extras, blocks, left, length []int
	residuals                    []int
	stats                        encStats
	err                          error
	closed                       bool
}

type encStats struct {
	outdegrees, references, blocks, intervals, residuals uint64
	copied, intervalised, residual                       int64
	totRef, totDist                                      int64
}

// NewEncoder returns an Encoder writing the .graph stream to graph and the
// .offsets stream to offsets (nil to skip offsets). The writers are not
// closed by the Encoder.
func NewEncoder(graph, offsets io.Writer, o *Options) (*Encoder, error) {
	window, maxRef, minInt, zk, err := o.resolved()
	if err != nil {
		return nil, &Error{Op: "encode", Err: err}
	}
	e := &Encoder{
		gw:      bitio.NewWriter(graph),
		window:  window,
		maxRef:  maxRef,
		minInt:  minInt,
		zk:      uint(zk),
		cb:      window + 1,
		maxSucc: -1,
	}
	if o != nil {
		e.flags = o.Flags
	}
	if offsets != nil {
		e.ow = bitio.NewWriter(offsets)
	}
	e.list = make([][]int, e.cb)
	e.refCount = make([]int, e.cb)
	return e, nil
}

func (e *Encoder) put(w *bitio.Writer, c Code, v uint64) uint64 {
	if w == nil {
		switch c {
		case CodeGamma:
			return bitio.GammaLen(v)
		case CodeUnary:
			return bitio.UnaryLen(v)
		case CodeZeta:
			return bitio.ZetaLen(v, e.zk)
		case CodeDelta:
			return bitio.DeltaLen(v)
		case CodeNibble:
			return bitio.NibbleLen(v)
		case CodeGolomb:
			return bitio.GolombLen(v, uint64(e.zk))
		}
		return 0
	}
	switch c {
	case CodeGamma:
		return w.WriteGamma(v)
	case CodeUnary:
		return w.WriteUnary(v)
	case CodeZeta:
		return w.WriteZeta(v, e.zk)
	case CodeDelta:
		return w.WriteDelta(v)
	case CodeNibble:
		return w.WriteNibble(v)
	case CodeGolomb:
		return w.WriteGolomb(v, uint64(e.zk))
	}
	return 0
}

// Add appends the next node (ids are assigned 0, 1, 2, ... in call order)
// with the given successors, which must be strictly increasing and
// non-negative. The slice is copied.
func (e *Encoder) Add(succ []int) error {
	if e.err != nil {
		return e.err
	}
	if e.closed {
		return &Error{Op: "encode", Err: fmt.Errorf("%w: Add after Close", ErrInput)}
	}
	x := e.x
	if x >= math.MaxInt32-1 {
		e.err = nodeErr("encode", x, fmt.Errorf("%w: too many nodes", ErrInput))
		return e.err
	}
	for i, y := range succ {
		if y < 0 || y >= math.MaxInt32 || (i > 0 && y <= succ[i-1]) {
			e.err = nodeErr("encode", x, fmt.Errorf("%w: successors must be strictly increasing ids in [0, 2^31−1)", ErrInput))
			return e.err
		}
	}
	if len(succ) > 0 && succ[len(succ)-1] > e.maxSucc {
		e.maxSucc = succ[len(succ)-1]
	}
	f := e.flags.resolved()
	e.writeOffset(e.gw.WrittenBits() - e.lastOff)
	e.lastOff = e.gw.WrittenBits()
	e.stats.outdegrees += e.put(e.gw, f.Outdegrees, uint64(len(succ)))

	cur := x % e.cb
	e.list[cur] = append(e.list[cur][:0], succ...)
	if len(succ) > 0 {
		if e.window > 0 {
			bestComp := uint64(math.MaxUint64)
			bestCand, bestRef := -1, -1
			e.refCount[cur] = -1
			for ref := 0; ref < e.cb; ref++ {
				cand := ((x-ref)%e.cb + e.cb) % e.cb
				if e.refCount[cand] < e.maxRef && len(e.list[cand]) != 0 && ref <= x {
					c := e.diffComp(nil, x, ref, e.list[cand], succ, &f)
					if c < bestComp {
						bestComp, bestCand, bestRef = c, cand, ref
					}
				}
			}
			e.refCount[cur] = e.refCount[bestCand] + 1
			e.diffComp(e.gw, x, bestRef, e.list[bestCand], succ, &f)
			e.stats.totRef += int64(e.refCount[cur])
			e.stats.totDist += int64(bestRef)
		} else {
			e.diffComp(e.gw, x, 0, nil, succ, &f)
		}
	}
	e.arcs += int64(len(succ))
	e.x++
	if err := e.gw.Err(); err != nil {
		e.err = &Error{Op: "encode", Err: err}
	}
	return e.err
}

func (e *Encoder) writeOffset(d uint64) {
	if e.ow != nil {
		e.put(e.ow, e.flags.resolved().Offsets, d)
	}
}

// diffComp is Java's BVGraph.diffComp: it codes curr against ref (0: no
// reference), writing to w, or only counting bits when w is nil. Returns
// the number of bits.
func (e *Encoder) diffComp(w *bitio.Writer, x, ref int, refList, curr []int, f *Flags) uint64 {
	if ref == 0 {
		refList = nil
	}
	extras := e.extras[:0]
	blocks := e.blocks[:0]
	j, k, blockLen := 0, 0, 0
	copying := true
	for j < len(curr) && k < len(refList) {
		if copying {
			switch {
			case curr[j] > refList[k]:
				blocks = append(blocks, blockLen)
				copying = false
				blockLen = 0
			case curr[j] < refList[k]:
				extras = append(extras, curr[j])
				j++
			default:
				j++
				k++
				blockLen++
			}
		} else {
			switch {
			case curr[j] < refList[k]:
				extras = append(extras, curr[j])
				j++
			case curr[j] > refList[k]:
				k++
				blockLen++
			default:
				blocks = append(blocks, blockLen)
				copying = true
				blockLen = 0
			}
		}
	}
	if copying && k < len(refList) {
		blocks = append(blocks, blockLen)
	}
	extras = append(extras, curr[j:]...)
	e.extras, e.blocks = extras, blocks

	var bits uint64
	real := w != nil
	if e.window > 0 {
		t := e.put(w, f.References, uint64(ref))
		bits += t
		if real {
			e.stats.references += t
		}
	}
	if ref != 0 {
		t := e.put(w, f.BlockCount, uint64(len(blocks)))
		for i, b := range blocks {
			if i > 0 {
				b--
			}
			t += e.put(w, f.Blocks, uint64(b))
		}
		bits += t
		if real {
			e.stats.blocks += t
			e.stats.copied += int64(len(curr) - len(extras))
		}
	}
	if len(extras) == 0 {
		return bits
	}
	residual := extras
	if e.minInt > 0 {
		residual = e.intervalize(extras)
		t := e.put(w, CodeGamma, uint64(len(e.left)))
		prev := 0
		for i, l := range e.left {
			if i == 0 {
				t += e.put(w, CodeGamma, int2nat(l-x))
			} else {
				t += e.put(w, CodeGamma, uint64(l-prev-1))
			}
			prev = l + e.length[i]
			t += e.put(w, CodeGamma, uint64(e.length[i]-e.minInt))
			if real {
				e.stats.intervalised += int64(e.length[i])
			}
		}
		bits += t
		if real {
			e.stats.intervals += t
		}
	}
	if len(residual) > 0 {
		t := e.put(w, f.Residuals, int2nat(residual[0]-x))
		for i := 1; i < len(residual); i++ {
			t += e.put(w, f.Residuals, uint64(residual[i]-residual[i-1]-1))
		}
		bits += t
		if real {
			e.stats.residuals += t
			e.stats.residual += int64(len(residual))
		}
	}
	return bits
}

// intervalize is Java's BVGraph.intervalize: maximal runs of consecutive
// integers of length ≥ minInt become intervals (e.left, e.length); the rest
// is returned as residuals.
func (e *Encoder) intervalize(v []int) []int {
	left, length, res := e.left[:0], e.length[:0], e.residuals[:0]
	for i := 0; i < len(v); i++ {
		j := 0
		if i < len(v)-1 && v[i]+1 == v[i+1] {
			j++
			for i+j < len(v)-1 && v[i+j]+1 == v[i+j+1] {
				j++
			}
			j++
			if j >= e.minInt {
				left = append(left, v[i])
				length = append(length, j)
				i += j - 1
			}
		}
		if j < e.minInt {
			res = append(res, v[i])
		}
	}
	e.left, e.length, e.residuals = left, length, res
	return res
}

// Close writes the final offset, flushes both streams (padding each to a
// byte, as Java does) and returns the properties of the graph written.
func (e *Encoder) Close() (*Properties, error) {
	if e.err != nil {
		return nil, e.err
	}
	if e.closed {
		return nil, &Error{Op: "encode", Err: fmt.Errorf("%w: Close called twice", ErrInput)}
	}
	e.closed = true
	if e.maxSucc >= e.x {
		e.err = &Error{Op: "encode", Err: fmt.Errorf("%w: successor %d but only %d nodes", ErrInput, e.maxSucc, e.x)}
		return nil, e.err
	}
	e.writeOffset(e.gw.WrittenBits() - e.lastOff)
	total := e.gw.WrittenBits()
	if err := e.gw.Close(); err != nil {
		e.err = &Error{Op: "encode", Err: err}
		return nil, e.err
	}
	if e.ow != nil {
		if err := e.ow.Close(); err != nil {
			e.err = &Error{Op: "encode", Err: err}
			return nil, e.err
		}
	}
	p := &Properties{
		GraphClass:        GraphClass,
		Nodes:             e.x,
		Arcs:              e.arcs,
		WindowSize:        e.window,
		MaxRefCount:       e.maxRef,
		MinIntervalLength: e.minInt,
		ZetaK:             int(e.zk),
		Flags:             e.flags,
		Extra:             map[string]string{},
	}
	s := &e.stats
	f3 := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	div := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return a / b
	}
	p.Extra["bitsperlink"] = f3(div(float64(total), float64(e.arcs)))
	p.Extra["bitspernode"] = f3(div(float64(total), float64(e.x)))
	p.Extra["avgref"] = f3(div(float64(s.totRef), float64(e.x)))
	p.Extra["avgdist"] = f3(div(float64(s.totDist), float64(e.x)))
	p.Extra["bitsforoutdegrees"] = strconv.FormatUint(s.outdegrees, 10)
	p.Extra["bitsforreferences"] = strconv.FormatUint(s.references, 10)
	p.Extra["bitsforblocks"] = strconv.FormatUint(s.blocks, 10)
	p.Extra["bitsforintervals"] = strconv.FormatUint(s.intervals, 10)
	p.Extra["bitsforresiduals"] = strconv.FormatUint(s.residuals, 10)
	p.Extra["copiedarcs"] = strconv.FormatInt(s.copied, 10)
	p.Extra["intervalisedarcs"] = strconv.FormatInt(s.intervalised, 10)
	p.Extra["residualarcs"] = strconv.FormatInt(s.residual, 10)
	p.Extra["graphbits"] = strconv.FormatUint(total, 10)
	return p, nil
}

// optionsFromProperties returns the Options that reproduce p's parameters.
func optionsFromProperties(p *Properties) Options {
	o := Options{WindowSize: p.WindowSize, MaxRefCount: p.MaxRefCount, MinIntervalLength: p.MinIntervalLength, ZetaK: p.ZetaK, Flags: p.Flags}
	if o.WindowSize == 0 {
		o.WindowSize = -1
	}
	if o.MinIntervalLength == 0 {
		o.MinIntervalLength = -1
	}
	if o.MaxRefCount >= Unlimited {
		o.MaxRefCount = -1
	}
	return o
}
