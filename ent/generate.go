// Package ent holds the generated ent client for the runtime's coordination
// store. Only ent/schema/*.go, ent/entc.go, ent/template/runtime.tmpl (the
// runtime registration, see ent/schema/rules.go) and this file are
// hand-written; everything else in this directory, runtime_rules_test.go
// included, is produced by `go generate ./ent`.
package ent

//go:generate go run -mod=mod entc.go
