/**
 * What azflex can honour of a karpenter.sh/v1 NodePool, as upstream's latest release defines
 * it. A NodePool is never rejected by throwing: each thing azflex cannot do becomes an issue
 * that the NodePool status controller publishes as a condition and an Event on that NodePool.
 *
 *  - `blocking` issues keep the NodePool out of provisioning (ValidationSucceeded=False,
 *    Ready=False): azflex would otherwise act against what the NodePool says;
 *  - `degraded` issues leave it provisioning with a documented, more conservative behaviour
 *    (FullySupported=False).
 */
import type { NodePool, SelectorOperator } from '../ports/cluster.js';
import { parseCron } from '../utils/cron.js';
import { Requirements, WELL_KNOWN_LABELS, WELL_KNOWN_VALUES } from './requirements.js';
import { AZURE_RESTRICTED_LABELS, AZURE_RESTRICTED_LABEL_DOMAIN } from '../apis/well-known.js';

export interface SupportIssue {
  /** CamelCase, used as the condition reason and the Event reason. */
  reason: string;
  message: string;
}

export interface NodePoolSupport {
  blocking: SupportIssue[];
  degraded: SupportIssue[];
}

const OPERATORS: ReadonlySet<SelectorOperator> = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt', 'Gte', 'Lte']);
const NUMERIC: ReadonlySet<string> = new Set(['Gt', 'Lt', 'Gte', 'Lte']);

export function nodePoolSupport(pool: NodePool): NodePoolSupport {
  const blocking: SupportIssue[] = [];
  const degraded: SupportIssue[] = [];
  const spec = pool.spec;

  for (const key of Object.keys(spec.template.metadata.labels)) {
    const restricted = restrictedLabel(key);
    if (restricted) blocking.push({ reason: 'RestrictedLabel', message: `label ${key}: ${restricted}` });
  }
  for (const r of spec.template.spec.requirements) {
    const restricted = restrictedLabel(r.key);
    if (restricted) blocking.push({ reason: 'RestrictedLabel', message: `requirement ${r.key}: ${restricted}` });
    const known = r.operator === 'In' ? WELL_KNOWN_VALUES.get(r.key) : undefined;
    if (known && !(r.values ?? []).some((v) => known.has(v))) {
      blocking.push({ reason: 'InvalidRequirement', message: `requirement ${r.key} In [${(r.values ?? []).join(', ')}] names none of its values: ${[...known].join(', ')}` });
    }
    if (!OPERATORS.has(r.operator)) {
      blocking.push({ reason: 'UnsupportedRequirementOperator', message: `requirement ${r.key} uses operator ${String(r.operator)}, which azflex does not know` });
    } else if (NUMERIC.has(r.operator) && !(r.values?.length === 1 && /^\d+$/.test(r.values[0] ?? ''))) {
      blocking.push({ reason: 'InvalidRequirement', message: `requirement ${r.key} ${r.operator} needs exactly one non-negative integer value, got [${(r.values ?? []).join(', ')}]` });
    }
  }
  try {
    Requirements.fromSelectors(spec.template.spec.requirements.filter((r) => OPERATORS.has(r.operator)));
  } catch (e) {
    blocking.push({ reason: 'InvalidRequirement', message: `requirements: ${e instanceof Error ? e.message : String(e)}` });
  }

  if (spec.disruption.consolidationPolicy === 'Balanced') {
    degraded.push({
      reason: 'ConsolidationPolicyUnsupported',
      message: 'consolidationPolicy Balanced is not implemented by azflex; this NodePool is consolidated as WhenEmpty (only empty nodes are removed, never underutilized ones)',
    });
  }
  spec.disruption.budgets.forEach((b, i) => {
    if (b.schedule === undefined) return;
    try {
      parseCron(b.schedule);
    } catch (e) {
      degraded.push({
        reason: 'InvalidBudgetSchedule',
        message: `disruption.budgets[${i}].schedule "${b.schedule}": ${e instanceof Error ? e.message : String(e)}; the budget is treated as always active`,
      });
    }
  });
  return { blocking, degraded };
}

/**
 * Why a NodePool may not use this label key, or undefined: upstream's IsRestrictedLabel with the
 * Azure provider's additions (its karpenter.azure.com domain except its well-known keys, and the
 * AKS keys AKS manages on its own agent pools). karpenter.sh and kubernetes.io/hostname are
 * refused by the CRD's own rules before a NodePool reaches azflex.
 */
function restrictedLabel(key: string): string | undefined {
  if (WELL_KNOWN_LABELS.has(key)) return undefined;
  const slash = key.indexOf('/');
  const domain = slash < 0 ? '' : key.slice(0, slash);
  if (domain === AZURE_RESTRICTED_LABEL_DOMAIN || domain.endsWith(`.${AZURE_RESTRICTED_LABEL_DOMAIN}`) || AZURE_RESTRICTED_LABELS.has(key)) {
    return `not allowed, as it might interfere with the provisioning logic; use a well-known label or a custom label outside ${AZURE_RESTRICTED_LABEL_DOMAIN}`;
  }
  return undefined;
}

/** The NodePools the provisioner may create NodeClaims for. */
export function isProvisioningSupported(pool: NodePool): boolean {
  return nodePoolSupport(pool).blocking.length === 0;
}
