/**
 * containerd 2 configuration and the CNI bin_dir repairs from the seed PR.
 *
 * What went wrong upstream, in order:
 *  1. aks-flex-node v0.0.18 installs containerd 2.0.x but writes a v1-schema config; CRI
 *     then ignores the CNI section (io.containerd.grpc.v1.cri.cni is not read by 2.x, which
 *     wants io.containerd.cri.v1.runtime.cni), bin_dir/conf_dir end up empty and every pod
 *     fails with "failed to find plugin cilium-cni in path []".
 *  2. Writing a v3 config *before* the agent runs does not help: the agent clobbers it.
 *     So the v3 config is written after `aks-flex-node apply`, then containerd restarts.
 *  3. gpu-operator drops /etc/containerd/conf.d/99-nvidia.toml with bin_dir = "" (and
 *     bin_dirs = ["/opt/cni/bin"]); containerd 2.0.4 honours only bin_dir, so the empty
 *     string blanks the main config's. The drop-in is rewritten, and because gpu-operator
 *     writes it only after the node has joined, a systemd path unit repeats the repair
 *     whenever the drop-in directory changes.
 */
export const CNI_BIN_DIR = '/opt/cni/bin';
export const CNI_CONF_DIR = '/etc/cni/net.d';
export const CONTAINERD_CONFIG_PATH = '/etc/containerd/config.toml';
export const CONTAINERD_DROPIN_DIR = '/etc/containerd/conf.d';
export const CNI_FIX_SCRIPT_PATH = '/usr/local/sbin/azflex-containerd-cni-fix';

export interface ContainerdOptions {
  /** Pause image pinned for the CRI sandbox. */
  sandboxImage: string;
}

export const DEFAULT_SANDBOX_IMAGE = 'mcr.microsoft.com/oss/kubernetes/pause:3.10';

/** containerd 2.x config, schema version 3. */
export function renderContainerdConfig(options: ContainerdOptions = { sandboxImage: DEFAULT_SANDBOX_IMAGE }): string {
  return `# Written by azflex after aks-flex-node apply (containerd 2.x, config schema v3).
version = 3
root = "/var/lib/containerd"
state = "/run/containerd"
oom_score = 0
# gpu-operator's nvidia runtime arrives as a drop-in here.
imports = ["${CONTAINERD_DROPIN_DIR}/*.toml"]

[grpc]
  address = "/run/containerd/containerd.sock"

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"

  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "${options.sandboxImage}"

[plugins."io.containerd.cri.v1.runtime"]
  enable_cdi = true

  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"

    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        SystemdCgroup = true

  # The v3 location of the CNI settings; 2.0.x reads only bin_dir (not bin_dirs).
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dir = "${CNI_BIN_DIR}"
    conf_dir = "${CNI_CONF_DIR}"
`;
}

/**
 * Rewrites an empty bin_dir in the drop-ins and restarts containerd only when something
 * changed, so the path unit that runs it cannot loop.
 */
export function renderCniFixScript(): string {
  return `#!/bin/bash
# azflex: containerd 2.0.x honours only bin_dir; an empty one in a drop-in (gpu-operator's
# 99-nvidia.toml) blanks the CNI path and every pod sandbox fails.
set -euo pipefail
changed=0
for f in ${CONTAINERD_DROPIN_DIR}/*.toml; do
  [ -e "$f" ] || continue
  if grep -Eq '^[[:space:]]*bin_dir[[:space:]]*=[[:space:]]*""' "$f"; then
    sed -i -E 's#^([[:space:]]*bin_dir[[:space:]]*=[[:space:]]*)""#\\1"${CNI_BIN_DIR}"#' "$f"
    changed=1
  fi
done
if [ "$changed" = 1 ] || [ "\${1:-}" = "--restart" ]; then
  systemctl restart containerd
fi
`;
}

export const CNI_FIX_PATH_UNIT = `[Unit]
Description=azflex: repair containerd CNI bin_dir when a drop-in appears

[Path]
PathChanged=${CONTAINERD_DROPIN_DIR}
Unit=azflex-containerd-cni-fix.service

[Install]
WantedBy=multi-user.target
`;

export const CNI_FIX_SERVICE_UNIT = `[Unit]
Description=azflex: repair containerd CNI bin_dir

[Service]
Type=oneshot
ExecStart=${CNI_FIX_SCRIPT_PATH}
`;
