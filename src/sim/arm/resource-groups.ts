import type { ResourceGroupScope } from '../../ports/azure.js';
import * as msg from './messages.js';
import { normalizeLocation } from './model.js';
import type { ArmCalls } from './calls.js';

/** Resource groups (Microsoft.Resources): a PUT, GET or list in a group that does not exist is a 404. */
export class ResourceGroups {
  /** `sub|rg` (lower-case) of every resource group that exists. */
  private readonly groups = new Map<string, { subscriptionId: string; name: string; location: string }>();
  /** Resource groups found by exists(), by the caller's (unnormalised) strings. */
  private readonly known = new Map<string, Set<string>>();

  constructor(private readonly calls: ArmCalls, private readonly required: boolean) {}

  exists(subscriptionId: string, name: string): boolean {
    if (!this.required) return true;
    // Groups are never deleted, so a group once found stays found; remembered by the caller's
    // own strings, which are usually the same instances every call (no key to build and hash).
    let names = this.known.get(subscriptionId);
    if (names?.has(name)) return true;
    if (!this.groups.has(`${subscriptionId}|${name}`.toLowerCase())) return false;
    if (!names) this.known.set(subscriptionId, (names = new Set()));
    names.add(name);
    return true;
  }

  require(scope: ResourceGroupScope): void {
    if (!this.exists(scope.subscriptionId, scope.resourceGroup)) throw msg.resourceGroupNotFound(scope.resourceGroup);
  }

  add(subscriptionId: string, name: string, location: string): void {
    const key = `${subscriptionId}|${name}`.toLowerCase();
    if (!this.groups.has(key)) this.groups.set(key, { subscriptionId, name, location });
  }

  /** PUT /subscriptions/{s}/resourcegroups/{rg}: 201 when created, 200 when it existed. */
  put(subscriptionId: string, name: string, location: string): { created: boolean; location: string } {
    return this.calls.invoke<{ created: boolean; location: string }>('rg.put', 'writes', subscriptionId, normalizeLocation(location), name, () => {
      const existing = this.groups.get(`${subscriptionId}|${name}`.toLowerCase());
      if (existing) return { status: 200, value: { created: false, location: existing.location } };
      this.add(subscriptionId, name, normalizeLocation(location));
      return { status: 201, value: { created: true, location: normalizeLocation(location) } };
    });
  }

  get(subscriptionId: string, name: string): { name: string; location: string } {
    return this.calls.invoke('rg.get', 'reads', subscriptionId, undefined, name, () => {
      const rg = this.groups.get(`${subscriptionId}|${name}`.toLowerCase());
      if (!rg) throw msg.resourceGroupNotFound(name);
      return { status: 200, value: { name: rg.name, location: rg.location } };
    });
  }
}
