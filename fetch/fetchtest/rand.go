package fetchtest

import "strings"

// Every generated fact is a pure function of (Config.Seed, a tag naming the
// fact, and up to two integers). The generator is splitmix64, written out
// here rather than taken from math/rand so that the web a seed describes never
// changes with the Go release.

const (
	tagCount uint64 = iota + 1
	tagSpec
	tagTitle
	tagParent
	tagLinks
	tagBody
	tagPeriod
	tagVersion
	tagCluster
	tagMember
	tagChain
	tagSession
	tagLatest
	tagPlacement
	tagCharset
	tagBase
	tagSubdomain
	tagAlias
	tagSitemapOnly
	tagCanon
	tagCanonOther
	tagApp
	tagShop
)

func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

type rng struct{ s uint64 }

func newRNG(seed int64, tag uint64, a, b int) rng {
	s := mix64(uint64(seed) + 0x9e3779b97f4a7c15)
	s = mix64(s ^ tag*0xd1b54a32d192ed03)
	s = mix64(s ^ uint64(a)*0x8cb92ba72f3d8dd7)
	s = mix64(s ^ uint64(b)*0x9e3779b97f4a7c15)
	return rng{s}
}

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return mix64(r.s)
}

// intn returns a number in [0, n); n must be positive and below 2^32.
func (r *rng) intn(n int) int {
	return int(((r.next() >> 32) * uint64(n)) >> 32)
}

// float returns a number in [0, 1).
func (r *rng) float() float64 {
	return float64(r.next()>>11) / (1 << 53)
}

func (r *rng) word() string { return words[r.intn(len(words))] }

// textWriter is what sentence writes to: *bytes.Buffer or *strings.Builder.
type textWriter interface {
	WriteString(s string) (int, error)
	WriteByte(c byte) error
}

// sentence appends a capitalised sentence of lo..hi words to b. The words
// are lower-case ASCII letters, so the text needs no HTML escaping.
func (r *rng) sentence(b textWriter, lo, hi int) {
	n := lo + r.intn(hi-lo+1)
	for i := range n {
		w := r.word()
		if i == 0 {
			_ = b.WriteByte(w[0] - 'a' + 'A')
			_, _ = b.WriteString(w[1:])
			continue
		}
		_ = b.WriteByte(' ')
		if r.intn(12) == 0 {
			_, _ = b.WriteString(words[r.intn(len(words))])
			_, _ = b.WriteString(", ")
		}
		_, _ = b.WriteString(w)
	}
	_ = b.WriteByte('.')
}

// title returns n capitalised words.
func (r *rng) title(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		w := r.word()
		b.WriteByte(w[0] - 'a' + 'A')
		b.WriteString(w[1:])
	}
	return b.String()
}

// words is the vocabulary of the generated prose: common English words, so
// that tokenisers, shingling and ranking see text with a natural-looking
// (if meaningless) distribution.
var words = strings.Fields(`
able about above across act add after again age ago agree air all allow
almost alone along already also always among amount animal answer any appear
apple area arm around arrive art ask autumn baby back bank base basket bear
beauty bed begin behind believe bell best better between big bird black block
blood blue board boat body bone book border born both bottom box boy branch
bread break bridge bright bring broad brother brown build burn busy buy call
camp capital captain car card care carry case cat catch cause cell center
century chair chance change charge chart check chief child choose church
circle city claim class clean clear climb clock close cloth cloud coast coat
cold collect colony color column come common company compare complete
condition connect consider contain continue control cook cool copy corn corner
correct cost cotton count country course cover cow crease create crop cross
crowd cry current cut dance dark day dead deal dear decide deep degree depend
describe desert design detail develop differ direct discuss distant divide
doctor dog dollar door double down draw dream dress drink drive drop dry duck
early earth east easy eat edge effect egg eight electric element end enemy
energy engine enough enter equal even evening event ever exact example except
exercise expect experience experiment eye face fact fair fall family famous
farm fast father favor fear feed feel field fight figure fill final find fine
finger finish fire first fish five flat floor flow flower fly follow food foot
force forest form forward found four free fresh friend front fruit full game
garden gather general gentle girl glad glass gold good govern grand grass
gray great green ground group grow guess guide gun hair half hand happen happy
hard harbor head hear heart heat heavy help high hill history hold home hope
horse hot hour house huge human hunt idea imagine inch industry insect
instrument interest iron island join joy jump keep key kind king kitchen know
lake land language large last late laugh law lead learn least leave length
letter level lie life lift light line liquid list listen little live locate
long look lost loud love machine magnet main major make map mark market mass
master match material matter meadow measure meat meet melody metal method
middle might mile milk million mind mine minute miss modern molecule moment
money month moon morning mother motion mount mountain mouth move music name
nation natural nature near need neighbor nest never night noise north note
notice noun number object observe ocean offer office often oil old open
operate opposite orange order organ original other oxygen page paint pair
paper parent part party pass path pattern pay people perhaps period person
picture piece place plain plan plane planet plant play please plural poem
point poor populate port position possible post pound power practice prepare
present press pretty print probable problem process produce product proper
protect proud provide pull push quart question quick quiet quite quotient race
radio rail rain raise range rather reach read ready real reason receive record
region remember repeat reply represent rest result rich ride right ring rise
river road rock roll room root rope rose round row rule safe sail salt same
sand save say scale school science score sea search season seat second section
seed select self sell send sense sentence separate serve settle seven shape
share sharp sheet shell shine ship shoe shop shore short shoulder shout show
side sight sign silent silver simple since sing single sister size skill skin
sky sleep slip slow small smell smile snow soft soil soldier solution solve
song sound south space speak special speech speed spell spend spoke spot
spread spring square stand star start state station stay steam steel step
stick still stone stood store story straight strange stream street stretch
string strong student study subject success sudden suffix sugar summer sun
supply support sure surface surprise swim syllable symbol system table tail
talk teach team teeth tell temperature term test thank thick thin thing third
thought thousand three through throw thus tie time tiny tire together tone
tool total touch toward town track trade train travel tree triangle trip
trouble truck true try tube turn twenty type under unit until valley value
vary verb very view village visit voice vowel wait walk wall warm wash watch
water wave wear weather weight west wheel while white whole wide wife wild
will win wind window winter wire wish woman wonder wood word work world write
year yellow young
`)
