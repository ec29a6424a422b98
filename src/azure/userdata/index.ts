/** Bootstrap userdata for azflex nodes: cloud-init rendering and the bootstrap source. */
export * from './bootstrap.js';
export * from './cloud-init.js';
export * from './containerd.js';
export * from './from-nodeclaim.js';
export * from './node-agent.js';
