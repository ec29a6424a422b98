import { createHash } from 'node:crypto';
import type { KubeClient } from '../k8s/client.js';
import type { Clock } from '../ports/clock.js';

/**
 * Who may scrape /metrics when it is served securely, decided as controller-runtime's secure
 * metrics serving (filters.WithAuthenticationAndAuthorization) decides it: the bearer token is
 * authenticated with a TokenReview, and the user it names must be allowed `get` on the
 * non-resource URL (a SubjectAccessReview), as a ClusterRole with nonResourceURLs ["/metrics"]
 * grants. Decisions are cached briefly by a digest of the token, so a scrape every few seconds
 * costs the API server two reviews a minute, not two a scrape.
 */
export type MetricsAccess = { allowed: true } | { allowed: false; status: 401 | 403; reason: string };

export interface MetricsAuthorizer {
  check(authorization: string | undefined, path: string, verb: string): Promise<MetricsAccess>;
}

const CACHE_TTL_MS = 60_000;
const CACHE_MAX = 1024;

interface TokenReviewStatus {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
}

export class KubeMetricsAuthorizer implements MetricsAuthorizer {
  private readonly cache = new Map<string, { at: number; access: MetricsAccess }>();

  constructor(
    private readonly client: KubeClient,
    private readonly clock: Clock,
    private readonly ttlMs = CACHE_TTL_MS,
  ) {}

  async check(authorization: string | undefined, path: string, verb: string): Promise<MetricsAccess> {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    if (!token) return { allowed: false, status: 401, reason: 'a bearer token is required' };
    const key = `${createHash('sha256').update(token).digest('hex')} ${verb} ${path}`;
    const now = this.clock.now();
    const hit = this.cache.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.access;
    const access = await this.review(token, path, verb);
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(key, { at: now, access });
    return access;
  }

  private async review(token: string, path: string, verb: string): Promise<MetricsAccess> {
    const client = this.client;
    const tr = await client.call('create tokenreview', (o) =>
      client.authentication.createTokenReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } }, o),
    );
    const status = (tr.status ?? {}) as TokenReviewStatus;
    if (!status.authenticated || !status.user?.username) return { allowed: false, status: 401, reason: 'the token does not authenticate' };
    const user = status.user;
    const sar = await client.call('create subjectaccessreview', (o) =>
      client.authorization.createSubjectAccessReview(
        {
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SubjectAccessReview',
            spec: {
              user: user.username,
              ...(user.uid ? { uid: user.uid } : {}),
              ...(user.groups ? { groups: user.groups } : {}),
              ...(user.extra ? { extra: user.extra } : {}),
              nonResourceAttributes: { path, verb },
            },
          },
        },
        o,
      ),
    );
    if (sar.status?.allowed) return { allowed: true };
    return { allowed: false, status: 403, reason: `${user.username} may not ${verb} ${path}` };
  }
}
