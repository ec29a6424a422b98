
/**
 * Which actors a resync pass has to look at: those whose inputs may have changed since they
 * were last looked at. A NodeClaim actor reads its NodeClaim, its VM and NIC entries in the
 * ARM view, the Node with its providerID, and its own state; a NIC actor reads its view
 * entry, whether a VM uses it, its owning NodeClaim (object and actor) and its own state.
 * Any other actor's inputs are what they were, so the pass would find `sameInputs` and do
 * nothing: skipping it gives the same result for a fraction of the work (a quiet fleet pass
 * looked at 2,300 actors to change none). Memory only, and that is safe: a new process
 * starts with every actor to look at, and so does every full ARM list.
 */
export class DirtyActors {
  /** NodeClaim names to look at. */
  readonly claims = new Set<string>();
  /** NIC names to look at. */
  readonly nics = new Set<string>();
  /** Look at every actor (the first pass, a list that replaced the ARM view). */
  all = true;
  private readonly vmReaders = new KeyReaders();
  private readonly nicReaders = new KeyReaders();
  private readonly nodeReaders = new KeyReaders();

  /** `nicNames`: every name a NodeClaim's NIC may have (src/lifecycle/ownership.ts, nicNameCandidates). */
  constructor(private readonly nicNames: (nodeClaim: string) => readonly string[]) {}

  /** The NodeClaim (its object, its actor) changed: it and its NIC are looked at. */
  claimChanged(name: string): void {
    this.claims.add(name);
    for (const nic of this.nicNames(name)) this.nics.add(nic);
  }

  /** The NodeClaim left the cluster: it no longer reads anything. */
  claimGone(name: string): void {
    this.claimChanged(name);
    this.vmReaders.delete(name);
    this.nicReaders.delete(name);
    this.nodeReaders.delete(name);
  }

  /** What the NodeClaim's observation was last built from (the view entries it names, the Node's lowercased providerID). */
  claimReads(name: string, vm: string, nic: string, providerId: string | undefined): void {
    this.vmReaders.set(name, vm);
    this.nicReaders.set(name, nic);
    this.nodeReaders.set(name, providerId);
  }

  vmChanged(vm: string): void {
    this.vmReaders.forEachReader(vm, (claim) => this.claims.add(claim));
  }

  /** A NIC's view entry changed: its actor, and the NodeClaim that checks it exists. */
  nicChanged(nic: string): void {
    this.nics.add(nic);
    this.nicReaders.forEachReader(nic, (claim) => this.claims.add(claim));
  }

  nodeChanged(providerId: string): void {
    this.nodeReaders.forEachReader(providerId, (claim) => this.claims.add(claim));
  }
}

/** Per key, the readers that last read it (each reader reads one key of the kind at a time). */
class KeyReaders {
  private readonly readers = new Map<string, Set<string>>();
  private readonly keyOf = new Map<string, string>();

  set(reader: string, key: string | undefined): void {
    const old = this.keyOf.get(reader);
    if (old === key) return;
    this.delete(reader);
    if (key === undefined) return;
    this.keyOf.set(reader, key);
    let set = this.readers.get(key);
    if (!set) this.readers.set(key, (set = new Set()));
    set.add(reader);
  }

  delete(reader: string): void {
    const old = this.keyOf.get(reader);
    if (old === undefined) return;
    this.keyOf.delete(reader);
    const set = this.readers.get(old);
    set?.delete(reader);
    if (set?.size === 0) this.readers.delete(old);
  }

  forEachReader(key: string, fn: (reader: string) => void): void {
    const set = this.readers.get(key);
    if (set) for (const r of set) fn(r);
  }
}

/**
 * The keys of `map` a pass walks, in the map's order: all of them, or, when few are marked,
 * the marked ones in that order (`orderOf` numbers each key's place), each taken when the
 * walk reaches it, as a walk over every key checking the marks would: a mark made meanwhile
 * (an actor's event moved another) is taken if it is still ahead, and by the next pass
 * otherwise. The caller takes each mark off as it goes. A settled fleet's pass looked up
 * 2,000 names of each kind to find a handful marked.
 */
export function* markedInOrder(map: ReadonlyMap<string, unknown>, marked: Set<string>, all: boolean, orderOf: (key: string) => number | undefined): Generator<string> {
  if (all || marked.size > map.size >> 3) {
    yield* map.keys();
    return;
  }
  let cursor = -1;
  for (;;) {
    const ahead: Array<{ at: number; key: string }> = [];
    for (const key of marked) {
      const at = orderOf(key);
      if (at !== undefined && at > cursor) ahead.push({ at, key });
    }
    if (ahead.length === 0) return;
    ahead.sort((a, b) => a.at - b.at);
    let markedMeanwhile = false;
    for (const { at, key } of ahead) {
      cursor = at;
      const size = marked.size;
      yield key;
      // Any size but one less: a mark was made meanwhile (or this one stayed); look again.
      if (marked.size !== size - 1) {
        markedMeanwhile = true;
        break;
      }
    }
    if (!markedMeanwhile) return;
  }
}

/** Whether a marked key has an actor but no entry in the world (what the walk over the actors looks for). */
export function anyGone(marked: ReadonlySet<string>, world: ReadonlyMap<string, unknown>, actors: ReadonlyMap<string, unknown>): boolean {
  for (const key of marked) if (!world.has(key) && actors.has(key)) return true;
  return false;
}

/**
 * A number per key of a Map that grows with the key's place in the map's order (Map order is
 * insertion order): `markedInOrder`'s `orderOf`, kept alongside the map as it changes.
 */
export class InsertionOrder {
  private readonly at = new Map<string, number>();
  private next = 0;

  of(key: string): number | undefined {
    return this.at.get(key);
  }

  /** The map was built again: every key numbered in its order. */
  reset(keys: Iterable<string>): void {
    this.at.clear();
    for (const key of keys) this.at.set(key, this.next++);
  }

  /** A key new to the map (it goes last). */
  appended(key: string): void {
    this.at.set(key, this.next++);
  }

  removed(key: string): void {
    this.at.delete(key);
  }
}
