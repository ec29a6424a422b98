#!/usr/bin/env node
// Runs the TypeScript CLI through tsx so `npx azflex` works from a clone without a build step.
import { register } from 'tsx/esm/api';
register();
const { main, exitAfterFlush } = await import('../src/cli/main.ts');
await exitAfterFlush(await main(process.argv.slice(2)));
