/**
 * The bit-level writing an H.264 parameter set or slice needs (ITU-T H.264 section 7.2): fixed
 * width fields, Exp-Golomb codes and byte-aligned raw samples, then the NAL unit wrapping with
 * emulation prevention. Enough for the sandbox's placeholder clips, nothing more.
 */
export class BitWriter {
  #bytes = new Uint8Array(512);
  #length = 0;
  /** Bits of the byte being filled, most significant first, and how many of them are set. */
  #acc = 0;
  #accBits = 0;

  /** `bits` (at most 31) low bits of `value`, most significant first: u(n) of the standard. */
  u(bits: number, value: number): this {
    for (let i = bits - 1; i >= 0; i -= 1) this.#bit((value >>> i) & 1);
    return this;
  }

  flag(on: boolean): this {
    return this.u(1, on ? 1 : 0);
  }

  /** ue(v): unsigned Exp-Golomb, `value + 1` in binary after as many zeros as it has bits less one. */
  ue(value: number): this {
    const code = value + 1;
    const bits = 32 - Math.clz32(code);
    return this.u(bits - 1, 0).u(bits, code);
  }

  /** se(v): signed Exp-Golomb, positive values on odd code numbers. */
  se(value: number): this {
    return this.ue(value > 0 ? 2 * value - 1 : -2 * value);
  }

  get aligned(): boolean {
    return this.#accBits === 0;
  }

  /** Zero bits up to the next byte boundary (pcm_alignment_zero_bit). */
  alignWithZeros(): this {
    while (this.#accBits !== 0) this.#bit(0);
    return this;
  }

  /** Whole bytes at a byte boundary: the samples of an I_PCM macroblock. */
  bytes(data: Uint8Array): this {
    if (!this.aligned) throw new Error('BitWriter.bytes needs a byte boundary');
    this.#reserve(data.length);
    this.#bytes.set(data, this.#length);
    this.#length += data.length;
    return this;
  }

  /** rbsp_trailing_bits(): a one, then zeros to the byte boundary; returns the finished payload. */
  finish(): Uint8Array {
    this.#bit(1);
    this.alignWithZeros();
    return this.#bytes.subarray(0, this.#length);
  }

  #bit(bit: number): void {
    this.#acc = (this.#acc << 1) | bit;
    this.#accBits += 1;
    if (this.#accBits === 8) {
      this.#reserve(1);
      this.#bytes[this.#length] = this.#acc;
      this.#length += 1;
      this.#acc = 0;
      this.#accBits = 0;
    }
  }

  #reserve(more: number): void {
    if (this.#length + more <= this.#bytes.length) return;
    const grown = new Uint8Array(Math.max(this.#bytes.length * 2, this.#length + more));
    grown.set(this.#bytes.subarray(0, this.#length));
    this.#bytes = grown;
  }
}

/**
 * One NAL unit (header byte, then the payload with an emulation prevention byte after any two zero
 * bytes followed by a byte up to 3), so that no start code can appear inside it (section 7.4.1).
 */
export function nalUnit(refIdc: number, type: number, rbsp: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(1 + rbsp.length + Math.ceil(rbsp.length / 2));
  out[0] = (refIdc << 5) | type;
  let length = 1;
  let zeros = 0;
  for (const byte of rbsp) {
    if (zeros >= 2 && byte <= 3) {
      out[length++] = 3;
      zeros = 0;
    }
    out[length++] = byte;
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  return out.subarray(0, length);
}
