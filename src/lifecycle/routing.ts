import type { Actor } from 'xstate';
import type { NicEmitted, NicMachine } from './nic/machine.js';
import type { NodeClaimEmitted, NodeClaimMachine } from './nodeclaim/machine.js';

export type NodeClaimActor = Actor<NodeClaimMachine>;
export type NicActor = Actor<NicMachine>;

/** The actors a route may address, as the runtime hosts them. */
export interface RouteTargets {
  /** The NIC's actor, if one runs. */
  nic(name: string): NicActor | undefined;
  /** The NIC's actor, spawned (the NIC not yet in ARM, its owner wanting it) if none runs. */
  nicOrSpawn(name: string): NicActor;
  /** The actor of the NodeClaim that owns the NIC, if one runs. */
  ownerOf(nic: string): NodeClaimActor | undefined;
}

export type Routes<E extends { type: string }, T> = { [K in E['type']]: (event: Extract<E, { type: K }>, to: T) => void };

/**
 * Everything the two kinds of actor say to each other, in one table: each event one emits
 * and what it becomes for the other. A NodeClaim asks for its NIC and says how its VM went;
 * a NIC answers when it is ready, could not be made, or is gone.
 */
export const NODECLAIM_ROUTES: Routes<NodeClaimEmitted, RouteTargets> = {
  'nic.requested': (e, to) => to.nicOrSpawn(e.nic).send({ type: 'CREATE' }),
  'vm.launched': (e, to) => to.nic(e.nic)?.send({ type: 'VM_ATTACHED' }),
  'vm.failed': (e, to) => to.nic(e.nic)?.send({ type: 'VM_FAILED', reservedUntil: e.reservedUntil }),
};

export const NIC_ROUTES: Routes<NicEmitted, RouteTargets> = {
  'nic.ready': (e, to) => to.ownerOf(e.name)?.send({ type: 'NIC_READY' }),
  'nic.createFailed': (e, to) => to.ownerOf(e.name)?.send({ type: 'NIC_FAILED', code: e.code, kind: e.kind, ...(e.detail !== undefined ? { detail: e.detail } : {}) }),
  'nic.reaped': (e, to) => to.ownerOf(e.name)?.send({ type: 'NIC_REAPED' }),
};

/** Listens on an actor for every event of its table, each delivered as the table says. */
export function routeFrom<E extends { type: string }, T>(actor: { on(type: string, listener: (e: E) => void): unknown }, routes: Routes<E, T>, to: T): void {
  for (const [type, route] of Object.entries(routes) as Array<[string, (e: E, to: T) => void]>) actor.on(type, (e) => route(e, to));
}
