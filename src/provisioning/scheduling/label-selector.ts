/**
 * metav1.LabelSelector matching, as pod affinity and topology spread use it: matchLabels and
 * matchExpressions are AND'ed, an empty selector matches every pod and an absent one none.
 */
import type { LabelSelector, LabelSelectorRequirement } from '../../ports/cluster.js';

export type LabelMatcher = (labels: Readonly<Record<string, string>>) => boolean;

const NOTHING: LabelMatcher = () => false;

function requirementMatcher(r: LabelSelectorRequirement): LabelMatcher {
  const values = new Set(r.values ?? []);
  switch (r.operator) {
    case 'In': return (labels) => r.key in labels && values.has(labels[r.key]!);
    case 'NotIn': return (labels) => !(r.key in labels) || !values.has(labels[r.key]!);
    case 'Exists': return (labels) => r.key in labels;
    case 'DoesNotExist': return (labels) => !(r.key in labels);
  }
}

/** Compiles a selector once; `extra` are further requirements (from matchLabelKeys). */
export function compileSelector(selector: LabelSelector | undefined, extra: readonly LabelSelectorRequirement[] = []): LabelMatcher {
  if (!selector) return NOTHING;
  const parts: LabelMatcher[] = [];
  for (const key in selector.matchLabels ?? {}) {
    const value = selector.matchLabels![key]!;
    parts.push((labels) => labels[key] === value);
  }
  for (const r of selector.matchExpressions ?? []) parts.push(requirementMatcher(r));
  for (const r of extra) parts.push(requirementMatcher(r));
  if (parts.length === 1) return parts[0]!;
  return (labels) => {
    for (const part of parts) if (!part(labels)) return false;
    return true;
  };
}

/** A canonical string for a selector plus its extra requirements (groups with equal keys share counts). */
export function selectorKey(selector: LabelSelector | undefined, extra: readonly LabelSelectorRequirement[] = []): string {
  if (!selector) return '∅';
  const labels = Object.keys(selector.matchLabels ?? {}).sort().map((k) => `${k}=${selector.matchLabels![k]}`);
  const expressions = [...(selector.matchExpressions ?? []), ...extra]
    .map((r) => `${r.key} ${r.operator} ${[...(r.values ?? [])].sort().join(',')}`).sort();
  return `${labels.join('&')}|${expressions.join('&')}`;
}
