package pipeline

import (
	"math"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Timestamp functions, at microsecond precision within Firestore's range
// (years 1 to 9999).
var (
	minTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
)

// weekStarts are the week(day) granularities: weeks starting on that day.
var weekStarts = map[string]time.Weekday{
	"week(sunday)": time.Sunday, "week(monday)": time.Monday, "week(tuesday)": time.Tuesday, "week(wednesday)": time.Wednesday,
	"week(thursday)": time.Thursday, "week(friday)": time.Friday, "week(saturday)": time.Saturday,
}

var units = map[string]time.Duration{
	"microsecond": time.Microsecond, "millisecond": time.Millisecond, "second": time.Second,
	"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour,
}

func init() {
	tsOf := func(v *pb.Value) time.Time { return v.GetTimestampValue().AsTime().Truncate(time.Microsecond) }
	shift := func(name string, sign int64) {
		typedFn(name, 3, 3, specs(tsT, strT, intT), func(_ *call, a []*pb.Value) val {
			unit, ok := units[a[1].GetStringValue()]
			if !ok {
				return failf("The function %s(...) does not know the unit %q.", name, a[1].GetStringValue())
			}
			n := a[2].GetIntegerValue() * sign
			if n != 0 && (math.Abs(float64(n)) > float64(math.MaxInt64)/float64(unit)) {
				return failf("The function %s(...) produced a timestamp out of range.", name)
			}
			return timestampVal(name, tsOf(a[0]).Add(time.Duration(n)*unit))
		})
	}
	shift("timestamp_add", 1)
	shift("timestamp_subtract", -1)
	typedFn("timestamp_diff", 3, 3, specs(tsT, tsT, strT), func(_ *call, a []*pb.Value) val {
		unit, ok := units[a[2].GetStringValue()]
		if !ok {
			return failf("The function timestamp_diff(...) does not know the unit %q.", a[2].GetStringValue())
		}
		d := tsOf(a[0]).Sub(tsOf(a[1]))
		return of(intV(int64(d / unit)))
	})
	typedFn("timestamp_extract", 2, 3, specs(tsT, strT, strT), func(_ *call, a []*pb.Value) val {
		t, bad := inZone(tsOf(a[0]), a, 2)
		if bad != nil {
			return *bad
		}
		var n int
		switch part := strings.ToLower(a[1].GetStringValue()); part {
		case "microsecond":
			n = t.Nanosecond() / 1000
		case "millisecond":
			n = t.Nanosecond() / 1e6
		case "second":
			n = t.Second()
		case "minute":
			n = t.Minute()
		case "hour":
			n = t.Hour()
		case "day":
			n = t.Day()
		case "dayofweek":
			n = int(t.Weekday()) + 1
		case "dayofyear":
			n = t.YearDay()
		case "week":
			n = (t.YearDay() + 6 - int(t.Weekday())) / 7
		case "isoweek":
			_, n = t.ISOWeek()
		case "month":
			n = int(t.Month())
		case "quarter":
			n = (int(t.Month())-1)/3 + 1
		case "year":
			n = t.Year()
		case "isoyear":
			n, _ = t.ISOWeek()
		default:
			return failf("The function timestamp_extract(...) does not know the part %q.", part)
		}
		return of(intV(int64(n)))
	})
	typedFn("timestamp_trunc", 2, 3, specs(tsT, strT, strT), func(_ *call, a []*pb.Value) val {
		t, bad := inZone(tsOf(a[0]), a, 2)
		if bad != nil {
			return *bad
		}
		y, mo, d := t.Date()
		loc := t.Location()
		var r time.Time
		switch g := strings.ToLower(a[1].GetStringValue()); g {
		case "microsecond", "millisecond", "second":
			r = t.Truncate(units[g]) // zone offsets are whole seconds
		case "minute":
			r = time.Date(y, mo, d, t.Hour(), t.Minute(), 0, 0, loc)
		case "hour":
			r = time.Date(y, mo, d, t.Hour(), 0, 0, 0, loc)
		case "day":
			r = time.Date(y, mo, d, 0, 0, 0, 0, loc)
		case "week":
			r = time.Date(y, mo, d-int(t.Weekday()), 0, 0, 0, 0, loc)
		case "isoweek":
			r = time.Date(y, mo, d-(int(t.Weekday())+6)%7, 0, 0, 0, 0, loc)
		case "month":
			r = time.Date(y, mo, 1, 0, 0, 0, 0, loc)
		case "quarter":
			r = time.Date(y, time.Month((int(mo)-1)/3*3+1), 1, 0, 0, 0, 0, loc)
		case "year", "isoyear":
			r = time.Date(y, 1, 1, 0, 0, 0, 0, loc)
		default:
			start, ok := weekStarts[g]
			if !ok {
				return failf("The function timestamp_trunc(...) does not know the granularity %q.", g)
			}
			r = time.Date(y, mo, d-(int(t.Weekday())-int(start)+7)%7, 0, 0, 0, 0, loc)
		}
		return timestampVal("timestamp_trunc", r)
	})
	fromUnix := func(name string, unit time.Duration) {
		typedFn(name, 1, 1, specs(intT), func(_ *call, a []*pb.Value) val {
			n := a[0].GetIntegerValue()
			per := int64(time.Second / unit)
			sec, frac := n/per, n%per
			if frac < 0 {
				sec, frac = sec-1, frac+per
			}
			return timestampVal(name, time.Unix(sec, frac*int64(unit)).UTC())
		})
	}
	fromUnix("unix_seconds_to_timestamp", time.Second)
	fromUnix("unix_millis_to_timestamp", time.Millisecond)
	fromUnix("unix_micros_to_timestamp", time.Microsecond)
	toUnix := func(name string, unit time.Duration) {
		typedFn(name, 1, 1, specs(tsT), func(_ *call, a []*pb.Value) val {
			t := tsOf(a[0])
			per := int64(time.Second / unit)
			n := t.Unix()*per + int64(t.Nanosecond())/int64(unit)
			return of(intV(n))
		})
	}
	toUnix("timestamp_to_unix_seconds", time.Second)
	toUnix("timestamp_to_unix_millis", time.Millisecond)
	toUnix("timestamp_to_unix_micros", time.Microsecond)
	register("current_timestamp", 0, 0, func(_ *call, s *scope) val {
		return of(&pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: timestamppb.New(s.run.now.Truncate(time.Microsecond))}})
	})
}

// timestampVal is t as a timestamp value at microsecond precision, or an
// error out of Firestore's range.
func timestampVal(fn string, t time.Time) val {
	if t.Before(minTime) || t.After(maxTime) {
		return failf("The function %s(...) produced a timestamp out of range.", fn)
	}
	return of(&pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: timestamppb.New(t.Truncate(time.Microsecond))}})
}

// inZone is t in the time zone named by argument i when there is one.
func inZone(t time.Time, a []*pb.Value, i int) (time.Time, *val) {
	if len(a) <= i {
		return t.UTC(), nil
	}
	loc, err := time.LoadLocation(a[i].GetStringValue())
	if err != nil {
		bad := failf("Unknown time zone %q.", a[i].GetStringValue())
		return t, &bad
	}
	return t.In(loc), nil
}
