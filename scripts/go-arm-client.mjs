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

import { createHash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { cachedGoBuild } from './go-cache.mjs';

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
  // Builds of other main.go versions are kept: another checkout (another branch) may be using one.
  return cachedGoBuild({
    entry: `go-arm-client@${key}`,
    binaryName: 'go-arm-client',
    what: 'the Go SDK client of the ARM face (scripts/go-arm-client; minutes: armnetwork is large)',
    log,
    build: async (dir, go) => {
      await fs.writeFile(path.join(dir, 'main.go'), main);
      const requires = Object.entries(GO_SDK_MODULES).map(([m, v]) => `\t${m} ${v}\n`).join('');
      await fs.writeFile(path.join(dir, 'go.mod'), `module azflexgoarmclient\n\ngo 1.24\n\nrequire (\n${requires})\n`);
      go(['mod', 'tidy'], { GOFLAGS: '-mod=mod' });
      go(['build', '-trimpath', '-o', 'go-arm-client', '.'], { GOFLAGS: '-mod=mod' });
    },
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = await ensureGoArmClient();
  process.stdout.write(`${JSON.stringify(out)}\n`);
}
