// Package kernelstest has test doubles of kernels.Recipe, for tests of the
// packages that feed, run and check recipes.
package kernelstest

import (
	"sync"

	"tltune/kernels"
)

// Counting is a recipe that counts how often its inputs are generated and
// its float64 reference computed: the costly host work that a tuning run
// does once per problem, never per configuration. It is safe for
// concurrent use.
type Counting struct {
	kernels.Recipe

	mu                 sync.Mutex
	inputs, references int
}

// Inputs generates the inputs, counting the call.
func (c *Counting) Inputs(seed uint64, batch int) (*kernels.Inputs, error) {
	c.mu.Lock()
	c.inputs++
	c.mu.Unlock()
	return c.Recipe.Inputs(seed, batch)
}

// Reference computes the reference, counting the call.
func (c *Counting) Reference(in *kernels.Inputs) (*kernels.Expected, error) {
	c.mu.Lock()
	c.references++
	c.mu.Unlock()
	return c.Recipe.Reference(in)
}

// Counts returns how many times Inputs and Reference were called.
func (c *Counting) Counts() (inputs, references int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inputs, c.references
}
