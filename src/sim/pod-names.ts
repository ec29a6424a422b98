/**
 * Pod names as Kubernetes gives them, for the simulated workload controllers. A Deployment's
 * ReplicaSet is `<deployment>-<pod-template-hash>` and names its pods with generateName
 * `<replicaset>-`; a Job's pods get `<job>-`. The API server's name generator keeps at most 58
 * characters of the prefix and adds 5 random characters of an alphabet without vowels (no
 * words) or look-alikes; the ReplicaSet controller retries with a fresh suffix when the name is
 * taken. The simulator draws the suffix from a hash of the pod's place in its workload, not from
 * the run's random stream, so a workload's names do not shift the rest of the run.
 */

/** k8s.io/apimachinery/pkg/util/rand's alphabet (rand.String, SafeEncodeString). */
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
/** The API server's generateName: a name is at most 63 characters, 5 of them random. */
const MAX_GENERATE_NAME_PREFIX = 58;
const SUFFIX_LENGTH = 5;

/** FNV-1a, 32 bits (what the ReplicaSet's pod-template-hash is computed with). */
function fnv1a32(text: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** SafeEncodeString: each character mapped into the alphabet. */
function safeEncode(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) out += ALPHABET[text.charCodeAt(i) % ALPHABET.length];
  return out;
}

/** A Deployment's pod-template-hash: the safe encoding of the decimal FNV-1a hash of its pod template. */
export function podTemplateHash(template: unknown): string {
  return safeEncode(String(fnv1a32(JSON.stringify(template))));
}

/** The generateName prefix's part the API server keeps. */
export function generateNamePrefix(generateName: string): string {
  return generateName.slice(0, MAX_GENERATE_NAME_PREFIX);
}

/** The `attempt`-th name the API server would make from `generateName` for the pod at `place` (e.g. its round and index). */
export function generatedPodName(generateName: string, place: string, attempt: number): string {
  const key = `${generateName}\u0000${place}\u0000${attempt}`;
  // Two 32-bit hashes, since 27^5 is more than one holds: three characters from one, two from the other.
  const hashes = [fnv1a32(key), fnv1a32(key, 0x9e3779b9)];
  let suffix = '';
  for (let i = 0; i < SUFFIX_LENGTH; i++) {
    const j = i < 3 ? 0 : 1;
    suffix += ALPHABET[hashes[j]! % ALPHABET.length];
    hashes[j] = Math.floor(hashes[j]! / ALPHABET.length);
  }
  return `${generateNamePrefix(generateName)}${suffix}`;
}
