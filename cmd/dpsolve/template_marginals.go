package main

// The marginals template (mechanism/marginals) registers itself in plan's
// template registry when imported, so that `dpsolve plan --template
// marginals` and the portfolio find it by name.
import _ "github.com/dpsolve/dpsolve/mechanism/marginals"
