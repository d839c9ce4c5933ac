/**
 * Writes the chunks of a document (report/'s text, JSON and export renderers make them) to an
 * output stream, waiting whenever its buffer is full. A reader that stops early (`status ... |
 * head`, `export ... | head`) is a normal end of a pipeline, not an error: the rest is not
 * written. The one writer of every command's document on stdout.
 */
export async function writeChunks(
  out: NodeJS.WritableStream,
  chunks: Iterable<string> | AsyncIterable<string>,
  /** The caller's words for the library's (the CLI names options by their flags). */
  word: (text: string) => string = (text) => text,
): Promise<void> {
  let closed = false;
  let wake: (() => void) | null = null;
  const onGone = (error?: NodeJS.ErrnoException) => {
    if (error && error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
    closed = true;
    wake?.();
  };
  out.on('error', onGone);
  out.on('close', onGone);
  try {
    for await (const chunk of chunks) {
      if (closed || (out as { destroyed?: boolean }).destroyed === true) break;
      if (out.write(word(chunk))) continue;
      await new Promise<void>((resolve) => {
        wake = resolve;
        out.once('drain', resolve);
      });
      wake = null;
    }
  } finally {
    out.off('error', onGone);
    out.off('close', onGone);
    // A later write error (the last chunk's) must not surface as an unhandled event either.
    if (closed) out.on('error', () => undefined);
  }
}
