export declare const IMAGE: {
  debian: { suite: string; sources: string[]; packages: string[] };
  uid: number;
  gid: number;
  entrypoint: string[];
  cmd: string[];
  env: string[];
  workdir: string;
  port: string;
};
export interface ImageLayer {
  name: 'debian' | 'node' | 'app';
  digest: string;
  bytes: number;
}
export interface BuiltImage {
  /** The OCI archive (an OCI image layout in a tar), cached under ~/.cache/azflex/image/images. */
  archive: string;
  tag: string;
  /** Manifest digest: what a registry would show for this image. */
  digest: string;
  archiveSha256: string;
  archiveBytes: number;
  uncompressedBytes: number;
  layers: ImageLayer[];
  node: string;
  debianPackages: string[];
  sourceDateEpoch: number;
  tools: { umoci: string; tar: string; mmdebstrap: string };
  cached: boolean;
  seconds: number;
}
export declare function buildImage(opts?: { fresh?: boolean }): Promise<BuiltImage>;
