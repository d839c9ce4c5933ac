import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/**
 * Debian's chromium, driven by playwright-core: never a browser download. Under CI=true a missing
 * browser is a failure (the CI script installs it); elsewhere the browser tests skip, and say so.
 */
export const CHROMIUM_PATH = '/usr/bin/chromium';

export const inCi = process.env.CI === 'true';
export const chromiumMissing = !existsSync(CHROMIUM_PATH);
/** True when the browser tests should be skipped (only outside CI). */
export const skipBrowserTests = chromiumMissing && !inCi;

if (skipBrowserTests) {
  console.warn(
    `\n*** browser tests SKIPPED: ${CHROMIUM_PATH} not found (install Debian's chromium; under CI=true this fails) ***\n`,
  );
}

export async function launchChromium(): Promise<Browser> {
  if (chromiumMissing) {
    throw new Error(`${CHROMIUM_PATH} is missing: install Debian's chromium package (.ci/run does)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    // --no-sandbox: CI containers run as root, where chromium refuses its own sandbox.
    args: ['--no-sandbox', '--disable-gpu', '--mute-audio'],
  });
}
