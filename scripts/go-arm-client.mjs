#!/usr/bin/env node
// The Go Azure SDK client of the simulator's ARM face (scripts/go-arm-client/main.go: azcore,
// armcompute, armnetwork, the SDK the upstream Go provider is written with), built through the
// Go module proxy into a cache and never committed, as scripts/upstream-karpenter.mjs builds
// upstream's metric dump: go.mod is written here with the pinned SDK versions, `go mod tidy`
// resolves the rest (checked against the Go checksum database), GOTOOLCHAIN=auto fetches a
// newer Go if azcore asks for one. Built once per SDK version and main.go content.
//
//   node scripts/go-arm-client.mjs     # ensure the binary, print its path
//
// The first build downloads the modules (~5 s) and compiles armnetwork, a large package:
// 6 min 41 s wall (2 min 28 s CPU) measured on 2 busy cores; afterwards the cached binary
// is used as is (`npm test`'s pretest builds it).

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { upstreamCacheRoot } from './upstream-karpenter.mjs';

/** The newest majors the Go module proxy has (`go list -m -versions …`). */
export const GO_SDK_MODULES = {
  'github.com/Azure/azure-sdk-for-go/sdk/azcore': 'v1.24.0',
  'github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v8': 'v8.4.0',
  'github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v9': 'v9.0.0',
};

const SOURCE = path.join(path.dirname(new URL(import.meta.url).pathname), 'go-arm-client', 'main.go');

function log(msg) {
  process.stderr.write(`[go-arm-client] ${msg}\n`);
}

/** Builds the client if its cache entry is missing; returns the binary's path and how long a build took (0: cached). */
export async function ensureGoArmClient() {
  const main = await fs.readFile(SOURCE, 'utf8');
  const key = createHash('sha256').update(JSON.stringify(GO_SDK_MODULES)).update(main).digest('hex').slice(0, 16);
  // Beside the upstream artifacts (~/.cache/azflex/upstream): ~/.cache/azflex/go-arm-client@<key>.
  const work = path.join(path.dirname(upstreamCacheRoot()), `go-arm-client@${key}`);
  const binary = path.join(work, 'go-arm-client');
  if (existsSync(binary)) return { binary, buildMs: 0 };
  log('building the Go SDK client of the ARM face (first time only; minutes: armnetwork is large)');
  const started = Date.now();
  const tmp = `${work}.tmp-${process.pid}`;
  await fs.rm(tmp, { recursive: true, force: true });
  await fs.mkdir(tmp, { recursive: true });
  await fs.writeFile(path.join(tmp, 'main.go'), main);
  const requires = Object.entries(GO_SDK_MODULES).map(([m, v]) => `\t${m} ${v}\n`).join('');
  await fs.writeFile(path.join(tmp, 'go.mod'), `module azflexgoarmclient\n\ngo 1.24\n\nrequire (\n${requires})\n`);
  const env = { ...process.env, GOTOOLCHAIN: 'auto', GOFLAGS: '-mod=mod', GOWORK: 'off', GO111MODULE: 'on' };
  const run = (args) => {
    const r = spawnSync('go', args, { cwd: tmp, encoding: 'utf8', env, maxBuffer: 64 << 20 });
    if (r.error) throw new Error(`go is needed to build the Go SDK client of the ARM face (scripts/go-arm-client): ${r.error.message}`);
    if (r.status !== 0) throw new Error(`go ${args.join(' ')} failed (exit ${r.status}): ${r.stderr.slice(-4000)}`);
  };
  try {
    run(['mod', 'tidy']);
    run(['build', '-trimpath', '-o', 'go-arm-client', '.']);
  } catch (err) {
    await fs.rm(tmp, { recursive: true, force: true });
    throw err;
  }
  await fs.rm(work, { recursive: true, force: true });
  await fs.rename(tmp, work);
  // Builds of other main.go versions are kept: another checkout (another branch) may be using one.
  const buildMs = Date.now() - started;
  log(`built in ${(buildMs / 1000).toFixed(1)} s`);
  return { binary, buildMs };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = await ensureGoArmClient();
  process.stdout.write(`${JSON.stringify(out)}\n`);
}
