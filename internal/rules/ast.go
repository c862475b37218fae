// Package rules parses and evaluates Firebase Security Rules
// (rules_version = '2') for Firestore and Storage: parse and check once,
// then evaluate per request. It has no transport code: callers describe a
// request (Request) and supply document reads (Documents).
//
// Evaluation follows the production semantics described in
// docs/rules.md: an expression yields a value or an error; an error denies,
// except where && and || can decide without it; a request is allowed when
// at least one matching allow statement evaluates to true. A denial carries
// the emulator's message: one "<reason> for '<method>' @ L<line>" per
// evaluated statement.
package rules

// Pos is a 1-based line and column in the rules source.
type Pos struct{ Line, Col int }

// Ruleset is a parsed rules file.
type Ruleset struct {
	Version  string
	Services []*Service
	Funcs    []*Func
}

// Service is a `service cloud.firestore { … }` block.
type Service struct {
	Name    string
	Matches []*Match
	Funcs   []*Func
}

// Segment is one segment of a match path: a literal, a {var}, or a {var=**}.
type Segment struct {
	Literal   string
	Var       string
	Recursive bool
}

// Match is a match block.
type Match struct {
	Pos     Pos
	Path    []Segment
	Allows  []*Allow
	Matches []*Match
	Funcs   []*Func
}

// Allow is an allow statement; Cond nil means always.
type Allow struct {
	Pos     Pos
	Methods []string
	Cond    Expr
}

// Func is a function declaration.
type Func struct {
	Pos    Pos
	Name   string
	Params []string
	Lets   []Let
	Return Expr
}

// Let is a let binding inside a function.
type Let struct {
	Name string
	Expr Expr
}

// Expr is an expression node.
type Expr interface{ pos() Pos }

type (
	// Lit is a literal value.
	Lit struct {
		P Pos
		V Value
	}
	// Ident is a variable reference.
	Ident struct {
		P    Pos
		Name string
	}
	// Unary is !x or -x.
	Unary struct {
		P  Pos
		Op string
		X  Expr
	}
	// Binary is x op y.
	Binary struct {
		P    Pos
		Op   string
		X, Y Expr
	}
	// Cond is c ? a : b.
	Cond struct {
		P          Pos
		C, Then, E Expr
	}
	// Member is x.name.
	Member struct {
		P    Pos
		X    Expr
		Name string
	}
	// Index is x[i].
	Index struct {
		P    Pos
		X, I Expr
	}
	// Slice is x[lo:hi].
	Slice struct {
		P         Pos
		X, Lo, Hi Expr
	}
	// Call is f(args) (X an Ident) or recv.method(args) (X a Member).
	Call struct {
		P    Pos
		Fn   Expr
		Args []Expr
	}
	// ListLit is [a, b].
	ListLit struct {
		P     Pos
		Elems []Expr
	}
	// MapLit is {k: v}.
	MapLit struct {
		P      Pos
		Keys   []Expr
		Values []Expr
	}
	// PathLit is /a/$(x)/b: parts are literal strings or expressions.
	PathLit struct {
		P     Pos
		Parts []any // string or Expr
	}
	// Is is x is type.
	Is struct {
		P    Pos
		X    Expr
		Type string
	}
)

func (e *Lit) pos() Pos     { return e.P }
func (e *Ident) pos() Pos   { return e.P }
func (e *Unary) pos() Pos   { return e.P }
func (e *Binary) pos() Pos  { return e.P }
func (e *Cond) pos() Pos    { return e.P }
func (e *Member) pos() Pos  { return e.P }
func (e *Index) pos() Pos   { return e.P }
func (e *Slice) pos() Pos   { return e.P }
func (e *Call) pos() Pos    { return e.P }
func (e *ListLit) pos() Pos { return e.P }
func (e *MapLit) pos() Pos  { return e.P }
func (e *PathLit) pos() Pos { return e.P }
func (e *Is) pos() Pos      { return e.P }
