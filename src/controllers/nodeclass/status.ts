import type { AzureFlexNodeClass, ClusterPort } from '../../ports/cluster.js';
import type { Clock } from '../../ports/clock.js';
import { conditionsEqual, getCondition, rfc3339, setCondition } from '../../apis/conditions.js';
import { NODECLASS_HASH_VERSION, nodeClassHash } from '../../apis/nodeclass-hash.js';
import { validateNodeClassSpec, type ValidationResult } from '../../apis/nodeclass-validation.js';
import { ANNOTATION_NODECLASS_HASH, ANNOTATION_NODECLASS_HASH_VERSION, FINALIZER_NODECLASS } from '../../apis/well-known.js';

export const CONDITION_VALIDATION_SUCCEEDED = 'ValidationSucceeded';
export const CONDITION_READY = 'Ready';

export interface NodeClassControllerDeps {
  cluster: ClusterPort;
  clock: Clock;
  /** How often every NodeClass is re-reconciled (level-triggered). */
  intervalMs?: number;
  onError?: (err: unknown, nodeClass: string) => void;
}

/**
 * NodeClass status controller: adds our finalizer, validates the spec (no ARM calls — an
 * invalid class must never reach ARM), publishes ValidationSucceeded and Ready, emits a
 * Warning Event when validation starts failing or its message changes, and stamps the drift
 * hash annotation. Writes only when something changed, so a steady state makes no requests.
 */
export class NodeClassStatusController {
  readonly name = 'nodeclass.status';
  readonly intervalMs: number;
  /** uid -> message of the last failure we emitted an Event for (no Event storm per resync). */
  private readonly warned = new Map<string, string>();

  constructor(private readonly deps: NodeClassControllerDeps) {
    this.intervalMs = deps.intervalMs ?? 30_000;
  }

  async reconcile(): Promise<void> {
    const classes = await this.deps.cluster.listNodeClasses();
    const live = new Set<string>();
    for (const nc of classes) {
      live.add(nc.metadata.uid);
      try {
        await this.reconcileOne(nc);
      } catch (e) {
        this.deps.onError?.(e, nc.metadata.name);
      }
    }
    for (const uid of [...this.warned.keys()]) if (!live.has(uid)) this.warned.delete(uid);
  }

  async reconcileOne(nodeClass: AzureFlexNodeClass): Promise<ValidationResult | undefined> {
    // Deleting classes belong to the termination controller; re-adding the finalizer here
    // would make deletion impossible.
    if (nodeClass.metadata.deletionTimestamp) return undefined;
    const name = nodeClass.metadata.name;
    let current = nodeClass;
    const hash = nodeClassHash(nodeClass);
    const ann = nodeClass.metadata.annotations;
    const needsFinalizer = !nodeClass.metadata.finalizers.includes(FINALIZER_NODECLASS);
    const needsHash = ann[ANNOTATION_NODECLASS_HASH] !== hash || ann[ANNOTATION_NODECLASS_HASH_VERSION] !== NODECLASS_HASH_VERSION;
    if (needsFinalizer || needsHash) {
      current = await this.deps.cluster.patchNodeClassMetadata(name, {
        ...(needsFinalizer ? { finalizers: [...nodeClass.metadata.finalizers, FINALIZER_NODECLASS] } : {}),
        ...(needsHash
          ? { annotations: { [ANNOTATION_NODECLASS_HASH]: hash, [ANNOTATION_NODECLASS_HASH_VERSION]: NODECLASS_HASH_VERSION } }
          : {}),
      });
    }

    const result = validateNodeClassSpec(nodeClass.spec);
    const now = rfc3339(this.deps.clock.now());
    let conditions = setCondition(
      current.status.conditions,
      { type: CONDITION_VALIDATION_SUCCEEDED, status: result.ok ? 'True' : 'False', reason: result.reason, message: result.message },
      now,
    );
    conditions = setCondition(
      conditions,
      result.ok
        ? { type: CONDITION_READY, status: 'True', reason: 'Ready', message: '' }
        : { type: CONDITION_READY, status: 'False', reason: 'ValidationFailed', message: result.message },
      now,
    );
    if (!conditionsEqual(conditions, current.status.conditions)) {
      await this.deps.cluster.updateNodeClassStatus(name, { ...current.status, conditions });
    }

    const uid = nodeClass.metadata.uid;
    if (!result.ok && this.warned.get(uid) !== result.message) {
      this.warned.set(uid, result.message);
      await this.deps.cluster.recordEvent({
        involvedObject: { kind: 'AzureFlexNodeClass', name, uid },
        type: 'Warning',
        reason: 'ValidationFailed',
        message: `${result.reason}: ${result.message}`,
      });
    } else if (result.ok) {
      this.warned.delete(uid);
    }
    return result;
  }
}

/**
 * Gate for anything about to call ARM for a NodeClass: the spec must validate *now* (not
 * merely have a True condition that may predate a spec edit).
 */
export function isNodeClassUsable(nodeClass: AzureFlexNodeClass): boolean {
  if (nodeClass.metadata.deletionTimestamp) return false;
  return validateNodeClassSpec(nodeClass.spec).ok;
}

export function nodeClassReady(nodeClass: AzureFlexNodeClass): boolean {
  return getCondition(nodeClass.status.conditions, CONDITION_READY)?.status === 'True' && isNodeClassUsable(nodeClass);
}
