import { GROUP_TYPE, type ReservationGroupView, type ReservationView } from './capacity-reservations.js';
import type { FakeArm } from './fake-arm.js';
import { HttpError, json, lower, notModelled, resourceNotFound } from './rest-errors.js';
import { stableGuid, type Json } from './rest-shapes.js';
import type { ArmHttpResponse } from './rest-http.js';

type JsonObject = { [key: string]: Json };

const RESERVATION_TYPE = `${GROUP_TYPE}/capacityReservations`;
const iso = (ms: number): string => new Date(ms).toISOString();
const refs = (ids: readonly string[]): Json[] => ids.map((id) => ({ id }));

/** `$expand=instanceView` (any case): the one expansion a group or reservation GET takes that changes its body. */
function wantsInstanceView(url: URL): boolean {
  return lower(url.searchParams.get('$expand') ?? undefined) === 'instanceview';
}

/** A reservation's utilisation as its instance view reports it: the reserved quantity and the VMs allocated in it (overallocated ones too). */
function utilization(r: ReservationView): JsonObject {
  return { currentCapacity: r.quantity, virtualMachinesAllocated: refs(r.allocatedVmIds) };
}

function statuses(r: ReservationView): Json[] {
  return [{ code: 'ProvisioningState/succeeded', level: 'Info', displayStatus: 'Provisioning succeeded', time: iso(r.timeCreated) }];
}

export function reservationJson(r: ReservationView, instanceView: boolean): JsonObject {
  return {
    id: r.id,
    name: r.name,
    type: RESERVATION_TYPE,
    location: r.location,
    tags: {},
    sku: { name: r.sku, capacity: r.quantity },
    ...(r.zone !== undefined ? { zones: [r.zone] } : {}),
    properties: {
      reservationId: stableGuid(r.id.toLowerCase()),
      platformFaultDomainCount: 1,
      virtualMachinesAssociated: refs(r.associatedVmIds),
      provisioningState: 'Succeeded',
      provisioningTime: iso(r.timeCreated),
      timeCreated: iso(r.timeCreated),
      ...(instanceView ? { instanceView: { utilizationInfo: utilization(r), statuses: statuses(r) } } : {}),
    },
  };
}

export function groupJson(g: ReservationGroupView, instanceView: boolean): JsonObject {
  return {
    id: g.id,
    name: g.name,
    type: GROUP_TYPE,
    location: g.location,
    tags: {},
    ...(g.zones ? { zones: [...g.zones] } : {}),
    properties: {
      capacityReservations: refs(g.reservations.map((r) => r.id)),
      virtualMachinesAssociated: refs(g.reservations.flatMap((r) => r.associatedVmIds)),
      ...(instanceView ? { instanceView: { capacityReservations: g.reservations.map((r) => ({ name: r.name, utilizationInfo: utilization(r), statuses: statuses(r) })) } } : {}),
    },
  };
}

/**
 * GET …/capacityReservationGroups/{g} and …/{g}/capacityReservations[/{r}], each with
 * `$expand=instanceView` for the utilisation; the lists of groups come through the list route.
 * Groups and reservations are declared in the fake's configuration: their writes are not
 * modelled (501).
 */
export function capacityReservationRoute(arm: FakeArm, method: string, ref: { subscriptionId: string; resourceGroup: string; name: string }, rest: string[], url: URL): ArmHttpResponse {
  if (method !== 'GET') throw notModelled(method, url);
  const group = arm.capacityReservationGroupGet(ref);
  if (!group) throw resourceNotFound(GROUP_TYPE, ref);
  if (rest.length === 0) return json(200, groupJson(group, wantsInstanceView(url)));
  if (lower(rest[0]) !== 'capacityreservations' || rest.length > 2) throw notModelled(method, url);
  // The list's $expand names VM references, not the instance view: each reservation's utilisation is a GET's (or the group's).
  if (rest.length === 1) return json(200, { value: group.reservations.map((r) => reservationJson(r, false)) });
  const r = group.reservations.find((x) => x.name.toLowerCase() === lower(rest[1]));
  if (!r) throw new HttpError(404, 'ResourceNotFound', `The Resource '${RESERVATION_TYPE}/${ref.name}/${rest[1]}' under resource group '${ref.resourceGroup}' was not found.`);
  return json(200, reservationJson(r, wantsInstanceView(url)));
}
