package pipeline

import (
	"math"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

const earthRadiusMeters = 6371008.8

// Vector and geo functions. A vector argument may also be an array of
// numbers.
func init() {
	vecOrArr := spec{"Vector", func(v *pb.Value) bool { return vectorOf(v) != nil }}
	distance := func(name string, f func(a, b []float64) (float64, bool)) {
		typedFn(name, 2, 2, specs(vecOrArr), func(_ *call, a []*pb.Value) val {
			x, y := vectorOf(a[0]), vectorOf(a[1])
			if len(x) != len(y) {
				return failf("The function %s(...) requires vectors of the same dimension but got %d and %d.", name, len(x), len(y))
			}
			d, ok := f(x, y)
			if !ok {
				return failf("The function %s(...) is undefined for a zero vector.", name)
			}
			return of(doubleV(d))
		})
	}
	distance("dot_product", func(a, b []float64) (float64, bool) { return dotProduct(a, b), true })
	distance("euclidean_distance", func(a, b []float64) (float64, bool) {
		sum := 0.0
		for i := range a {
			d := a[i] - b[i]
			sum += d * d
		}
		return math.Sqrt(sum), true
	})
	distance("cosine_distance", func(a, b []float64) (float64, bool) {
		// One square root of the product of squared norms: production's
		// rounding (1 - cos of [0.1, 0.1] and [0.5, 0.8] is 0.02560880430538015).
		aa, bb := dotProduct(a, a), dotProduct(b, b)
		if aa == 0 || bb == 0 {
			return 0, false
		}
		return 1 - dotProduct(a, b)/math.Sqrt(aa*bb), true
	})
	typedFn("vector_length", 1, 1, specs(vecOrArr), func(_ *call, a []*pb.Value) val {
		return of(intV(int64(len(vectorOf(a[0])))))
	})
	typedFn("geo_distance", 2, 2, specs(geoT), func(_ *call, a []*pb.Value) val {
		p, q := a[0].GetGeoPointValue(), a[1].GetGeoPointValue()
		return of(doubleV(haversine(p.GetLatitude(), p.GetLongitude(), q.GetLatitude(), q.GetLongitude())))
	})
}

// vectorOf is the elements of a vector, or of an array of numbers; nil
// for anything else.
func vectorOf(v *pb.Value) []float64 {
	var elems []*pb.Value
	switch kindOf(v) {
	case kVector:
		elems = v.GetMapValue().GetFields()["value"].GetArrayValue().GetValues()
	case kArray:
		elems = v.GetArrayValue().GetValues()
	default:
		return nil
	}
	out := make([]float64, len(elems))
	for i, e := range elems {
		if !isNumber(e) {
			return nil
		}
		out[i] = toFloat(e)
	}
	return out
}

func dotProduct(a, b []float64) float64 {
	sum := 0.0
	for i := range a {
		sum += a[i] * b[i]
	}
	return sum
}

// haversine is the great-circle distance in meters.
func haversine(lat1, lon1, lat2, lon2 float64) float64 {
	rad := math.Pi / 180
	dLat, dLon := (lat2-lat1)*rad, (lon2-lon1)*rad
	h := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Sin(dLon/2)*math.Sin(dLon/2)
	return 2 * earthRadiusMeters * math.Asin(math.Min(1, math.Sqrt(h)))
}
