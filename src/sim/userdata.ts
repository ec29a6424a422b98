import { createHash } from 'node:crypto';
import { AKS_FLEX_NODE_VERSION, StaticBootstrapSource, type NodeAgentPin } from '../azure/userdata/index.js';
import { createUserDataRenderer } from '../lifecycle/nodeclaim/userdata.js';

/**
 * The simulated cluster's bootstrap: a fixed endpoint and CA, and a token that is a real
 * secret as far as redaction is concerned (it must never show in a log line).
 */
export const SIM_BOOTSTRAP = new StaticBootstrapSource({
  apiServerEndpoint: 'https://aks-westeurope-dns-sim.hcp.westeurope.azmk8s.io:443',
  caCertData: Buffer.from('-----BEGIN CERTIFICATE-----\nsimulated-cluster-ca\n-----END CERTIFICATE-----\n').toString('base64'),
  token: 'simtok.0123456789abcdef',
  kubernetesVersion: '1.34.2',
});

/**
 * The node agent simulated nodes "run": nothing is ever downloaded in the simulator or in
 * `azflex dev`, so its pin is the digest of a name, not of a release tarball.
 */
export const SIM_NODE_AGENT: NodeAgentPin = {
  version: AKS_FLEX_NODE_VERSION,
  sha256: {
    amd64: createHash('sha256').update('azflex simulated aks-flex-node linux/amd64').digest('hex'),
    arm64: createHash('sha256').update('azflex simulated aks-flex-node linux/arm64').digest('hex'),
  },
};

export const renderSimUserData = createUserDataRenderer(SIM_BOOTSTRAP, SIM_NODE_AGENT);
