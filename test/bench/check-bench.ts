import { spawnSync } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readVideoFile } from '../../src/downloads/video-facts.js';
import { jobVideo } from '../../src/sandbox/mp4.js';
import { ffmpeg, ffmpegMissing } from '../support/ffmpeg.js';
import { series } from './bench-rows.js';
import { benchDir, removeDir } from './fixtures.js';
import type { Row } from './stats.js';

/**
 * `checks`: what checking a saved take costs (docs/checks.md). Reading a 20 MB file's container
 * with mp4box.js, in this process, from a file on disk (warm page cache): a sandbox clip padded to
 * 20 MB (index first), and, where ffmpeg is installed, a 20 MB MPEG-4 video of 375 frames with its
 * index at the end, as ffmpeg writes it; beside it, the same file asked of ffprobe, a child
 * process per file, the other way to read a container.
 */

const READS = 50;
const PROBES = 10;
const TWENTY_MB = 20 * 1024 * 1024;

export interface CheckSample {
  file: string;
  bytes: number;
  mp4boxMs: number[];
  ffprobeMs: number[];
}

export async function checkRuns(log: (line: string) => void): Promise<CheckSample[]> {
  const dir = benchDir('checks');
  try {
    const files: Array<[string, string]> = [];
    const clip = join(dir, 'sandbox.mp4');
    writeFileSync(
      clip,
      jobVideo('job_bench', { orientation: '16:9', seconds: 20, definition: '1080p' }, TWENTY_MB),
    );
    files.push(['sandbox clip, index first', clip]);
    if (!ffmpegMissing) {
      const made = join(dir, 'ffmpeg.mp4');
      log('checks: making a 20 MB video with ffmpeg');
      ffmpeg(
        '-f',
        'lavfi',
        '-i',
        'testsrc2=size=1280x720:rate=25',
        '-t',
        '15',
        '-c:v',
        'mpeg4',
        '-q:v',
        '2',
        made,
      );
      files.push(['ffmpeg file, index last', made]);
    }
    const samples: CheckSample[] = [];
    for (const [file, path] of files) {
      const mp4boxMs: number[] = [];
      await readVideoFile(path); // warm: the page cache and the JIT, as in a run's later takes
      for (let i = 0; i < READS; i += 1) {
        const started = performance.now();
        const facts = await readVideoFile(path);
        mp4boxMs.push(performance.now() - started);
        if (facts.kind !== 'video') throw new Error(`${file}: read as ${facts.kind}`);
      }
      const ffprobeMs: number[] = [];
      for (let i = 0; !ffmpegMissing && i < PROBES; i += 1) {
        const started = performance.now();
        spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration:stream=width,height', path]);
        ffprobeMs.push(performance.now() - started);
      }
      const bytes = statSync(path).size;
      samples.push({ file, bytes, mp4boxMs, ffprobeMs });
      log(`checks: ${file}, ${bytes} bytes: done`);
    }
    return samples;
  } finally {
    removeDir(dir);
  }
}

export function checkRows(samples: readonly CheckSample[]): Row[] {
  return samples.flatMap((sample) => [
    {
      ...series(
        `12 checks: ${sample.file}`,
        `mp4box.js read of ${(sample.bytes / 1e6).toFixed(1)} MB`,
        'ms',
        2,
        sample.mp4boxMs,
      ),
      target: { op: '<' as const, value: 10 },
    },
    ...(sample.ffprobeMs.length > 0
      ? [
          series(
            `12 checks: ${sample.file}`,
            'ffprobe of the same file (a child process)',
            'ms',
            1,
            sample.ffprobeMs,
          ),
        ]
      : []),
  ]);
}
