package newton

// Test helpers shared with the external test package newton_test.

// RandomLowRank is randomLowRank (bound_test.go): WᵀW for a rank×n W of
// standard normals.
var RandomLowRank = randomLowRank
