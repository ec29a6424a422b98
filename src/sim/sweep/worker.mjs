// The sweep's worker thread: TypeScript through tsx (like bin/azflex.mjs), then the job loop.
import { register } from 'tsx/esm/api';

register();
await import('./worker-loop.ts');
