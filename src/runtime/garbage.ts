import { TAG, refFromId } from '../azure/naming.js';
import { errorCode } from '../lifecycle/failure.js';
import { assertLeader } from '../lifecycle/scope.js';
import type { RuntimeDeps } from './deps.js';
import type { ActorTrail } from './tracing.js';
import type { WorldView } from '../lifecycle/deps.js';
import { createdAtTag } from './arm-view.js';

/**
 * VMs and disks that no NodeClaim owns, past the grace period, are deleted (NICs go through
 * their machine). Tags decide, names do not: the view holds only resources tagged with this
 * cluster (another cluster's, or an untagged one, is never reaped), and one is owned while the
 * NodeClaim its tag names exists, whatever its name (the cluster's or the first version's). Fire and observe: the deletes are started, never awaited here, so a GPU
 * VM's minutes-long delete holds no observation back; a later pass sees the VM Deleting (or
 * gone, or back, if the delete failed, and then starts it again).
 */
export class GarbageCollector {
  /** Deletes whose request is still unanswered: only stops one pass from re-sending what the previous one has not had answered yet (what to delete is the world's). */
  private readonly inFlight = new Set<string>();

  constructor(
    private readonly deps: RuntimeDeps,
    private readonly trail: ActorTrail,
  ) {}

  collect(world: WorldView): void {
    const owned = (tags: Record<string, string>): boolean => world.nodeClaims.has(tags[TAG.nodeClaim] ?? '');
    for (const vm of world.vms.values()) {
      if (owned(vm.tags) || vm.provisioningState === 'Deleting') continue;
      if (world.at - (createdAtTag(vm.tags) ?? 0) < this.deps.config.orphanGraceMs) continue;
      this.start(`vm/${vm.name}`, 'orphan VM deleted', () => this.deps.arm.deleteVm(refFromId(vm.id)));
    }
    for (const disk of world.disks?.values() ?? []) {
      const ownerVm = disk.managedBy ? world.vms.has(disk.managedBy.slice(disk.managedBy.lastIndexOf('/') + 1)) : false;
      if (ownerVm || owned(disk.tags)) continue;
      if (world.at - (createdAtTag(disk.tags) ?? 0) < this.deps.config.orphanGraceMs) continue;
      this.start(`disk/${disk.name}`, 'orphan disk deleted', () => this.deps.arm.deleteDisk(refFromId(disk.id)));
    }
  }

  private start(actor: string, why: string, run: () => Promise<void>): void {
    if (this.inFlight.has(actor)) return;
    this.inFlight.add(actor);
    this.trail.controller(actor, 'gc', why);
    this.leaderOnly(run)
      .catch((err: unknown) => this.trail.controller(actor, 'gc-error', errorCode(err)))
      .finally(() => this.inFlight.delete(actor));
  }

  private async leaderOnly(run: () => Promise<void>): Promise<void> {
    assertLeader({ deps: this.deps });
    await run();
  }
}
