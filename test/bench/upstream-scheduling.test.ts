import { describe, expect, it } from 'vitest';
import { parseGoBenchOutput, summarise } from '../../bench/upstream-scheduling.js';

// `go test -bench` output in Go's own layout (name-GOMAXPROCS, iterations, then value/unit
// pairs, extra metrics sorted by unit), with made-up figures.
const SAMPLE = [
  'goos: linux',
  'goarch: amd64',
  'pkg: sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling',
  'cpu: Some CPU @ 2.00GHz',
  'BenchmarkScheduling1000-2    \t       1\t7012345678 ns/op\t       200.0 nodes\t      1000 pods\t       142.6 pods/sec',
  'BenchmarkScheduling1000-2    \t       1\t6500000000 ns/op\t       201.0 nodes\t      1000 pods\t       153.8 pods/sec',
  'BenchmarkScheduling1000-2    \t       1\t8000000000 ns/op\t       200.0 nodes\t      1000 pods\t       125.0 pods/sec',
  'BenchmarkAzflexGeneric10000-2\t       1\t9090909091 ns/op\t      8123 cpu-ms/op\t        24.00 nodes\t     10000 pods\t      1100 pods/sec',
  'PASS',
].join('\n');

describe('parseGoBenchOutput', () => {
  it('reads the name, GOMAXPROCS, iterations and every metric of each benchmark line', () => {
    const lines = parseGoBenchOutput(SAMPLE);
    expect(lines).toHaveLength(4);
    expect(lines[0]).toEqual({
      name: 'BenchmarkScheduling1000', procs: 2, iterations: 1,
      metrics: { 'ns/op': 7012345678, nodes: 200, pods: 1000, 'pods/sec': 142.6 },
    });
    expect(lines[3]!.metrics).toEqual({ 'ns/op': 9090909091, 'cpu-ms/op': 8123, nodes: 24, pods: 10000, 'pods/sec': 1100 });
  });

  it('takes a name without -procs suffix as GOMAXPROCS 1 and skips lines that are not results', () => {
    const lines = parseGoBenchOutput('BenchmarkX \t 3\t 10 ns/op\t 5.000 pods/sec\n--- FAIL: BenchmarkY\nBenchmarkZ-2 \t 1\t garbage here');
    expect(lines).toEqual([{ name: 'BenchmarkX', procs: 1, iterations: 3, metrics: { 'ns/op': 10, 'pods/sec': 5 } }]);
  });
});

describe('summarise', () => {
  it('folds repeated samples to medians per benchmark', () => {
    const [diverse, generic] = summarise(parseGoBenchOutput(SAMPLE), ['BenchmarkScheduling1000', 'BenchmarkAzflexGeneric10000']);
    expect(diverse).toEqual({ benchmark: 'BenchmarkScheduling1000', samples: 3, podsPerSecond: 143, nodes: 200, pods: 1000, msPerSolve: 7012.3, cpuMsPerSolve: null });
    expect(generic).toMatchObject({ samples: 1, podsPerSecond: 1100, nodes: 24, cpuMsPerSolve: 8123 });
  });

  it('fails when a benchmark asked for printed no line (it failed or was renamed)', () => {
    expect(() => summarise(parseGoBenchOutput(SAMPLE), ['BenchmarkScheduling5000'])).toThrow(/no BenchmarkScheduling5000 line/);
  });
});
