import { open } from 'node:fs/promises';
import { createFile, Log, type Movie, MP4BoxBuffer } from 'mp4box';

/**
 * What a saved file is as a video, read from its container alone (no frame is decoded): an MP4 or
 * QuickTime file's index, read by mp4box.js (GPAC's reader, docs/checks.md says why), and the
 * boxes at the top of the file, walked here to find a file cut short.
 */

/** Reads `length` bytes at `offset` (fewer at the end of the file). */
export type RangeRead = (offset: number, length: number) => Promise<Uint8Array>;

export type VideoFacts =
  /** Not a container mediabatch reads (WebM, GIF, ..., or not a video at all): left unchecked. */
  | { kind: 'unread'; reason: string }
  /** An MP4 or QuickTime file a player cannot play: cut short, no video track, no frames. */
  | { kind: 'unplayable'; reason: string }
  | { kind: 'video'; seconds: number; width: number; height: number; frames: number };

/** Box types an ISO base media file (MP4, MOV, 3GP) may start with. */
const FIRST_BOXES = new Set([
  'ftyp',
  'moov',
  'mdat',
  'free',
  'skip',
  'wide',
  'pnot',
  'styp',
  'uuid',
  'pdin',
  'sidx',
]);

/** What a few other files start with, so an unchecked one is named. */
const OTHER_CONTAINERS: ReadonlyArray<readonly [magic: string, name: string]> = [
  ['1a45dfa3', 'a Matroska or WebM file'],
  ['52494646', 'a RIFF (AVI or WebP) file'],
  ['47494638', 'a GIF image'],
  ['000001ba', 'an MPEG program stream'],
  ['4f676753', 'an Ogg file'],
];

/** One read of the file's start, and of its index at most this large at a time. */
const CHUNK = 64 * 1024;
/** Reads of one file before giving up: an index scattered wider than this is not worth reading. */
const MOST_READS = 64;

interface TopBox {
  type: string;
  start: number;
  size: number;
}

export async function readVideoFacts(read: RangeRead, size: number): Promise<VideoFacts> {
  const head = await read(0, Math.min(CHUNK, size));
  const first = head.length >= 8 ? latin1(head, 4, 8) : '';
  if (!FIRST_BOXES.has(first))
    return { kind: 'unread', reason: `${containerName(head)}, not an MP4 or QuickTime file` };
  const top = await topBoxes(read, size);
  const cut = top.find((box) => box.start + box.size > size);
  if (cut) {
    return {
      kind: 'unplayable',
      reason: `the file ends inside its ${cut.type} box (${size - cut.start} of its ${cut.size} bytes there)`,
    };
  }
  if (top.some((box) => box.type === 'moof'))
    return { kind: 'unread', reason: 'a fragmented MP4, whose frames mediabatch does not read' };
  if (!top.some((box) => box.type === 'moov'))
    return { kind: 'unplayable', reason: 'the file has no index (moov box)' };
  return parsedFacts(await parseIndex(read, size, head), size);
}

/** The boxes at the top of the file, each by its header alone (8 or 16 bytes read per box). */
async function topBoxes(read: RangeRead, size: number): Promise<TopBox[]> {
  const boxes: TopBox[] = [];
  for (let start = 0; start + 8 <= size && boxes.length < 1000; ) {
    const header = await read(start, 16);
    const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
    const short = view.getUint32(0);
    const type = latin1(header, 4, 8);
    // 1: a 64-bit size follows the type; 0: the box runs to the end of the file.
    const boxSize =
      short === 1 && header.length >= 16 ? Number(view.getBigUint64(8)) : short === 0 ? size - start : short;
    if (boxSize < 8) return [...boxes, { type, start, size: Number.MAX_SAFE_INTEGER }];
    boxes.push({ type, start, size: boxSize });
    start += boxSize;
  }
  return boxes;
}

interface ParsedIndex {
  movie: Movie | null;
  /** The last byte (exclusive) any frame of the first video track reaches. */
  framesEnd: number;
  problem: string | null;
}

/**
 * The index as mp4box.js reads it, fed the bytes it asks for: the start of the file, then
 * (an index at the end) the bytes after the frames. mp4box.js says what went wrong through
 * Log.error, which writes to the console when no file is given: here it is caught instead.
 */
async function parseIndex(read: RangeRead, size: number, head: Uint8Array): Promise<ParsedIndex> {
  const file = createFile(false);
  let movie: Movie | null = null;
  /** What stopped the parse (mp4box.js gave up, or threw); and the first thing it logged, which may not. */
  let problem: string | null = null;
  let logged: string | null = null;
  file.onReady = (info) => {
    movie = info;
  };
  file.onError = (module, message) => {
    problem ??= `${module}: ${message}`;
  };
  // A broken index can also make mp4box.js throw (a box missing where it expects one): that too is
  // an index that cannot be read, and the parse stops there.
  const quietly = <T>(step: () => T, otherwise: T): T => {
    const error = Log.error;
    Log.error = (module: string, message?: string) => {
      logged ??= `${module}: ${message ?? ''}`;
    };
    try {
      return step();
    } catch (thrown) {
      problem ??= thrown instanceof Error ? thrown.message : String(thrown);
      movie = null;
      return otherwise;
    } finally {
      Log.error = error;
    }
  };
  let bytes = head;
  let position = 0;
  for (
    let reads = 0;
    movie === null && problem === null && position < size && reads < MOST_READS;
    reads += 1
  ) {
    if (reads > 0) bytes = await read(position, Math.min(CHUNK * 2 ** Math.min(reads, 8), size - position));
    if (bytes.length === 0) break;
    const chunk = MP4BoxBuffer.fromArrayBuffer(arrayBufferOf(bytes), position);
    const next = quietly(() => file.appendBuffer(chunk, position + bytes.length >= size), size);
    position = next > position ? next : position + bytes.length;
  }
  if (movie === null && problem === null) quietly(() => file.flush(), undefined);
  const found = movie as Movie | null;
  const track = found?.videoTracks[0];
  const samples = track ? quietly(() => file.getTrackSamplesInfo(track.id), []) : [];
  // What mp4box.js logged before it gave up says more than the error it then threw.
  if (problem !== null) return { movie: null, framesEnd: 0, problem: logged ?? problem };
  const framesEnd = samples.reduce((end, sample) => Math.max(end, sample.offset + sample.size), 0);
  return { movie: found, framesEnd, problem: found === null ? logged : null };
}

function parsedFacts({ movie, framesEnd, problem }: ParsedIndex, size: number): VideoFacts {
  if (movie === null)
    return { kind: 'unplayable', reason: `its index cannot be read (${problem ?? 'incomplete'})` };
  const track = movie.videoTracks[0];
  if (!track) return { kind: 'unplayable', reason: 'the file has no video track' };
  if (track.nb_samples === 0) return { kind: 'unplayable', reason: 'its video track has no frames' };
  if (framesEnd > size)
    return {
      kind: 'unplayable',
      reason: `its frames run to byte ${framesEnd}, but the file ends at ${size}`,
    };
  const movieSeconds = movie.timescale > 0 ? movie.duration / movie.timescale : 0;
  const trackSeconds = track.timescale > 0 ? track.samples_duration / track.timescale : 0;
  // The presentation size (tkhd), else the coded one; a quarter turn in the matrix swaps them.
  const width = track.track_width || (track.video?.width ?? 0);
  const height = track.track_height || (track.video?.height ?? 0);
  const turned = track.matrix[0] === 0 && track.matrix[4] === 0;
  return {
    kind: 'video',
    seconds: movieSeconds > 0 ? movieSeconds : trackSeconds,
    width: turned ? height : width,
    height: turned ? width : height,
    frames: track.nb_samples,
  };
}

/** A file on disk read as a video (readVideoFacts), one open descriptor while it is read. */
export async function readVideoFile(path: string): Promise<VideoFacts> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const read: RangeRead = async (offset, length) => {
      const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - offset)));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
      return buffer.subarray(0, bytesRead);
    };
    return await readVideoFacts(read, size);
  } finally {
    await handle.close();
  }
}

function containerName(head: Uint8Array): string {
  const magic = Buffer.from(head.subarray(0, 4)).toString('hex');
  return OTHER_CONTAINERS.find(([start]) => magic === start)?.[1] ?? 'a file of an unknown kind';
}

function latin1(bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(bytes.subarray(start, end)).toString('latin1');
}

/** An ArrayBuffer of exactly these bytes, as mp4box.js takes them. */
function arrayBufferOf(bytes: Uint8Array): ArrayBuffer {
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return copy.buffer;
}
