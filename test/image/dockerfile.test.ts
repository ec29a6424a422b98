import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { IMAGE } from '../../scripts/build-image.mjs';

const root = path.resolve(import.meta.dirname, '../..');
const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };

/** The last stage's value of a Dockerfile instruction (the runtime image's). */
function last(instruction: string): string {
  const lines = dockerfile.replace(/\\\n\s*/g, ' ').split('\n').filter((l) => l.startsWith(`${instruction} `));
  const line = lines.at(-1);
  if (!line) throw new Error(`Dockerfile has no ${instruction}`);
  return line.slice(instruction.length + 1).trim();
}

/** Docker cannot run here; this keeps the Dockerfile equal to what scripts/build-image.mjs builds. */
describe('Dockerfile matches the image scripts/build-image.mjs builds', () => {
  it('pins the Node version the project pins', () => {
    expect(dockerfile).toMatch(new RegExp(`^ARG NODE_VERSION=${lock.packages['node_modules/node']?.version?.replace(/\./g, '\\.')}$`, 'm'));
  });

  it('has the same user, entrypoint, command, working directory, environment and port', () => {
    expect(last('USER')).toBe(`${IMAGE.uid}:${IMAGE.gid}`);
    expect(JSON.parse(last('ENTRYPOINT'))).toEqual(IMAGE.entrypoint);
    expect(JSON.parse(last('CMD'))).toEqual(IMAGE.cmd);
    expect(last('WORKDIR')).toBe(IMAGE.workdir);
    expect(last('ENV').split(/\s+/)).toEqual(IMAGE.env);
    expect(`${last('EXPOSE')}/tcp`).toBe(IMAGE.port);
  });

  it('bundles the app with the same script and copies no node_modules into the runtime stage', () => {
    expect(dockerfile).toMatch(/^RUN node scripts\/bundle-app\.mjs \/app$/m);
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toContain('COPY --from=build /app /app');
    expect(runtime).not.toContain('node_modules');
  });
});
