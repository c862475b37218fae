package database

import (
	"crypto/rand"
	"sync"
	"time"
)

// pushChars are the characters of push ids, in ASCII order so that ids
// sort by time.
const pushChars = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"

var push struct {
	sync.Mutex
	last int64
	rand [12]byte
}

// PushID returns a new child key as POST and the SDKs' push() make them:
// eight characters of the time in milliseconds, then twelve random ones,
// incremented instead when two ids share a millisecond, so that ids sort
// in the order they were made.
func PushID(now time.Time) string {
	push.Lock()
	defer push.Unlock()
	ms := now.UnixMilli()
	if ms == push.last {
		i := 11
		for ; i >= 0 && push.rand[i] == 63; i-- {
			push.rand[i] = 0
		}
		if i >= 0 {
			push.rand[i]++
		}
	} else {
		var b [12]byte
		_, _ = rand.Read(b[:])
		for i := range b {
			push.rand[i] = b[i] % 64
		}
	}
	push.last = ms
	var id [20]byte
	for i := 7; i >= 0; i-- {
		id[i] = pushChars[ms%64]
		ms /= 64
	}
	for i, r := range push.rand {
		id[8+i] = pushChars[r]
	}
	return string(id[:])
}
