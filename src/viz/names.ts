/**
 * The names the viz CLI offers, kept apart from the machines (importing those loads XState and
 * every machine, which a bad flag should not pay for).
 */

/** The machines `azflex viz` can draw, in the order `--machine all` draws them. */
export const MACHINE_NAMES = ['nodeclaim', 'nic'] as const;
export type MachineName = (typeof MACHINE_NAMES)[number];

export const VIZ_FORMATS = ['svg', 'dot', 'mermaid', 'json'] as const;
export type VizFormat = (typeof VIZ_FORMATS)[number];
