#!/usr/bin/env node
// Runs the TypeScript CLI through tsx so `npx azflex` works from a clone without a build step.
import { register } from 'tsx/esm/api';
register();
const { main } = await import('../src/cli/main.ts');
process.exit(await main(process.argv.slice(2)));
