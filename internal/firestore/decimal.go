package firestore

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

// Decimal is a Decimal128 as IEEE 754-2008 decimal arithmetic (and so
// MongoDB's) works on it: a sign, a coefficient of at most 34 digits and
// an exponent, so that 1.50 (150 × 10⁻²) is not 1.5 (15 × 10⁻¹) though
// the two compare equal, and a sum or product keeps the operands'
// trailing zeros (1.50 + 1 is 2.50). NaN and the infinities are
// specials. The zero Decimal is 0.
type Decimal struct {
	neg  bool
	coef *big.Int // |coefficient|; nil reads as 0
	exp  int
	nan  bool
	inf  bool
}

// Decimal128's limits: 34 significant digits, adjusted exponents from
// -6143 to 6144, so coefficient exponents from decEtiny to decEtop.
const (
	decDigits = 34
	decEmax   = 6144
	decEtiny  = -6143 - (decDigits - 1)
	decEtop   = decEmax - (decDigits - 1)
)

var bigTen = big.NewInt(10)

func pow10(n int) *big.Int { return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil) }

// NaNDecimal and InfDecimal are the specials.
func NaNDecimal() Decimal { return Decimal{nan: true} }

// InfDecimal is +Infinity, or -Infinity when neg.
func InfDecimal(neg bool) Decimal { return Decimal{inf: true, neg: neg} }

// DecimalFromInt is an integer as a Decimal128 (exponent 0).
func DecimalFromInt(i int64) Decimal {
	return Decimal{neg: i < 0, coef: new(big.Int).Abs(big.NewInt(i))}.round()
}

// DecimalFromFloat is a double as a Decimal128: its shortest decimal
// form (0.1 is 1 × 10⁻¹), rounded to 34 digits.
func DecimalFromFloat(f float64) Decimal {
	switch {
	case math.IsNaN(f):
		return NaNDecimal()
	case math.IsInf(f, 0):
		return InfDecimal(f < 0)
	}
	d, _ := ParseDecimal(strconv.FormatFloat(f, 'e', -1, 64))
	return d
}

// ParseDecimal reads a Decimal128's string: an optional sign, digits
// with at most one point, an optional exponent, or NaN, Inf or Infinity
// in any case; ok is false for anything else. More than 34 digits round
// half to even; beyond the range is an infinity or zero.
func ParseDecimal(s string) (d Decimal, ok bool) {
	body := s
	if body != "" && (body[0] == '+' || body[0] == '-') {
		d.neg = body[0] == '-'
		body = body[1:]
	}
	switch strings.ToLower(body) {
	case "nan":
		return Decimal{nan: true}, true
	case "inf", "infinity":
		d.inf = true
		return d, true
	}
	mant, expPart, hasExp := strings.Cut(strings.ToLower(body), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	if !allDigits(digits) || strings.Contains(frac, ".") {
		return Decimal{}, false
	}
	exp := -len(frac)
	if hasExp {
		unsigned := strings.TrimPrefix(strings.TrimPrefix(expPart, "+"), "-")
		if len(expPart)-len(unsigned) > 1 || !allDigits(unsigned) {
			return Decimal{}, false
		}
		e, err := strconv.ParseInt(unsigned, 10, 64)
		if err != nil || e > 1<<40 { // far past the range either way
			e = 1 << 40
		}
		if strings.HasPrefix(expPart, "-") {
			e = -e
		}
		exp += int(e)
	}
	d.coef, _ = new(big.Int).SetString(digits, 10)
	d.exp = exp
	return d.round(), true
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func (d Decimal) c() *big.Int {
	if d.coef == nil {
		return new(big.Int)
	}
	return d.coef
}

// IsNaN and IsInf report the specials.
func (d Decimal) IsNaN() bool { return d.nan }

// IsInf reports an infinity.
func (d Decimal) IsInf() bool { return d.inf }

// IsZero reports a zero of any sign and exponent.
func (d Decimal) IsZero() bool { return !d.nan && !d.inf && d.c().Sign() == 0 }

// Neg reports a negative sign (-0 included).
func (d Decimal) Neg() bool { return d.neg }

// Exp is the coefficient's exponent.
func (d Decimal) Exp() int { return d.exp }

// round brings a finite result within 34 digits (half to even) and
// Decimal128's exponent range: past the top an infinity, below it
// fewer digits (down to zero).
func (d Decimal) round() Decimal {
	if d.nan || d.inf {
		return d
	}
	c := new(big.Int).Set(d.c())
	exp := d.exp
	if n := digitCount(c); n > decDigits {
		c = roundDigits(c, n-decDigits)
		exp += n - decDigits
		if digitCount(c) > decDigits { // 999… rounded up to 1000…
			c.Quo(c, bigTen)
			exp++
		}
	}
	if exp < decEtiny {
		if drop := decEtiny - exp; drop > decDigits+1 {
			c.SetInt64(0)
		} else {
			c = roundDigits(c, drop)
		}
		exp = decEtiny
	}
	if c.Sign() == 0 {
		exp = min(max(exp, decEtiny), decEtop)
		return Decimal{neg: d.neg, coef: c, exp: exp}
	}
	if exp+digitCount(c)-1 > decEmax {
		return InfDecimal(d.neg)
	}
	if exp > decEtop { // fold the exponent down into the coefficient
		c.Mul(c, pow10(exp-decEtop))
		exp = decEtop
	}
	return Decimal{neg: d.neg, coef: c, exp: exp}
}

// digitCount is the number of decimal digits of c ≥ 0 (0 has one).
func digitCount(c *big.Int) int {
	if c.Sign() == 0 {
		return 1
	}
	n := int(float64(c.BitLen()) * math.Log10(2))
	if n < 1 {
		n = 1
	}
	p := pow10(n)
	for p.Cmp(c) <= 0 {
		p.Mul(p, bigTen)
		n++
	}
	for n > 1 && pow10(n-1).Cmp(c) > 0 {
		n--
	}
	return n
}

// roundDigits drops the last n digits of c ≥ 0, rounding half to even.
func roundDigits(c *big.Int, n int) *big.Int {
	if n <= 0 {
		return new(big.Int).Set(c)
	}
	div := pow10(n)
	q, r := new(big.Int).QuoRem(c, div, new(big.Int))
	switch r.Lsh(r, 1).Cmp(div) {
	case 1:
		q.Add(q, big.NewInt(1))
	case 0:
		if q.Bit(0) == 1 {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// String writes d as Decimal128's canonical string (IEEE 754's
// to-scientific-string, as MongoDB prints it): plain digits when the
// exponent is at most 0 and the number is not tiny (1.50, 0.001234),
// else one digit, a point and an exponent (1.2E+3, 1.5E-7).
func (d Decimal) String() string {
	sign := ""
	if d.neg {
		sign = "-"
	}
	switch {
	case d.nan:
		return "NaN"
	case d.inf:
		return sign + "Infinity"
	}
	digits := d.c().String()
	adjusted := d.exp + len(digits) - 1
	if d.exp <= 0 && adjusted >= -6 {
		if d.exp == 0 {
			return sign + digits
		}
		point := len(digits) + d.exp
		if point > 0 {
			return sign + digits[:point] + "." + digits[point:]
		}
		return sign + "0." + strings.Repeat("0", -point) + digits
	}
	s := digits[:1]
	if len(digits) > 1 {
		s += "." + digits[1:]
	}
	if adjusted >= 0 {
		return sign + s + "E+" + strconv.Itoa(adjusted)
	}
	return sign + s + "E" + strconv.Itoa(adjusted)
}

// Rat is a finite d's exact value (nil for the specials).
func (d Decimal) Rat() *big.Rat {
	if d.nan || d.inf {
		return nil
	}
	r := new(big.Rat).SetInt(d.c())
	if d.neg {
		r.Neg(r)
	}
	if d.exp >= 0 {
		return r.Mul(r, new(big.Rat).SetInt(pow10(d.exp)))
	}
	return r.Quo(r, new(big.Rat).SetInt(pow10(-d.exp)))
}

// Cmp orders two non-NaN decimals by value: -1, 0 or 1 (1.50 equals 1.5
// and -0 equals 0).
func (d Decimal) Cmp(e Decimal) int {
	sd, se := d.sign(), e.sign()
	switch {
	case sd != se:
		if sd < se {
			return -1
		}
		return 1
	case d.inf && e.inf, sd == 0:
		return 0
	case d.inf:
		return sd
	case e.inf:
		return -se
	}
	// Same sign, both finite and non-zero: align the exponents.
	a, b := d.c(), e.c()
	if d.exp > e.exp {
		a = new(big.Int).Mul(a, pow10(d.exp-e.exp))
	} else if e.exp > d.exp {
		b = new(big.Int).Mul(b, pow10(e.exp-d.exp))
	}
	return a.Cmp(b) * sd
}

func (d Decimal) sign() int {
	switch {
	case d.nan || !d.inf && d.c().Sign() == 0:
		return 0
	case d.neg:
		return -1
	}
	return 1
}

// aligned returns the coefficients of d and e (signed) at their smaller
// exponent, and that exponent.
func aligned(d, e Decimal) (a, b *big.Int, exp int) {
	exp = min(d.exp, e.exp)
	a = new(big.Int).Mul(d.c(), pow10(d.exp-exp))
	b = new(big.Int).Mul(e.c(), pow10(e.exp-exp))
	if d.neg {
		a.Neg(a)
	}
	if e.neg {
		b.Neg(b)
	}
	return a, b, exp
}

func fromSigned(c *big.Int, exp int, zeroNeg bool) Decimal {
	d := Decimal{neg: c.Sign() < 0, coef: new(big.Int).Abs(c), exp: exp}
	if c.Sign() == 0 {
		d.neg = zeroNeg
	}
	return d.round()
}

// Add is d + e at the smaller exponent of the two (1.50 + 1 = 2.50).
func (d Decimal) Add(e Decimal) Decimal {
	switch {
	case d.nan || e.nan:
		return NaNDecimal()
	case d.inf && e.inf && d.neg != e.neg:
		return NaNDecimal()
	case d.inf:
		return d
	case e.inf:
		return e
	}
	a, b, exp := aligned(d, e)
	return fromSigned(a.Add(a, b), exp, d.neg && e.neg)
}

// Sub is d - e.
func (d Decimal) Sub(e Decimal) Decimal {
	if !e.nan {
		e.neg = !e.neg
	}
	return d.Add(e)
}

// Mul is d × e, whose exponent is the sum of theirs (1.5 × 1.50 = 2.250).
func (d Decimal) Mul(e Decimal) Decimal {
	neg := d.neg != e.neg
	switch {
	case d.nan || e.nan:
		return NaNDecimal()
	case d.inf || e.inf:
		if d.IsZero() || e.IsZero() {
			return NaNDecimal()
		}
		return InfDecimal(neg)
	}
	exp := d.exp + e.exp
	if exp > 4*decEmax { // far past the range; keep the coefficient small
		return InfDecimal(neg)
	}
	if exp < 4*decEtiny {
		exp = 4 * decEtiny
	}
	return Decimal{neg: neg, coef: new(big.Int).Mul(d.c(), e.c()), exp: exp}.round()
}

// Quo is d ÷ e: an exact quotient at the exponent closest to d's minus
// e's (3.00 ÷ 1.5 = 2.0), else 34 digits. x ÷ 0 is an infinity and 0 ÷ 0
// NaN, as IEEE 754 has them.
func (d Decimal) Quo(e Decimal) Decimal {
	neg := d.neg != e.neg
	switch {
	case d.nan || e.nan, d.inf && e.inf:
		return NaNDecimal()
	case d.inf:
		return InfDecimal(neg)
	case e.inf:
		return Decimal{neg: neg, coef: new(big.Int)}
	case e.IsZero():
		if d.IsZero() {
			return NaNDecimal()
		}
		return InfDecimal(neg)
	case d.IsZero():
		return Decimal{neg: neg, coef: new(big.Int), exp: d.exp - e.exp}.round()
	}
	ideal := d.exp - e.exp
	if ideal > 4*decEmax {
		return InfDecimal(neg)
	}
	if ideal < 4*decEtiny {
		return Decimal{neg: neg, coef: new(big.Int), exp: decEtiny}
	}
	shift := max(0, decDigits+1+digitCount(e.c())-digitCount(d.c()))
	q, r := new(big.Int).QuoRem(new(big.Int).Mul(d.c(), pow10(shift)), e.c(), new(big.Int))
	exp := ideal - shift
	if r.Sign() != 0 { // inexact: a sticky digit makes the rounding see it
		q.Mul(q, bigTen).Add(q, big.NewInt(1))
		exp--
	} else {
		for exp < ideal && new(big.Int).Rem(q, bigTen).Sign() == 0 && q.Sign() != 0 {
			q.Quo(q, bigTen)
			exp++
		}
	}
	return Decimal{neg: neg, coef: q, exp: exp}.round()
}

// Rem is the remainder of d ÷ e truncated toward zero, with d's sign,
// at the smaller exponent; ok is false for a zero divisor.
func (d Decimal) Rem(e Decimal) (r Decimal, ok bool) {
	switch {
	case e.IsZero() && !e.nan:
		return Decimal{}, false
	case d.nan || e.nan || d.inf:
		return NaNDecimal(), true
	case e.inf:
		return d, true
	}
	a, b, exp := aligned(d, e)
	if exp < 4*decEtiny || max(d.exp, e.exp)-exp > 2*decEmax+2*decDigits {
		return NaNDecimal(), true
	}
	return fromSigned(a.Rem(a, b), exp, d.neg), true
}

// Quantize rounds d to exponent exp in mode "round" (half away from
// zero), "trunc", "ceil" or "floor"; a d with no digits past exp is
// itself. NaN and the infinities are their own result.
func (d Decimal) Quantize(exp int, mode string) Decimal {
	if d.nan || d.inf || d.exp >= exp {
		return d
	}
	drop := exp - d.exp
	if drop > decDigits+1 {
		// Every digit goes: the result is 0 or one unit at exp.
		q := new(big.Int)
		if !d.IsZero() && (mode == "ceil" && !d.neg || mode == "floor" && d.neg) {
			q.SetInt64(1)
		}
		return Decimal{neg: d.neg, coef: q, exp: exp}.round()
	}
	div := pow10(drop)
	q, r := new(big.Int).QuoRem(d.c(), div, new(big.Int))
	up := false
	switch mode {
	case "round":
		up = new(big.Int).Lsh(r, 1).Cmp(div) >= 0
	case "ceil":
		up = r.Sign() != 0 && !d.neg
	case "floor":
		up = r.Sign() != 0 && d.neg
	}
	if up {
		q.Add(q, big.NewInt(1))
	}
	return Decimal{neg: d.neg, coef: q, exp: exp}.round()
}

// Rescale writes d at a smaller exponent exp with the same value (12E+1
// at 0 is 120); d itself when exp is not smaller or the coefficient
// would pass 34 digits.
func (d Decimal) Rescale(exp int) Decimal {
	if d.nan || d.inf || exp >= d.exp || digitCount(d.c())+d.exp-exp > decDigits {
		return d
	}
	return Decimal{neg: d.neg, coef: new(big.Int).Mul(d.c(), pow10(d.exp-exp)), exp: exp}
}

// Reduce is d with no trailing zeros in its coefficient (1.50 is 1.5,
// 1200 is 1.2E+3, any zero is 0): one form for equal values.
func (d Decimal) Reduce() Decimal {
	if d.nan || d.inf {
		return d
	}
	c, exp := new(big.Int).Set(d.c()), d.exp
	if c.Sign() == 0 {
		return Decimal{coef: c}
	}
	r := new(big.Int)
	for {
		q, m := new(big.Int).QuoRem(c, bigTen, r)
		if m.Sign() != 0 {
			break
		}
		c, exp = q, exp+1
	}
	return Decimal{neg: d.neg, coef: c, exp: exp}
}

// Int64 is d's value when it is an integer that fits an int64.
func (d Decimal) Int64() (int64, bool) {
	r := d.Reduce()
	if r.nan || r.inf || r.exp < 0 || r.exp > 19 {
		return 0, false
	}
	c := new(big.Int).Mul(r.c(), pow10(r.exp))
	if r.neg {
		c.Neg(c)
	}
	if !c.IsInt64() {
		return 0, false
	}
	return c.Int64(), true
}

// Float64 is d's nearest double.
func (d Decimal) Float64() float64 {
	switch {
	case d.nan:
		return math.NaN()
	case d.inf && d.neg:
		return math.Inf(-1)
	case d.inf:
		return math.Inf(1)
	}
	f, _ := strconv.ParseFloat(d.String(), 64) // a range error still gives ±Inf or 0
	return f
}

// DecimalValue is d as a Decimal128 value.
func DecimalValue(d Decimal) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: map[string]*pb.Value{
		"__decimal128__": {ValueType: &pb.Value_StringValue{StringValue: d.String()}}}}}}
}

// DecimalOf reads a number as a Decimal: a Decimal128's string, an Int32
// or integer exactly, a double by its shortest form; ok is false for any
// other value.
func DecimalOf(v *pb.Value) (d Decimal, ok bool) {
	switch t := v.GetValueType().(type) {
	case *pb.Value_IntegerValue:
		return DecimalFromInt(t.IntegerValue), true
	case *pb.Value_DoubleValue:
		return DecimalFromFloat(t.DoubleValue), true
	}
	r, isBSON := bsonRank(v)
	if !isBSON || r != rankNumber {
		return Decimal{}, false
	}
	x := bsonField(v)
	if i, isInt := x.GetValueType().(*pb.Value_IntegerValue); isInt {
		return DecimalFromInt(i.IntegerValue), true
	}
	if d, ok = ParseDecimal(x.GetStringValue()); !ok {
		return NaNDecimal(), true // as ParseDecimal128 reads it
	}
	return d, true
}
