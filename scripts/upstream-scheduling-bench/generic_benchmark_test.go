//go:build test_performance

package scheduling_test

import "testing"

// Laid over upstream's scheduling package at build time (go test -overlay), beside its
// scheduling_benchmark_test.go: upstream's BenchmarkSchedulingN all schedule makeDiversePods,
// so this adds the generic workload (makeGenericPods only) through upstream's own harness,
// benchmarkScheduler, which reports pods/sec and nodes as for its own benchmarks.

func BenchmarkAzflexGeneric1000(b *testing.B) { benchmarkScheduler(b, makeGenericPods(1000)) }

func BenchmarkAzflexGeneric10000(b *testing.B) { benchmarkScheduler(b, makeGenericPods(10000)) }
