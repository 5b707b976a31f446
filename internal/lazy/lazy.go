// Package lazy holds package-level values that are built on first use and
// cost nothing before: a [Value] or a [Regexp] declared as a composite
// literal is laid out by the linker, so its package's init does no work
// for it.
//
// sync.OnceValue does the same at the first call, but calling it in a
// package variable's declaration runs at init and allocates its state and
// its closure in every process, whether the value is ever used or not;
// every spawn of `interop-runtime serve` pays the inits of every package
// it links.
package lazy

import (
	"regexp"
	"sync"
)

// Value is a value built by New on the first Get. Declare it as a
// package variable: var v = lazy.Value[T]{New: func() T { ... }}.
type Value[T any] struct {
	New func() T

	once     sync.Once
	v        T
	panicked bool
	p        any
}

// Get returns the value, building it on the first call. If New panicked,
// every call panics with the same value (as sync.OnceValue does).
func (l *Value[T]) Get() T {
	l.once.Do(l.build)
	if l.panicked {
		panic(l.p)
	}
	return l.v
}

func (l *Value[T]) build() {
	l.panicked = true
	defer func() {
		if l.panicked {
			l.p = recover()
		}
	}()
	l.v = l.New()
	l.panicked = false
}

// Regexp is a regular expression compiled on the first Get. Declare it as
// a package variable: var re = lazy.Regexp{Expr: `...`}.
type Regexp struct {
	Expr string

	v Value[*regexp.Regexp]
}

// Get returns the compiled expression; it panics, on every call, if Expr
// does not compile (as regexp.MustCompile does).
func (l *Regexp) Get() *regexp.Regexp {
	l.v.once.Do(l.compile)
	if l.v.panicked {
		panic(l.v.p)
	}
	return l.v.v
}

func (l *Regexp) compile() {
	l.v.panicked = true
	defer func() {
		if l.v.panicked {
			l.v.p = recover()
		}
	}()
	l.v.v = regexp.MustCompile(l.Expr)
	l.v.panicked = false
}
