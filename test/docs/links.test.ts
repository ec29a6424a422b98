import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The front-door docs stay short and their links stay true: a newcomer who follows a link or
 * looks at a picture must land on a file of the repository, and the two entry pages stay maps.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ENTRY_PAGES = ['README.md', 'ARCHITECTURE.md'];
const MAX_ENTRY_LINES = 150;
const MAX_LINE_CHARS = 400;

/**
 * Pages whose long lines are deliberate, and why. fidelity.md is one table row per ARM behaviour
 * with its public sources, and a Markdown table row cannot wrap.
 */
const LONG_LINES_ALLOWED: Record<string, string> = {
  'docs/fidelity.md': 'one table row per ARM behaviour with its public sources',
};

/** Pages that cite public sources outside the repository, and why. */
const EXTERNAL_LINKS_ALLOWED: Record<string, string> = {
  'docs/fidelity.md': 'every simulated ARM behaviour names the public source it was taken from',
};

function docPages(): string[] {
  const docsDir = join(ROOT, 'docs');
  const pages = readdirSync(docsDir)
    .filter((name) => name.endsWith('.md') && statSync(join(docsDir, name)).isFile())
    .map((name) => `docs/${name}`);
  return [...ENTRY_PAGES, ...pages.sort()];
}

/** The text outside fenced code blocks, line by line (a link inside a code sample is not a link). */
function proseLines(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (line.trimStart().startsWith('```')) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line.replace(/`[^`]*`/g, '');
  });
}

/** Targets of Markdown links and images (`[text](target)`, `![alt](target "title")`) and HTML `src`/`href`. */
function linkTargets(text: string): string[] {
  const targets: string[] = [];
  for (const line of proseLines(text)) {
    for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1]!);
    for (const m of line.matchAll(/\b(?:src|href)="([^"]+)"/g)) targets.push(m[1]!);
  }
  return targets;
}

const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target);

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.trimStart().startsWith('```')) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (!m) continue;
    const slug = m[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

describe('docs', () => {
  const pages = docPages();

  it('finds the entry pages and the pages under docs/', () => {
    expect(pages).toEqual(expect.arrayContaining([...ENTRY_PAGES, 'docs/simulate.md', 'docs/install.md', 'docs/metrics.md']));
  });

  it.each(ENTRY_PAGES)('%s is a map: at most 150 lines', (page) => {
    const lines = readFileSync(join(ROOT, page), 'utf8').trimEnd().split('\n');
    expect(lines.length, `${page} has ${lines.length} lines`).toBeLessThanOrEqual(MAX_ENTRY_LINES);
  });

  it.each(docPages())('%s: no line over 400 characters', (page) => {
    if (LONG_LINES_ALLOWED[page]) return;
    const long = readFileSync(join(ROOT, page), 'utf8').split('\n')
      .map((line, i) => ({ line: i + 1, chars: line.length }))
      .filter((l) => l.chars > MAX_LINE_CHARS);
    expect(long, `${page}: lines over ${MAX_LINE_CHARS} characters`).toEqual([]);
  });

  it.each(docPages())('%s: every relative link and image resolves to a file (and heading) of the repository', (page) => {
    const text = readFileSync(join(ROOT, page), 'utf8');
    const broken: string[] = [];
    const external: string[] = [];
    for (const target of linkTargets(text)) {
      if (isExternal(target)) {
        external.push(target);
        continue;
      }
      const [file, anchor] = target.split('#') as [string, string | undefined];
      const path = file ? resolve(ROOT, dirname(page), decodeURIComponent(file)) : join(ROOT, page);
      const inRepo = !relative(ROOT, path).startsWith('..');
      if (!inRepo || !existsSync(path)) broken.push(target);
      else if (anchor && path.endsWith('.md') && !headingAnchors(readFileSync(path, 'utf8')).has(anchor)) broken.push(target);
    }
    expect(broken, `${page}: links to no file (or no heading) of the repository`).toEqual([]);
    if (!EXTERNAL_LINKS_ALLOWED[page]) expect(external, `${page}: links outside the repository`).toEqual([]);
  });

  it('names headings as GitHub anchors them', () => {
    const page = ['# `azflex simulate`', "## AKS's node labels", '## Flags', '```', '# not a heading', '```', '## Flags'].join('\n');
    expect([...headingAnchors(page)]).toEqual(['azflex-simulate', 'akss-node-labels', 'flags', 'flags-1']);
  });

  it('reads links as Markdown does, and not inside code', () => {
    const sample = [
      'See [the install page](docs/install.md#chart) and ![a picture](docs/diagrams/nic.svg "NIC").',
      '<img src="docs/live-view.png" alt="live view">',
      '`[not a link](nowhere.md)`',
      '```',
      '[also not](nowhere.md)',
      '```',
    ].join('\n');
    expect(linkTargets(sample)).toEqual(['docs/install.md#chart', 'docs/diagrams/nic.svg', 'docs/live-view.png']);
  });
});
