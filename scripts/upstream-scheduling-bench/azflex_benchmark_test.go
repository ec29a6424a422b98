//go:build test_performance

package scheduling_test

import (
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
)

// Laid into upstream's scheduling package at build time, beside its
// scheduling_benchmark_test.go, and run through upstream's own harness, benchmarkScheduler,
// which reports pods/sec and nodes as for upstream's BenchmarkSchedulingN:
//   - AzflexGenericN: upstream's makeGenericPods, a workload its BenchmarkSchedulingN (all
//     makeDiversePods) do not run;
//   - AzflexDiverse1000: what upstream's BenchmarkScheduling1000 runs, makeDiversePods(1000).
// Each also reports cpu-ms/op, the CPU time of one Solve: wall time on a shared machine says as
// much about the neighbours as about the scheduler.

func BenchmarkAzflexGeneric1000(b *testing.B)  { withSolveCPU(b, makeGenericPods(1000)) }
func BenchmarkAzflexGeneric10000(b *testing.B) { withSolveCPU(b, makeGenericPods(10000)) }
func BenchmarkAzflexDiverse1000(b *testing.B)  { withSolveCPU(b, makeDiversePods(1000)) }

// withSolveCPU runs benchmarkScheduler and reports process CPU time per Solve (all threads, GC
// included, as azflex's medianCpuMs): the call's CPU less that of building the same scheduler
// once more on its own, since the call builds one before its timed loop.
func withSolveCPU(b *testing.B, pods []*corev1.Pod) {
	start := cpuTime()
	benchmarkScheduler(b, pods)
	total := cpuTime() - start
	setupStart := cpuTime()
	if _, err := setupScheduler(ctx, pods, scheduling.NumConcurrentReconciles(5)); err != nil {
		b.Fatalf("creating scheduler, %s", err)
	}
	setup := cpuTime() - setupStart
	b.ReportMetric(float64(total-setup)/float64(b.N)/1e6, "cpu-ms/op")
}

func cpuTime() time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		panic(err)
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}
