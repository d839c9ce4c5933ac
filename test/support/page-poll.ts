import type { Page } from 'playwright-core';

/**
 * Waits until `holds` is true of what `read` returns from the page. Polled from the test: the
 * gallery's CSP has no 'unsafe-eval', and waitForFunction polls a string predicate through eval,
 * which the page refuses at random moments (see test/e2e/storage/s3-gallery.test.ts).
 */
export async function pollPage<T>(
  page: Page,
  read: (page: Page) => Promise<T>,
  holds: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read(page);
    if (holds(value)) return value;
    if (Date.now() > deadline) throw new Error(`the page never got there: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** What the tests read of a <video> (they compile without the DOM library). */
export interface VideoFacts {
  src: string | null;
  preload: string | null;
  readyState: number;
  videoWidth: number;
  controls: boolean;
}

export function videoFacts(page: Page, selector: string): Promise<VideoFacts[]> {
  return page.locator(selector).evaluateAll((elements) =>
    elements.map((element) => {
      const video = element as unknown as VideoFacts & { getAttribute(name: string): string | null };
      return {
        src: video.getAttribute('src'),
        preload: video.getAttribute('preload'),
        readyState: video.readyState,
        videoWidth: video.videoWidth,
        controls: video.controls,
      };
    }),
  );
}
