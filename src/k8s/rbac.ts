import type { RequestInfo } from './client.js';
import { NODECLASS_GROUP } from '../apis/well-known.js';

/**
 * The API requests azflex makes, as RBAC rules. The chart's ClusterRole/Role must equal
 * these (test/k8s/chart.test.ts), and every request the adapter makes under test must be
 * covered by them (test/k8s/rbac.test.ts) — so the chart is least-privilege by construction
 * and a new call without a rule fails CI instead of 403ing in production.
 */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

export const REQUIRED_CLUSTER_RULES: PolicyRule[] = [
  { apiGroups: ['karpenter.sh'], resources: ['nodeclaims'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] },
  { apiGroups: ['karpenter.sh'], resources: ['nodeclaims/status'], verbs: ['patch'] },
  { apiGroups: ['karpenter.sh'], resources: ['nodepools'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['karpenter.sh'], resources: ['nodepools/status'], verbs: ['patch'] },
  { apiGroups: [NODECLASS_GROUP], resources: ['azureflexnodeclasses'], verbs: ['get', 'list', 'watch', 'patch'] },
  { apiGroups: [NODECLASS_GROUP], resources: ['azureflexnodeclasses/status'], verbs: ['patch'] },
  { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch', 'patch', 'delete'] },
  { apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch'] },
  { apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] },
  // Volume topology reads them from informers only (no GETs: least privilege, like pods).
  { apiGroups: [''], resources: ['persistentvolumeclaims', 'persistentvolumes'], verbs: ['list', 'watch'] },
  { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['list', 'watch'] },
  { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create'] },
];

/** Namespaced (release namespace) rules: the leader-election Lease and the one bootstrap-token Secret. */
export function requiredNamespacedRules(leaseName: string, bootstrapSecretName: string): PolicyRule[] {
  return [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [leaseName], verbs: ['get', 'update'] },
    { apiGroups: [''], resources: ['secrets'], resourceNames: [bootstrapSecretName], verbs: ['get'] },
  ];
}

export interface RequestAttributes {
  apiGroup: string;
  resource: string;
  namespace?: string;
  name?: string;
  verb: string;
}

/** Maps a REST request to the attributes the RBAC authorizer checks (like the API server's RequestInfo). */
export function requestAttributes(r: Pick<RequestInfo, 'method' | 'path' | 'watch'>): RequestAttributes {
  const parts = r.path.split('/').filter(Boolean);
  let i: number;
  let apiGroup: string;
  if (parts[0] === 'api') {
    apiGroup = '';
    i = 2;
  } else if (parts[0] === 'apis') {
    apiGroup = parts[1] ?? '';
    i = 3;
  } else throw new Error(`not a resource path: ${r.path}`);
  let namespace: string | undefined;
  if (parts[i] === 'namespaces' && parts.length > i + 2) {
    namespace = parts[i + 1];
    i += 2;
  }
  const resource = parts[i] ?? '';
  const name = parts[i + 1] ? decodeURIComponent(parts[i + 1] as string) : undefined;
  const sub = parts[i + 2];
  const method = r.method.toUpperCase();
  const verb =
    method === 'GET'
      ? r.watch
        ? 'watch'
        : name
          ? 'get'
          : 'list'
      : method === 'POST'
        ? 'create'
        : method === 'PUT'
          ? 'update'
          : method === 'PATCH'
            ? 'patch'
            : method === 'DELETE'
              ? name
                ? 'delete'
                : 'deletecollection'
              : method.toLowerCase();
  // POST to pods/{name}/eviction is "create" on the subresource.
  const attrs: RequestAttributes = { apiGroup, resource: sub ? `${resource}/${sub}` : resource, verb };
  if (namespace) attrs.namespace = namespace;
  if (name && !(verb === 'create' && !sub)) attrs.name = name;
  return attrs;
}

export function allows(rules: PolicyRule[], a: RequestAttributes): boolean {
  return rules.some(
    (rule) =>
      rule.apiGroups.includes(a.apiGroup) &&
      rule.resources.includes(a.resource) &&
      rule.verbs.includes(a.verb) &&
      (!rule.resourceNames || (a.name !== undefined && rule.resourceNames.includes(a.name))),
  );
}
