import { createHash } from 'node:crypto';
import { clipGeometry, definitionLines, jobColour } from './clip-look.js';
import type { SandboxConfig } from './config.js';
import { encodeClip } from './h264-clip.js';
import { mp4Parts } from './mp4-boxes.js';

/** What a job asked for that shapes its clip: `W:H`, whole seconds and `Np`, and a fault it carries. */
export interface ClipShape {
  orientation: string;
  seconds: number;
  /** Absent from jobs of state files written before clips had their definition's size. */
  definition?: string;
  fault?: ClipFault;
}

/**
 * A clip that is not what was asked for (docs/sandbox.md, "Faults"): half as long, half the size
 * each way, or the file cut in the middle of its frames (the index whole, so it still looks like
 * an MP4 until its frames are read).
 */
export type ClipFault = 'short' | 'wrong_size' | 'truncated';

/** Two frames a second: the tile still moves visibly, and a 20 s clip stays near 16 KB. */
export const CLIP_FPS = 2;

/**
 * The clip a job's input asks for; a field it leaves out takes the sandbox's default (the first
 * accepted orientation, the configured default length), as the price did.
 */
export function clipShape(
  input: Record<string, unknown>,
  rules: SandboxConfig['input'],
  fault: ClipFault | null = null,
): ClipShape {
  return {
    orientation: typeof input.orientation === 'string' ? input.orientation : (rules.orientations[0] ?? '1:1'),
    seconds: typeof input.seconds === 'number' ? input.seconds : rules.seconds.default,
    definition: typeof input.definition === 'string' ? input.definition : rules.default_definition,
    ...(fault === null ? {} : { fault }),
  };
}

/** The definition a clip is drawn at: the one asked for, or half of it for a `wrong_size` fault. */
function drawnDefinition(shape: ClipShape): string | undefined {
  if (shape.definition === undefined || shape.fault !== 'wrong_size') return shape.definition;
  return `${Math.round((definitionLines(shape.definition) ?? 32) / 2)}p`;
}

/**
 * The job's placeholder clip (its colour from the job id, its size from the orientation, its
 * length the seconds asked for), then the job id in a trailing top-level `free` box: players skip
 * `free` boxes, so the file stays playable, yet every job's bytes (and SHA-256) differ even when
 * two colours match, as real outputs would. `totalBytes` pads that box to make a large file.
 */
export function jobVideo(jobId: string, shape: ClipShape, totalBytes?: number): Buffer {
  const geometry = clipGeometry(shape.orientation, drawnDefinition(shape));
  const seconds = shape.fault === 'short' ? shape.seconds / 2 : shape.seconds;
  const clip = encodeClip({
    geometry,
    background: jobColour(jobId),
    frames: Math.max(1, Math.round(seconds * CLIP_FPS)),
    fps: CLIP_FPS,
    bt601: shape.definition !== undefined,
  });
  const parts = mp4Parts(clip, { width: geometry.width, height: geometry.height, fps: CLIP_FPS });
  if (shape.fault === 'truncated') return cutInFrames(parts);
  const videoBytes = parts.reduce((sum, part) => sum + part.length, 0);
  const text = Buffer.from(`mediabatch-sandbox job=${jobId}\n`, 'utf8');
  const room = (totalBytes ?? 0) - videoBytes - 8;
  const padding = room > text.length ? [Buffer.alloc(room - text.length, 0x20)] : [];
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + text.length + (padding[0]?.length ?? 0), 0);
  header.write('free', 4, 'latin1');
  return Buffer.concat([...parts, header, text, ...padding]);
}

/** ftyp and moov whole, then the mdat box's header and the first half of the frames it promises. */
function cutInFrames(parts: Buffer[]): Buffer {
  const whole = Buffer.concat(parts);
  const [ftyp, moov] = parts;
  const frames = whole.length - (ftyp?.length ?? 0) - (moov?.length ?? 0) - 8;
  return whole.subarray(0, whole.length - Math.ceil(frames / 2));
}

export function sha256Hex(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
