package rules

// fileNode is a parsed rules file.
type fileNode struct {
	version string
	service Service
	root    *block
	spans   map[node]span
}

// block is a match block (the root block holds service-level declarations).
type block struct {
	pattern  []patSeg
	funcs    []*funcDecl
	allows   []*allowStmt
	children []*block
}

// patSeg is one segment of a match pattern: a literal, a {var} or a {var=**}.
type patSeg struct {
	lit  string
	name string
	rec  bool
	pos  int // where name starts, for a {var}
}

type allowStmt struct {
	line    int
	methods []Method
	cond    node // nil = always
}

type funcDecl struct {
	pos      int
	name     string
	params   []string
	paramPos []int
	lets     []letStmt
	body     node
	scope    *scope
}

type letStmt struct {
	pos  int
	name string
	x    node
}

// node is an expression; pos is the byte offset in the source.
type node interface{ at() int }

type (
	litNode struct {
		pos int
		v   any
	}
	identNode struct {
		pos  int
		name string
	}
	listNode struct {
		pos   int
		elems []node
	}
	mapNode struct {
		pos        int
		keys, vals []node
	}
	pathNode struct {
		pos  int
		segs [][]node
	}
	unNode struct {
		pos int
		op  string
		x   node
	}
	binNode struct {
		pos  int
		op   string
		l, r node
	}
	isNode struct {
		pos int
		x   node
		typ string
	}
	condNode struct {
		pos     int
		c, a, b node
	}
	memberNode struct {
		pos  int
		x    node
		name string
	}
	indexNode struct {
		pos  int
		x, i node
	}
	sliceNode struct {
		pos       int
		x, lo, hi node
	}
	callNode struct {
		pos  int
		recv node
		name string
		args []node
	}
)

func (n *litNode) at() int    { return n.pos }
func (n *identNode) at() int  { return n.pos }
func (n *listNode) at() int   { return n.pos }
func (n *mapNode) at() int    { return n.pos }
func (n *pathNode) at() int   { return n.pos }
func (n *unNode) at() int     { return n.pos }
func (n *binNode) at() int    { return n.pos }
func (n *isNode) at() int     { return n.pos }
func (n *condNode) at() int   { return n.pos }
func (n *memberNode) at() int { return n.pos }
func (n *indexNode) at() int  { return n.pos }
func (n *sliceNode) at() int  { return n.pos }
func (n *callNode) at() int   { return n.pos }
