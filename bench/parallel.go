package main

import (
	"sync"
)

// inParallel calls fn for from, from+step, ... up to to (excluded) on
// workers goroutines. The first error stops handing out more, and is
// returned once those under way are done.
func inParallel(workers, from, to, step int, fn func(i int) error) error {
	work := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	failed := make(chan struct{})
	for range workers {
		wg.Go(func() {
			for i := range work {
				if err := fn(i); err != nil {
					once.Do(func() {
						first = err
						close(failed)
					})
				}
			}
		})
	}
dispatch:
	for i := from; i < to; i += step {
		select {
		case work <- i:
		case <-failed:
			break dispatch
		}
	}
	close(work)
	wg.Wait()
	return first
}
