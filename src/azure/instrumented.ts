import { isAzureError, type AzurePort } from '../ports/azure.js';
import type { Clock } from '../ports/clock.js';
import type { ArmMetrics } from './metrics.js';

/**
 * Counts every ARM call by operation and outcome. A decorator over the port, so the same
 * numbers come out of the SDK adapter and the simulator's fake ARM. A delete answered by
 * 404 resolves (the port's contract) and is counted "ok".
 */
export type ArmOperationName = keyof AzurePort;

export function instrumentAzure(port: AzurePort, metrics: ArmMetrics, clock?: Clock): AzurePort {
  const count = async <R>(operation: ArmOperationName, subscription: string, call: () => Promise<R>): Promise<R> => {
    const started = clock?.now();
    try {
      const result = await call();
      metrics.calls.inc({ operation, code: 'ok', subscription });
      return result;
    } catch (err) {
      metrics.calls.inc({ operation, code: isAzureError(err) ? err.code : 'Unknown', subscription });
      throw err;
    } finally {
      if (clock && started !== undefined) metrics.duration.observe({ operation }, (clock.now() - started) / 1000);
    }
  };
  // Spelled out per method so the compiler checks every signature against the port.
  return {
    getNic: (ref) => count('getNic', ref.subscriptionId, () => port.getNic(ref)),
    createNic: (spec) => count('createNic', spec.ref.subscriptionId, () => port.createNic(spec)),
    deleteNic: (ref) => count('deleteNic', ref.subscriptionId, () => port.deleteNic(ref)),
    listNics: (scope) => count('listNics', scope.subscriptionId, () => port.listNics(scope)),
    getVm: (ref) => count('getVm', ref.subscriptionId, () => port.getVm(ref)),
    createVm: (spec) => count('createVm', spec.ref.subscriptionId, () => port.createVm(spec)),
    deleteVm: (ref) => count('deleteVm', ref.subscriptionId, () => port.deleteVm(ref)),
    listVms: (scope) => count('listVms', scope.subscriptionId, () => port.listVms(scope)),
    listDisks: (scope) => count('listDisks', scope.subscriptionId, () => port.listDisks(scope)),
    getDisk: (ref) => count('getDisk', ref.subscriptionId, () => port.getDisk(ref)),
    deleteDisk: (ref) => count('deleteDisk', ref.subscriptionId, () => port.deleteDisk(ref)),
    listUsages: (subscriptionId, location) => count('listUsages', subscriptionId, () => port.listUsages(subscriptionId, location)),
    getCapacityReservationGroup: (ref) => count('getCapacityReservationGroup', ref.subscriptionId, () => port.getCapacityReservationGroup(ref)),
  };
}
