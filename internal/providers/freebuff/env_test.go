package freebuff

import "sync"

// envStore is a mutable environment for tests (a Desktop restart changes
// what discovery sees).
type envStore struct {
	mu sync.Mutex
	m  map[string]string
}

func newEnv(m map[string]string) *envStore {
	e := &envStore{m: map[string]string{}}
	for k, v := range m {
		e.m[k] = v
	}
	return e
}

func (e *envStore) lookup(k string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v, ok := e.m[k]
	return v, ok
}

func (e *envStore) set(k, v string) {
	e.mu.Lock()
	e.m[k] = v
	e.mu.Unlock()
}
