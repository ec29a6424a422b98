/**
 * First-fit search over bins in creation order, in O(log n) per query instead of O(n).
 *
 * A segment tree keeps, per subtree, the largest free amount of each tracked dimension
 * (cpu, memory, pods, GPUs). A subtree whose maximum in any dimension is below the request
 * cannot hold the pod and is skipped whole, so with thousands of NodeClaims planned a pod
 * goes straight to the first candidate bin. The index only prunes: the caller still checks
 * the candidate in full (other resources, requirements, taints) and resumes after it if it
 * does not fit.
 */
import { RESOURCE_CPU, RESOURCE_GPU, RESOURCE_MEMORY, RESOURCE_PODS, type Resources } from '../resources.js';

const DIMENSIONS = [RESOURCE_CPU, RESOURCE_MEMORY, RESOURCE_PODS, RESOURCE_GPU] as const;
const D = DIMENSIONS.length;
/** Length of the vectors FirstFitIndex takes. */
export const INDEX_DIMENSIONS: number = D;

/** The tracked dimensions of a resource amount, in index order. */
export function indexVector(resources: Resources, out: Float64Array = new Float64Array(D)): Float64Array {
  for (let d = 0; d < D; d++) out[d] = resources[DIMENSIONS[d]!] ?? 0;
  return out;
}

export class FirstFitIndex {
  private capacity = 0;
  private count = 0;
  /** tree[node * D + d]: max free amount of dimension d in the node's range. */
  private tree = new Float64Array(0);

  get size(): number {
    return this.count;
  }

  /**
   * The index `push`ing each vector in turn would build, in O(n) rather than O(n log n): a
   * pass indexes every existing NodeClaim of a fleet before placing anything.
   */
  static of(vectors: readonly Float64Array[]): FirstFitIndex {
    const index = new FirstFitIndex();
    if (vectors.length === 0) return index;
    let capacity = 16;
    while (capacity < vectors.length) capacity *= 2;
    index.capacity = capacity;
    index.count = vectors.length;
    index.tree = new Float64Array(2 * capacity * D).fill(-1);
    const tree = index.tree;
    for (let i = 0; i < vectors.length; i++) {
      const v = vectors[i]!;
      const base = (capacity + i) * D;
      for (let d = 0; d < D; d++) tree[base + d] = v[d]!;
    }
    index.rebuildInner();
    return index;
  }

  /** Appends a bin; returns its position. */
  push(free: Float64Array): number {
    if (this.count === this.capacity) this.grow();
    const position = this.count++;
    this.set(position, free);
    return position;
  }

  /** Updates bin `position`'s free amounts. */
  set(position: number, free: Float64Array): void {
    let node = position + this.capacity;
    for (let d = 0; d < D; d++) this.tree[node * D + d] = free[d]!;
    node >>= 1;
    while (node >= 1) {
      const left = 2 * node * D;
      const right = (2 * node + 1) * D;
      for (let d = 0; d < D; d++) {
        const a = this.tree[left + d]!;
        const b = this.tree[right + d]!;
        this.tree[node * D + d] = a > b ? a : b;
      }
      node >>= 1;
    }
  }

  /** First position in [start, end) whose free amounts cover `request`, or -1. */
  findFirst(request: Float64Array, start: number, end: number = this.count): number {
    if (start >= end || this.capacity === 0) return -1;
    return this.descend(1, 0, this.capacity, request, start, end);
  }

  private descend(node: number, lo: number, hi: number, request: Float64Array, start: number, end: number): number {
    if (hi <= start || lo >= end) return -1;
    const base = node * D;
    for (let d = 0; d < D; d++) if (this.tree[base + d]! < request[d]!) return -1;
    if (hi - lo === 1) return lo;
    const mid = (lo + hi) >> 1;
    const left = this.descend(2 * node, lo, mid, request, start, end);
    return left !== -1 ? left : this.descend(2 * node + 1, mid, hi, request, start, end);
  }

  private grow(): void {
    const oldCapacity = this.capacity;
    const old = this.tree;
    this.capacity = Math.max(16, oldCapacity * 2);
    // Unused leaves hold -1 so they never match (requests are never negative).
    this.tree = new Float64Array(2 * this.capacity * D).fill(-1);
    for (let i = 0; i < this.count; i++) {
      for (let d = 0; d < D; d++) this.tree[(this.capacity + i) * D + d] = old[(oldCapacity + i) * D + d]!;
    }
    this.rebuildInner();
  }

  /** Every inner node from its children, bottom up. */
  private rebuildInner(): void {
    for (let node = this.capacity - 1; node >= 1; node--) {
      for (let d = 0; d < D; d++) {
        const a = this.tree[2 * node * D + d]!;
        const b = this.tree[(2 * node + 1) * D + d]!;
        this.tree[node * D + d] = a > b ? a : b;
      }
    }
  }
}
