import { createHash } from 'node:crypto';

/**
 * What a sandbox placeholder clip looks like, independent of how it is encoded: its size for an
 * orientation, its background colour for a job, and the white tile that steps from macroblock to
 * macroblock showing the elapsed second, so a paused frame tells where in the clip it is.
 */

/** Pixels of every clip, whatever its shape (64x36, 36x64 and 48x48 all have 2,304): small files. */
const AREA = 48 * 48;
const MB = 16;

export interface ClipGeometry {
  /** Displayed size, even numbers (4:2:0 chroma cropping works in steps of two pixels). */
  width: number;
  height: number;
  /** Coded size in 16x16 macroblocks; the encoder crops the excess at the right and bottom. */
  mbWidth: number;
  mbHeight: number;
  /** Macroblocks the tile visits in turn, each wholly visible: `[column, row]`, starting at 0,0. */
  path: Array<readonly [number, number]>;
}

/** A colour in limited-range BT.601 YCbCr, as H.264 samples carry it. */
export interface Ycbcr {
  y: number;
  cb: number;
  cr: number;
}

/**
 * The size of a clip for an orientation `W:H` (one that does not parse, or has a 0, is square) and a
 * definition `Np`: the shorter side is N pixels, as 720p means for a service (1280x720 for `16:9`,
 * 720x1280 for `9:16`). Without a definition (the clip of a job from a state file written before
 * clips had one), the old placeholder size: about 2,300 pixels whatever the shape.
 */
export function clipGeometry(orientation: string, definition?: string): ClipGeometry {
  const match = /^([0-9]+):([0-9]+)$/.exec(orientation);
  const w = match ? Number(match[1]) : 1;
  const h = match ? Number(match[2]) : 1;
  const ratio = w > 0 && h > 0 ? w / h : 1;
  const lines = definition === undefined ? null : definitionLines(definition);
  const [width, height] = lines === null ? smallSize(ratio) : definedSize(ratio, lines);
  const columns = Math.max(1, Math.floor(width / MB));
  const rows = Math.max(1, Math.floor(height / MB));
  return {
    width,
    height,
    mbWidth: Math.ceil(width / MB),
    mbHeight: Math.ceil(height / MB),
    path: tilePath(columns, rows),
  };
}

/** Even numbers: 4:2:0 chroma cropping works in steps of two pixels. */
const even = (pixels: number) => 2 * Math.round(pixels / 2);

/** The N of `Np`, within what an H.264 level describes (4320p, 8K, at most); null if it does not parse. */
export function definitionLines(definition: string): number | null {
  const match = /^([0-9]+)p$/.exec(definition);
  return match ? Math.min(4320, Math.max(16, Number(match[1]))) : null;
}

function smallSize(ratio: number): [number, number] {
  // Both sides clamped so an extreme ratio such as 100:1 still makes a clip a player accepts.
  const side = (pixels: number) => Math.min(256, Math.max(16, even(pixels)));
  return [side(Math.sqrt(AREA * ratio)), side(Math.sqrt(AREA / ratio))];
}

/** The longer side clamped to 8192 pixels, so an extreme ratio still fits an H.264 level. */
function definedSize(ratio: number, lines: number): [number, number] {
  const short = even(lines);
  const long = Math.min(8192, even(short * Math.max(ratio, 1 / ratio)));
  return ratio >= 1 ? [long, short] : [short, long];
}

/**
 * The macroblocks the tile visits: every whole one of a small clip, else a grid of at most 4x4
 * spread over the picture (a group of pictures is a multiple of the path, so it stays short).
 */
function tilePath(columns: number, rows: number): Array<readonly [number, number]> {
  const every = columns * rows <= 64;
  const spread = (count: number) =>
    every
      ? [...Array(count).keys()]
      : [...new Set([0, 1, 2, 3].map((step) => Math.round((step * (count - 1)) / 3)))];
  const path: Array<readonly [number, number]> = [];
  for (const row of spread(rows)) {
    for (const column of spread(columns)) path.push([column, row]);
  }
  return path;
}

/**
 * A saturated colour whose hue comes from the job id, so two jobs' clips look different at a
 * glance (and the same job always looks the same).
 */
export function jobColour(jobId: string): Ycbcr {
  const digest = createHash('sha256').update(jobId, 'utf8').digest();
  const hue = digest.readUInt16BE(0) % 360;
  const [r, g, b] = hsvToRgb(hue, 0.7, 0.85);
  return {
    y: Math.round(16 + 65.481 * r + 128.553 * g + 24.966 * b),
    cb: Math.round(128 - 37.797 * r - 74.203 * g + 112 * b),
    cr: Math.round(128 + 112 * r - 93.786 * g - 18.214 * b),
  };
}

function hsvToRgb(hue: number, saturation: number, value: number): [number, number, number] {
  const chroma = value * saturation;
  const x = chroma * (1 - Math.abs(((hue / 60) % 2) - 1));
  const m = value - chroma;
  const sector = Math.floor(hue / 60);
  const [r, g, b] = [
    [chroma, x, 0],
    [x, chroma, 0],
    [0, chroma, x],
    [0, x, chroma],
    [x, 0, chroma],
    [chroma, 0, x],
  ][sector] as [number, number, number];
  return [r + m, g + m, b + m];
}

/** The 384 samples of an I_PCM macroblock (256 Y, 64 Cb, 64 Cr) of one flat colour. */
export function flatSamples(colour: Ycbcr): Uint8Array {
  const samples = new Uint8Array(384);
  samples.fill(colour.y, 0, 256);
  samples.fill(colour.cb, 256, 320);
  samples.fill(colour.cr, 320, 384);
  return samples;
}

/** 3x5 digits, one row of three bits per line, top row first. */
const DIGITS = [0o75557, 0o26227, 0o71747, 0o71717, 0o55711, 0o74717, 0o74757, 0o71111, 0o75757, 0o75717];

const WHITE: Ycbcr = { y: 235, cb: 128, cr: 128 };
const INK = 16;
const tiles = new Map<string, Uint8Array>();

/**
 * The tile's samples: white with `label` (decimal digits) in black, twice the font size while two
 * digits fit, else the last four digits at font size. Cached: a clip repeats the same few labels.
 */
export function tileSamples(label: string): Uint8Array {
  let samples = tiles.get(label);
  if (samples) return samples;
  samples = flatSamples(WHITE);
  const scale = label.length <= 2 ? 2 : 1;
  const text = label.slice(-4);
  const textWidth = (text.length * 4 - 1) * scale;
  const left = Math.floor((MB - textWidth) / 2);
  const top = Math.floor((MB - 5 * scale) / 2);
  [...text].forEach((char, index) => {
    const glyph = DIGITS[Number(char)] ?? 0;
    for (let row = 0; row < 5 * scale; row += 1) {
      for (let column = 0; column < 3 * scale; column += 1) {
        const bit = 14 - (Math.floor(row / scale) * 3 + Math.floor(column / scale));
        if ((glyph >> bit) & 1) samples[(top + row) * MB + left + index * 4 * scale + column] = INK;
      }
    }
  });
  if (tiles.size < 1000) tiles.set(label, samples);
  return samples;
}
