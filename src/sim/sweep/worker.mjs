// The sweep's worker thread from TypeScript sources: registers tsx (like bin/azflex.mjs, a
// devDependency) before loading the loop. The bundle (the container image) starts its own
// worker-loop.js instead.
const { register } = await import('tsx/esm/api');
register();
await import('./worker-loop.ts');
