import type { ResourceRef } from '../ports/azure.js';
import type { TimerId } from '../ports/clock.js';
import type { RuntimeDeps } from './deps.js';
import { classified, errorCode } from '../lifecycle/failure.js';
import { putNic } from '../lifecycle/nic/effects.js';
import type { NodeClaimEmitted } from '../lifecycle/nodeclaim/machine.js';
import { NODECLAIM_ROUTES, type NodeClaimActor, type RouteTargets, type Routes } from '../lifecycle/routing.js';
import { nicRef, type LifecycleScope } from '../lifecycle/scope.js';

/**
 * The two upstream behaviours azflex is compared against. They create NICs inline and
 * own no NIC lifecycle: whatever they fail to delete stays in the subnet.
 *  - naive:   delete the NIC right after the VM failure (ARM answers NicReservedForAnotherVm).
 *  - delayed: a detached timer deletes it ~210 s later, with retries; a restart loses it.
 */
export interface LegacyCleanup {
  createNic(nic: string, nodeClaim: string): Promise<void>;
  onVmFailed(nic: string): void;
  stop(): void;
}

const DELAYED_RETRIES = 3;
const DELAYED_RETRY_INTERVAL_MS = 30_000;

export function legacyCleanup(deps: RuntimeDeps, scope: LifecycleScope): LegacyCleanup {
  const timers = new Set<TimerId>();
  const record = (nic: string, event: string, detail: string): void =>
    deps.eventLog.record({ t: deps.clock.now(), actor: `nic/${nic}`, kind: 'effect', event, detail });
  const tryDelete = async (nic: string, ref: ResourceRef): Promise<boolean> => {
    try {
      await deps.arm.deleteNic(ref);
      record(nic, 'deleteNic', 'ok');
      return true;
    } catch (err) {
      record(nic, 'deleteNic', err instanceof Error ? err.message.split(':')[0]! : String(err));
      return false;
    }
  };

  return {
    createNic: (nic, nodeClaim) => putNic(scope, nic, nodeClaim),
    onVmFailed(nic) {
      const ref = nicRef(scope, nic);
      if (!ref) return;
      if (deps.config.strategy === 'naive') {
        void tryDelete(nic, ref);
        return;
      }
      const attempt = (left: number): void => {
        const id = deps.clock.setTimer(left === DELAYED_RETRIES ? deps.config.delayedCleanupMs : DELAYED_RETRY_INTERVAL_MS, () => {
          timers.delete(id);
          void tryDelete(nic, ref).then((ok) => {
            if (!ok && left > 0) attempt(left - 1);
          });
        });
        timers.add(id);
      };
      attempt(DELAYED_RETRIES);
    },
    stop() {
      for (const id of timers) deps.clock.clearTimer(id);
      timers.clear();
    },
  };
}

/**
 * The NodeClaim routes under a legacy strategy: no NIC actor; the NIC is created inline when
 * asked for, and a failed VM hands it to the strategy's cleanup.
 */
export function legacyNodeClaimRoutes(legacy: LegacyCleanup, claim: (name: string) => NodeClaimActor | undefined): Routes<NodeClaimEmitted, RouteTargets> {
  return {
    ...NODECLAIM_ROUTES,
    'nic.requested': (e) => {
      void legacy.createNic(e.nic, e.nodeClaim).then(
        () => claim(e.nodeClaim)?.send({ type: 'NIC_READY' }),
        (err: unknown) => claim(e.nodeClaim)?.send({ type: 'NIC_FAILED', code: errorCode(err), kind: classified(err).action.kind }),
      );
    },
    'vm.failed': (e) => legacy.onVmFailed(e.nic),
  };
}
