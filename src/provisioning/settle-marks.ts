/**
 * Keeps the unavailable-offering marks on NodeClasses true before a pass plans with them
 * (offering-marks.ts): a probation mark a launch has proven wrong goes, and a SkuNotAvailable
 * mark whose Resource SKUs restriction is gone goes on probation at once.
 */
import type { AzureFlexNodeClass, ClusterPort } from '../ports/cluster.js';
import type { Clock } from '../ports/clock.js';
import { ANNOTATION_OFFERING_MARKS } from '../apis/well-known.js';
import { formatMarks, markKey, readMarks, type OfferingMark, type OfferingMarks, type ProbationMemo } from './offering-marks.js';

export type SkuRestrictedCheck = (q: { sku: string; region: string; zone?: string; subscriptionID: string; markedAt: number }) => boolean | undefined;

export interface SettleMarksOptions {
  cluster: ClusterPort;
  clock: Clock;
  probation: ProbationMemo;
  skuRestricted?: SkuRestrictedCheck;
  liftOffering?: (sku: string, region: string) => void;
  log: {
    info(fields: Record<string, unknown>, message: string): void;
    warn(fields: Record<string, unknown>, message: string): void;
  };
  /** A NodeClass could not be written: the next reconcile must run to try again. */
  onFailure: () => void;
}

/** Writes the marks that changed to their NodeClasses; returns whether it changed anything. */
export async function settleMarks(marks: OfferingMarks, nodeClasses: readonly AzureFlexNodeClass[], options: SettleMarksOptions): Promise<boolean> {
  const updates = new Map<string, OfferingMark[]>();
  const current = (name: string): OfferingMark[] => updates.get(name) ?? readMarks(nodeClasses.find((c) => c.metadata.name === name)!);
  for (const [nodeClass, proven] of marks.proven(options.probation)) {
    const keys = new Set(proven.map(markKey));
    updates.set(nodeClass, current(nodeClass).filter((m) => !keys.has(markKey(m))));
  }
  const now = options.clock.now();
  for (const { region, nodeClass, mark } of marks.skuNotAvailable()) {
    const subscriptionID = nodeClasses.find((c) => c.metadata.name === nodeClass)?.spec.subscriptionID ?? '';
    if (options.skuRestricted?.({ sku: mark.sku, region, ...(mark.zone ? { zone: mark.zone } : {}), subscriptionID, markedAt: mark.markedAt }) !== false) continue;
    options.liftOffering?.(mark.sku, region);
    updates.set(nodeClass, current(nodeClass).map((m) => (markKey(m) === markKey(mark) ? { ...m, expiresAt: now } : m)));
    options.log.info({ sku: mark.sku, region }, 'SkuNotAvailable no longer restricted: offering on probation');
  }
  for (const [name, list] of updates) {
    try {
      await options.cluster.patchNodeClassMetadata(name, { annotations: { [ANNOTATION_OFFERING_MARKS]: formatMarks(list) } });
    } catch (error) {
      options.onFailure();
      options.log.warn({ nodeClass: name, err: error instanceof Error ? error.message : String(error) }, 'updating offering marks failed');
    }
  }
  return updates.size > 0;
}
