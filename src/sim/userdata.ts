import { StaticBootstrapSource } from '../azure/userdata/index.js';
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

export const renderSimUserData = createUserDataRenderer(SIM_BOOTSTRAP);
