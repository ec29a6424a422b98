// The sweep's worker thread. Compiled (the container image's /app/dist): plain JavaScript next
// to this file. From source: TypeScript through tsx (like bin/azflex.mjs), a devDependency.
import { existsSync } from 'node:fs';

const compiled = new URL('./worker-loop.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./worker-loop.ts');
}
