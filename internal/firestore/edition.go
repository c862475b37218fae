package firestore

import "strings"

// Edition is a database's Firestore edition. Both serve every classic
// read and write; only Enterprise serves pipelines, and it requires no
// composite index (an unindexed query scans, as production's does).
type Edition int

// The editions.
const (
	EditionStandard Edition = iota
	EditionEnterprise
)

func (ed Edition) String() string {
	if ed == EditionEnterprise {
		return "Enterprise"
	}
	return "Standard"
}

// editions holds the edition of each database by id ("(default)"), and
// under "" that of every database not named.
type editions = map[string]Edition

// SetEditions declares the edition of each database by database id, ""
// naming the edition of those not listed (standard when absent). It may be
// called at any time; later reads see the new editions.
func (e *Engine) SetEditions(byID map[string]Edition) {
	m := make(editions, len(byID))
	for k, v := range byID {
		m[k] = v
	}
	e.editions.Store(&m)
}

// Edition is the edition of a database, named "projects/{p}/databases/{d}".
func (e *Engine) Edition(database string) Edition {
	m := e.editions.Load()
	if m == nil {
		return EditionStandard
	}
	id := database[strings.LastIndexByte(database, '/')+1:]
	if ed, ok := (*m)[id]; ok {
		return ed
	}
	return (*m)[""]
}
