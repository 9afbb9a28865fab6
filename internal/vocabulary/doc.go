// Package vocabulary holds no code, only tests that keep the module to one
// word per concept: a second spelling of a concept (here: a second parser
// of workload specs) fails them. Each check names the one package where
// its concept lives.
package vocabulary
