/**
 * Private IP allocation for one subnet. Azure keeps five addresses of every subnet (the
 * network address, .1 gateway, .2/.3 DNS, and broadcast), so a /24 offers 251. The lowest
 * free address is handed out first, as Azure's dynamic allocation does.
 */
export class SubnetPool {
  readonly capacity: number;
  private readonly base: number;
  private readonly taken: Uint8Array;
  private hint = 4;
  used = 0;
  peak = 0;

  constructor(readonly id: string, readonly addressPrefix: string) {
    const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(addressPrefix);
    if (!m) throw new Error(`subnet ${id}: addressPrefix '${addressPrefix}' is not an IPv4 CIDR`);
    const bits = Number(m[5]);
    // Azure subnets are /29 at the smallest; cap the large end to keep the bitmap small.
    if (bits < 16 || bits > 29) throw new Error(`subnet ${id}: prefix length /${bits} outside /16../29`);
    const size = 2 ** (32 - bits);
    const ip = ((Number(m[1]) << 24) | (Number(m[2]) << 16) | (Number(m[3]) << 8) | Number(m[4])) >>> 0;
    this.base = (ip & ~(size - 1)) >>> 0;
    this.taken = new Uint8Array(size);
    this.capacity = size - 5;
  }

  /** Offset of the allocated address, or undefined when the subnet is full. */
  allocate(): number | undefined {
    if (this.used >= this.capacity) return undefined;
    const last = this.taken.length - 2; // the broadcast address is not usable
    for (let off = this.hint; off <= last; off++) {
      if (this.taken[off] === 0) {
        this.taken[off] = 1;
        this.hint = off + 1;
        this.used++;
        if (this.used > this.peak) this.peak = this.used;
        return off;
      }
    }
    return undefined;
  }

  release(offset: number): void {
    if (this.taken[offset] !== 1) return;
    this.taken[offset] = 0;
    this.used--;
    if (offset < this.hint) this.hint = offset;
  }

  address(offset: number): string {
    const ip = (this.base + offset) >>> 0;
    return `${ip >>> 24}.${(ip >>> 16) & 255}.${(ip >>> 8) & 255}.${ip & 255}`;
  }
}
