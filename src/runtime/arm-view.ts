import { TAG, nameFromArmId } from '../azure/naming.js';
import type { AzurePort, Disk, Nic, ResourceGroupScope, Vm } from '../ports/azure.js';
import type { AzureFlexNodeClass } from '../ports/cluster.js';
import type { RuntimeDeps } from './deps.js';
import { InsertionOrder } from './dirty.js';

export function scopesOf(nodeClasses: Iterable<AzureFlexNodeClass>): ResourceGroupScope[] {
  const seen = new Map<string, ResourceGroupScope>();
  for (const nc of nodeClasses) {
    const key = `${nc.spec.subscriptionID}/${nc.spec.resourceGroup}`.toLowerCase();
    if (!seen.has(key)) seen.set(key, { subscriptionId: nc.spec.subscriptionID, resourceGroup: nc.spec.resourceGroup });
  }
  return [...seen.values()].sort((a, b) => (a.subscriptionId + a.resourceGroup).localeCompare(b.subscriptionId + b.resourceGroup));
}

/**
 * A resource a GET or PUT answered for this shortly before a list began stays in the view
 * even when the list does not show it yet (lists trail ARM by seconds; generated worlds
 * test up to a minute). Older entries a list leaves out are dropped: the machines confirm
 * any absence by GET before they act on it.
 */
const LIST_LAG_GRACE_MS = 2 * 60_000;

/** Deep equality of JSON-like values (ARM answers: records, arrays, strings, numbers). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let n = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    n++;
    if (!sameJson(x[k], y[k])) return false;
  }
  for (const k in y) if (y[k] !== undefined) n--;
  return n === 0;
}

/**
 * NIC and VM names whose view entry changed (a NIC also when a VM started or stopped
 * referencing it); `all` after a list replaced the view.
 */
export interface ArmChanges {
  all: boolean;
  nics: Set<string>;
  vms: Set<string>;
}

/**
 * What the runtime knows of ARM: the last full (paged) list, with every answer since written
 * through — each GET (current, unlike a list), each PUT's result, each accepted DELETE. Lists
 * are expensive (a page per 100 resources, every tool in the subscription shares ARM's read
 * refill), so they are taken only now and then; between them the view stays true for what
 * azflex itself does, and the resources with something pending (a VM being created) are
 * looked at by GET. Memory only, and that is safe: a restarted controller starts with a full
 * list, and no machine treats "not in the view" as proof (they GET before they act on absence).
 */
export class ArmView {
  readonly nics = new Map<string, Nic>();
  readonly vms = new Map<string, Vm>();
  disks: Map<string, Disk> | undefined;
  /** When the last full list began (undefined: never, so the next pass must list). */
  listedAt: number | undefined;
  /** When each `nic/…`, `vm/…` or `disk/…` entry was last learned from an answer (present or absent). */
  private readonly learnedAt = new Map<string, number>();
  /** NIC and VM entries added, replaced or removed since the runtime last took them (see takeChanges). */
  private changes: ArmChanges = { all: true, nics: new Set(), vms: new Set() };
  /** Per lowercased NIC id, how many VMs in the view reference it. */
  private readonly vmRefs = new Map<string, number>();
  /** Per lowercased NIC id, the NIC's name in the view. */
  private readonly nicByLowerId = new Map<string, string>();
  /** Per VM name, the NICs in the view that name it as their VM. */
  private readonly nicsNamingVm = new Map<string, Set<string>>();

  /** The order of `nics`. */
  private readonly nicsOrder = new InsertionOrder();
  /** The NICs the view shows ARM deleting. */
  readonly nicsDeleting = new Set<string>();

  constructor(private readonly clusterName: string) {}

  /** Where a NIC stands in the order of `nics` (larger: later), or undefined when it is not in the view. */
  nicOrder(name: string): number | undefined {
    return this.nicsOrder.of(name);
  }

  /** The view's answers as WorldView hands them out, built once (every pass builds a WorldView). */
  readonly isAttachedFn = (nic: Nic): boolean => this.isAttached(nic);
  readonly nicAnsweredGoneFn = (name: string): boolean => this.answeredGone('nic', name);

  /** When each kind was last listed on its own (between full lists, when many of one kind were due). */
  private readonly kindListedAt = new Map<string, number>();

  /** When the entry was last learned (by an answer, or the list it came from). */
  learned(kind: 'nic' | 'vm', name: string): number | undefined {
    const listed = Math.max(this.listedAt ?? 0, this.kindListedAt.get(kind) ?? 0);
    return Math.max(this.learnedAt.get(`${kind}/${name}`) ?? 0, listed) || undefined;
  }

  /**
   * Replaces the view with a list that began at `startedAt`, keeping what answers taught us
   * after that (the list may predate them, and lists trail ARM anyway).
   */
  install(list: { nics?: Nic[]; vms?: Vm[]; disks?: Disk[] }, startedAt: number): void {
    if (list.nics) this.replace('nic', this.nics, list.nics, startedAt);
    if (list.vms) this.replace('vm', this.vms, list.vms, startedAt);
    if (list.nics) this.kindListedAt.set('nic', startedAt);
    if (list.vms) this.kindListedAt.set('vm', startedAt);
    if (list.disks) this.replace('disk', (this.disks ??= new Map()), list.disks, startedAt);
    if (list.nics && list.vms) {
      this.listedAt = startedAt;
      for (const [key, at] of this.learnedAt) if (at < startedAt - LIST_LAG_GRACE_MS) this.learnedAt.delete(key);
    }
  }

  /** What changed since the last call: the runtime re-observes the actors those entries feed. */
  takeChanges(): ArmChanges {
    const taken = this.changes;
    // Most passes take nothing (twice a pass): the empty record is handed back, not replaced.
    if (!taken.all && taken.nics.size === 0 && taken.vms.size === 0) return taken;
    this.changes = { all: false, nics: new Set(), vms: new Set() };
    return taken;
  }

  /**
   * Whether the last word on the resource was ARM's own answer that it is gone (a GET's 404,
   * a DELETE whose operation finished), with nothing since showing it (no PUT's answer, no
   * list that had it). A list's absence is not enough: lists trail ARM.
   */
  answeredGone(kind: 'nic' | 'vm', name: string): boolean {
    return this.learnedAt.has(`${kind}/${name}`) && !(kind === 'nic' ? this.nics : this.vms).has(name);
  }

  /** Whether a VM in the view uses the NIC: one references it, or the NIC names one as its VM. */
  isAttached(nic: Nic): boolean {
    if ((this.vmRefs.get(lowerIdOf(nic)) ?? 0) > 0) return true;
    return !!nic.virtualMachineId && this.vms.has(nameFromArmId(nic.virtualMachineId));
  }

  private replace<R extends { name: string; tags: Record<string, string> }>(kind: string, map: Map<string, R>, listed: R[], startedAt: number): void {
    // Every actor it feeds is looked at again after a list (cheap: unchanged entries keep
    // their objects, so most find `sameInputs`), as a level-triggered safety net.
    if (kind !== 'disk') this.changes.all = true;
    const fresh = new Map<string, R>();
    for (const r of listed) if (r.tags[TAG.cluster] === this.clusterName) fresh.set(r.name, r);
    for (const [key, at] of this.learnedAt) {
      if (at < startedAt - LIST_LAG_GRACE_MS || !key.startsWith(`${kind}/`)) continue;
      const name = key.slice(kind.length + 1);
      const known = map.get(name);
      if (at >= startedAt) {
        // Learned after the list began: newer than anything it shows.
        if (known) fresh.set(name, known);
        else fresh.delete(name);
      } else if (known && !fresh.has(name)) {
        // Lists trail ARM: a resource answered for shortly before may not be listed yet.
        fresh.set(name, known);
      }
    }
    // An entry the list shows as it was stays the same object: only real changes reach the actors.
    for (const [name, r] of fresh) {
      const known = map.get(name);
      if (known !== undefined && known !== r && sameJson(known, r)) fresh.set(name, known);
    }
    const changed: Array<[string, R | undefined, R | undefined]> = [];
    for (const [name, r] of fresh) if (map.get(name) !== r) changed.push([name, map.get(name), r]);
    for (const [name, r] of map) if (!fresh.has(name)) changed.push([name, r, undefined]);
    map.clear();
    for (const [name, r] of fresh) map.set(name, r);
    if (kind === 'nic') {
      this.nicsOrder.reset(map.keys());
    }
    for (const [name, before, after] of changed) this.changed(kind, name, before, after);
  }

  private changed(kind: string, name: string, before: unknown, after: unknown): void {
    if (kind === 'nic') this.nicChanged(name, before as Nic | undefined, after as Nic | undefined);
    else if (kind === 'vm') this.vmChanged(name, before as Vm | undefined, after as Vm | undefined);
  }

  private indexVm(vm: Vm, delta: 1 | -1): void {
    for (const id of lowerNicIdsOf(vm)) {
      const refs = (this.vmRefs.get(id) ?? 0) + delta;
      if (refs > 0) this.vmRefs.set(id, refs);
      else this.vmRefs.delete(id);
    }
  }

  private indexNic(name: string, nic: Nic, add: boolean): void {
    const id = lowerIdOf(nic);
    const vm = nic.virtualMachineId ? nameFromArmId(nic.virtualMachineId) : undefined;
    if (add) {
      this.nicByLowerId.set(id, name);
      if (vm !== undefined) {
        let naming = this.nicsNamingVm.get(vm);
        if (!naming) this.nicsNamingVm.set(vm, (naming = new Set()));
        naming.add(name);
      }
      return;
    }
    if (this.nicByLowerId.get(id) === name) this.nicByLowerId.delete(id);
    const naming = vm === undefined ? undefined : this.nicsNamingVm.get(vm);
    naming?.delete(name);
    if (naming?.size === 0) this.nicsNamingVm.delete(vm!);
  }

  /**
   * A VM entry changed: the NICs it referenced or references now, and those naming it as
   * their VM, may have changed attachment (an input of their actors).
   */
  private vmChanged(name: string, before: Vm | undefined, after: Vm | undefined): void {
    this.changes.vms.add(name);
    const touched = (vm: Vm) => {
      for (const id of lowerNicIdsOf(vm)) {
        const nic = this.nicByLowerId.get(id);
        if (nic !== undefined) this.changes.nics.add(nic);
      }
    };
    if (before) {
      this.indexVm(before, -1);
      touched(before);
    }
    if (after) {
      this.indexVm(after, 1);
      touched(after);
    }
    for (const nic of this.nicsNamingVm.get(name) ?? []) this.changes.nics.add(nic);
  }

  private nicChanged(name: string, before: Nic | undefined, after: Nic | undefined): void {
    this.changes.nics.add(name);
    if (after?.provisioningState === 'Deleting') this.nicsDeleting.add(name);
    else this.nicsDeleting.delete(name);
    if (before) this.indexNic(name, before, false);
    if (after) this.indexNic(name, after, true);
  }

  private note<R extends { tags: Record<string, string> }>(kind: string, map: Map<string, R> | undefined, name: string, value: R | undefined, at: number): void {
    if (!map) return;
    if (value && value.tags[TAG.cluster] !== this.clusterName) return;
    this.learnedAt.set(`${kind}/${name}`, at);
    const had = map.get(name);
    // An answer that shows the entry as it was changes nothing (keeps the object: see replace).
    if (had === value || (had !== undefined && value !== undefined && sameJson(had, value))) return;
    if (value) map.set(name, value);
    else map.delete(name);
    if (kind === 'nic') {
      if (!value) this.nicsOrder.removed(name);
      else if (had === undefined) this.nicsOrder.appended(name);
    }
    this.changed(kind, name, had, value);
  }

  /**
   * The port, writing every answer into the view. Failed calls teach nothing (a timed-out PUT
   * may have landed: the machines find out by GET, and the GET is written through).
   */
  observing(arm: AzurePort, clock: { now(): number }): AzurePort {
    const deleting = <R extends { provisioningState: string }>(r: R | undefined): R | undefined =>
      r ? { ...r, provisioningState: 'Deleting' } : undefined;
    return {
      ...arm,
      getNic: async (ref) => {
        const nic = await arm.getNic(ref);
        this.note('nic', this.nics, ref.name, nic, clock.now());
        return nic;
      },
      createNic: async (spec) => {
        const nic = await arm.createNic(spec);
        this.note('nic', this.nics, nic.name, nic, clock.now());
        return nic;
      },
      // The NIC machine counts an accepted DELETE as reaped; the view agrees.
      deleteNic: async (ref) => {
        await arm.deleteNic(ref);
        this.note('nic', this.nics, ref.name, undefined, clock.now());
      },
      getVm: async (ref) => {
        const vm = await arm.getVm(ref);
        this.note('vm', this.vms, ref.name, vm, clock.now());
        return vm;
      },
      createVm: async (spec) => {
        const vm = await arm.createVm(spec);
        this.note('vm', this.vms, vm.name, vm, clock.now());
        return vm;
      },
      // Accepted: ARM shows the VM Deleting for minutes, then it goes (a GET or a list tells).
      deleteVm: async (ref) => {
        await arm.deleteVm(ref);
        const vm = this.vms.get(ref.name);
        if (vm) this.note('vm', this.vms, ref.name, deleting(vm), clock.now());
      },
      getDisk: async (ref) => {
        const disk = await arm.getDisk(ref);
        this.note('disk', this.disks, ref.name, disk, clock.now());
        return disk;
      },
      deleteDisk: async (ref) => {
        await arm.deleteDisk(ref);
        this.note('disk', this.disks, ref.name, undefined, clock.now());
      },
    };
  }
}

/** Every page of the NIC, VM (and, when asked, disk) lists of the NodeClasses' resource groups. */
export async function listArm(deps: RuntimeDeps, nodeClasses: Iterable<AzureFlexNodeClass>, what: { nics: boolean; vms: boolean; disks: boolean }): Promise<{ nics?: Nic[]; vms?: Vm[]; disks?: Disk[] }> {
  const { arm } = deps;
  const nics: Nic[] = [];
  const vms: Vm[] = [];
  const disks: Disk[] = [];
  for (const scope of scopesOf(nodeClasses)) {
    if (what.nics) nics.push(...(await arm.listNics(scope)));
    if (what.vms) vms.push(...(await arm.listVms(scope)));
    if (what.disks) disks.push(...(await arm.listDisks(scope)));
  }
  return { ...(what.nics ? { nics } : {}), ...(what.vms ? { vms } : {}), ...(what.disks ? { disks } : {}) };
}

/** Lowercased ARM ids, once per object (ARM answers are new objects, never changed). */
const lowerIds = new WeakMap<Nic, string>();
const lowerNicIds = new WeakMap<Vm, string[]>();

function lowerIdOf(nic: Nic): string {
  let id = lowerIds.get(nic);
  if (id === undefined) lowerIds.set(nic, (id = nic.id.toLowerCase()));
  return id;
}

function lowerNicIdsOf(vm: Vm): string[] {
  let ids = lowerNicIds.get(vm);
  if (ids === undefined) lowerNicIds.set(vm, (ids = vm.nicIds.map((id) => id.toLowerCase())));
  return ids;
}

export function createdAtTag(tags: Record<string, string>): number | undefined {
  const raw = tags[TAG.createdAt];
  const t = raw ? Date.parse(raw) : NaN;
  return Number.isFinite(t) ? t : undefined;
}
