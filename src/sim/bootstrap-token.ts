import { createHash } from 'node:crypto';
import { z } from 'zod';
import { CachedBootstrapSource, DEFAULT_BOOTSTRAP_REFRESH_MS, decodeCustomData, type BootstrapConfig, type BootstrapSource } from '../azure/userdata/index.js';
import { SecretRegistry } from '../log/redact.js';
import type { Clock } from '../ports/clock.js';
import { createUserDataRenderer } from '../lifecycle/nodeclaim/userdata.js';
import type { UserDataRequest } from '../runtime/deps.js';
import { SIM_BOOTSTRAP, SIM_NODE_AGENT } from './userdata.js';

const MAX_SECONDS = 14 * 24 * 3600;

/**
 * A scenario's bootstrap token, when it is not the simulator's one everlasting token: each
 * token lives ttlSeconds from its issue (kubeadm's default is 24 h), and at each rotation a new
 * token is written to the Secret and the previous one deleted (as after a leak), so a VM that
 * booted with it never joins.
 */
export const BootstrapTokenSchema = z.strictObject({
  ttlSeconds: z.number().finite().min(60).max(MAX_SECONDS).optional(),
  rotateAtSeconds: z.array(z.number().finite().nonnegative().max(MAX_SECONDS)).max(10_000).default([]),
});
export type BootstrapTokenPlan = z.output<typeof BootstrapTokenSchema>;

/** What the simulated kubelet asks before a booted VM's node registers. */
export interface JoinAuthority {
  /** Whether the token in the user data of the VM made for this NodeClaim (its tag) lets it join now. */
  joins(nodeClaim: string, now: number): boolean;
}

const TOKEN_IN_USER_DATA = /"token": "([a-z0-9]{6}\.[a-z0-9]{16})"/;

/**
 * The cluster's bootstrap-token Secret and the API server's view of it: the controller reads
 * it as it reads the real Secret (a BootstrapSource, cached and refreshed per incarnation), and
 * the kubelet asks whether the token a VM booted with is still accepted when it joins.
 */
export class SimBootstrapTokens implements BootstrapSource, JoinAuthority {
  private generation = 0;
  private issuedAt: number;
  /** The token in each VM's user data (what the VM's disk holds), by the NodeClaim it was rendered for. */
  private readonly byNodeClaim = new Map<string, string>();
  /** Tokens stay out of the process-wide registry: property runs make thousands. */
  private readonly secrets = new SecretRegistry();
  /** Joins the API server refused (the VM's token was deleted or expired by then). */
  joinsRefused = 0;
  /** User data rendered with a token that had already expired or been deleted (a VM that can never join). */
  deadTokenRenders = 0;

  constructor(
    private readonly clock: Clock,
    private readonly plan: BootstrapTokenPlan,
  ) {
    this.issuedAt = clock.now();
    for (const at of plan.rotateAtSeconds) clock.setTimer(at * 1000, () => this.rotate());
  }

  /** The Secret as the controller reads it. */
  async get(): Promise<BootstrapConfig> {
    const base = await SIM_BOOTSTRAP.get();
    const expiresAt = this.expiresAt();
    return { apiServerEndpoint: base.apiServerEndpoint, caCertData: base.caCertData, kubernetesVersion: base.kubernetesVersion, token: this.current(), ...(expiresAt !== undefined ? { expiresAt } : {}) };
  }

  joins(nodeClaim: string, now: number): boolean {
    const ok = this.accepts(this.byNodeClaim.get(nodeClaim), now);
    if (!ok) this.joinsRefused++;
    return ok;
  }

  /** A controller incarnation's userData: its own refreshed cache, as after a process start. */
  renderer(clock: Clock): (req: UserDataRequest) => Promise<string> {
    const render = createUserDataRenderer(new CachedBootstrapSource(this, this.secrets, { clock, maxAgeMs: DEFAULT_BOOTSTRAP_REFRESH_MS }), SIM_NODE_AGENT);
    return async (req) => {
      const customData = await render(req);
      const token = TOKEN_IN_USER_DATA.exec(decodeCustomData(customData))?.[1];
      if (token) this.byNodeClaim.set(req.nodeClaim.metadata.name, token);
      if (!this.accepts(token, this.clock.now())) this.deadTokenRenders++;
      return customData;
    };
  }

  /** How many tokens have been issued after the first. */
  get rotations(): number {
    return this.generation;
  }

  private accepts(token: string | undefined, now: number): boolean {
    const expiresAt = this.expiresAt();
    return token === this.current() && (expiresAt === undefined || now < expiresAt);
  }

  private rotate(): void {
    this.generation++;
    this.issuedAt = this.clock.now();
  }

  private current(): string {
    const secret = createHash('sha256').update(`azflex simulated bootstrap token ${this.generation}`).digest('hex').slice(0, 16);
    return `sim${this.generation.toString(36).padStart(3, '0').slice(-3)}.${secret}`;
  }

  private expiresAt(): number | undefined {
    return this.plan.ttlSeconds === undefined ? undefined : this.issuedAt + this.plan.ttlSeconds * 1000;
  }
}
